#include "controllers/export_controller.h"

namespace t5s::ui {

void ExportController::start_export(bool overwrite) {
    auto& e = s.exp;
    if (e.path.empty()) {
        e.error = "choose an output file";
        return;
    }
    ExportHistory cmd;
    cmd.out = e.path;
    cmd.options.format = e.format == 1 ? ExportFormat::Csv : e.format == 2 ? ExportFormat::Tsv : ExportFormat::Jsonl;
    cmd.options.filter.accepted_only = e.accepted_only;
    cmd.options.dedupe = e.dedupe;
    cmd.options.include_originals = e.include_originals;
    cmd.options.overwrite = overwrite;
    e.error.clear();
    e.result.reset();
    e.confirm_overwrite = false;
    e.done = e.total = 0;
    e.job = submit(std::move(cmd));
    if (e.job) s.job_kind[e.job] = "exporting";
}

void ExportController::apply(const Event& event) {
    auto& x = s.exp;
    if (auto* p = std::get_if<Progress>(&event)) {
        if (p->job != x.job) return;
        x.done = p->done;
        x.total = p->total;
    } else if (auto* d = std::get_if<ExportDone>(&event)) {
        if (d->job != x.job) return;
        x.job = 0;
        x.result = d->result;
        ctx.log(false, "exported " + std::to_string(d->result.rows_written) + " rows to " + d->result.path);
    } else if (auto* f = std::get_if<FileExists>(&event)) {
        if (f->job != x.job) return;
        x.job = 0;
        x.confirm_overwrite = true;
    }
}

void ExportController::failed(const JobFailed& e) {
    const std::string msg = ctx.log_failure(e);
    if (e.job == s.exp.job) {
        s.exp.job = 0;
        s.exp.error = msg;
    }
}

void ExportController::engine_died() { s.exp.job = 0; }

}  // namespace t5s::ui
