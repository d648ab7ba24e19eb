#include "controllers/batch_controller.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "controllers/workspace_controller.h"

namespace t5s::ui {

std::string kept_dropped_line(const BatchVm& b) {
    std::string line = "kept " + std::to_string(b.kept) + ", dropped " + std::to_string(total(b.dropped));
    if (!b.dropped.empty()) line += " (" + reason_summary(b.dropped) + ")";
    return line;
}

std::string batch_spans_line(const BatchVm& b) {
    const SpanCounts& t = b.span_total;
    if (t.spans == 0 && t.lost == 0 && t.forced == 0) return "";
    int64_t rows = 0;
    for (const auto& r : b.results) rows += r.counts.spans > 0;
    return "spans: " + std::to_string(t.spans) + " protected in " + std::to_string(rows) + " rows; " + std::to_string(t.lost) +
           " candidates lost one (dropped), " + std::to_string(t.forced) + " forced";
}

bool is_rows_file(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const char* e : {".txt", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".tab"})
        if (ext == e) return true;
    return false;
}

void BatchController::load_dataset() {
    auto& b = s.batch;
    if (b.path.empty()) {
        b.error = "type or drop a rows file first (.txt / .jsonl / .csv / .tsv / Label Studio .json)";
        return;
    }
    b.error.clear();
    b.phase = BatchPhase::Loading;
    b.dataset_job = submit(LoadDataset{b.path, b.column, b.no_header});
}

void BatchController::start_batch() {
    auto& b = s.batch;
    if (b.rows.empty() || b.phase == BatchPhase::Running) return;
    if (!s.model.info) {
        b.error = "no model loaded";
        return;
    }
    ws_.check_recipe();
    if (!s.ws.recipe.error.empty()) {
        b.error = s.ws.recipe.error;  // the one line the engine would give, before anything runs
        return;
    }
    BatchAugment cmd;
    cmd.recipe = ws_.recipe_source();  // the workspace's, as its settings; per_row: the steps' default outputs
    b.recipe = cmd.recipe ? cmd.recipe->file.filename().string() : std::string();
    cmd.name = b.name.empty() ? std::filesystem::path(b.path).filename().string() : b.name;
    // A recipe run has a name of its own: rows done by a plain run (or another recipe) are not
    // skipped as done, and resuming the same recipe run skips its own.
    if (cmd.recipe) cmd.name += " via " + b.recipe;
    cmd.rows = b.rows;
    cmd.spans = b.row_spans;
    cmd.options = ws_.effective_options();
    cmd.options.num_return_sequences = std::max(1, b.per_row);
    if (!cmd.options.do_sample) cmd.options.num_beams = std::max(cmd.options.num_beams, cmd.options.num_return_sequences);
    cmd.task_prefix = s.ws.task_prefix;
    b.error.clear();
    b.preview.clear();
    b.kept = 0;
    b.dropped.clear();
    b.results.assign(b.rows.size(), {});
    b.span_total = {};
    b.done = 0;
    b.total = int64_t(b.rows.size());
    b.rate = 0;
    b.eta_s = -1;
    b.job = submit(std::move(cmd));
    if (b.job) {
        b.phase = BatchPhase::Running;
        s.job_kind[b.job] = "batch";
    }
}

void BatchController::pause_batch() {
    if (s.batch.job && s.batch.phase == BatchPhase::Running) ctx.send(PauseJob{s.batch.job});
}

void BatchController::resume_batch() {
    if (s.batch.job && s.batch.phase == BatchPhase::Paused) {
        ctx.send(ResumeJob{s.batch.job});
        s.batch.phase = BatchPhase::Running;
    }
}

void BatchController::cancel_batch() {
    if (s.batch.job) ctx.send(Cancel{s.batch.job});
}

void BatchController::review_in_workspace() { ws_.review(s.batch.rows, s.batch.row_spans, s.batch.labels); }

void BatchController::apply(const Event& event) {
    auto& b = s.batch;
    if (auto* p = std::get_if<Progress>(&event)) {
        if (p->job != b.job) return;
        b.done = p->done;
        b.total = p->total;
        b.rate = p->rate;
        b.eta_s = p->eta_s;
    } else if (auto* r = std::get_if<BatchRowDone>(&event)) {
        if (r->job != b.job) return;
        b.kept += int64_t(r->result.candidates.size());
        count_reasons(r->result.dropped, &b.dropped);
        if (b.preview.size() < 200 && !r->result.candidates.empty()) {
            b.preview.push_back(r->result.candidates[0].text);
            ctx.note(r->result.candidates[0].text);
        }
        if (r->row >= 0 && size_t(r->row) < b.results.size()) {
            auto& row = b.results[size_t(r->row)];
            row.counts = span_counts(r->result);
            row.first = r->result.candidates.empty() ? std::string() : r->result.candidates[0].text;
            row.route = r->result.candidates.empty() ? Route() : r->result.candidates[0].route;
            for (const auto& leg : row.route) ctx.note(leg.text);  // the legs' texts show on hover
            b.span_total.spans += row.counts.spans;
            b.span_total.lost += row.counts.lost;
            b.span_total.forced += row.counts.forced;
        }
        s.history.stale = true;
    } else if (auto* p = std::get_if<JobPaused>(&event)) {
        if (p->job != b.job) return;
        b.phase = BatchPhase::Paused;
        b.done = p->done;
        b.total = p->total;
    } else if (auto* f = std::get_if<JobFinished>(&event)) {
        if (f->job != b.job) return;
        b.phase = BatchPhase::Done;
        b.done = b.total;
        b.eta_s = 0;
        ctx.log(false, "batch: " + f->summary + "; " + kept_dropped_line(b));
    } else if (auto* d = std::get_if<DatasetLoaded>(&event)) {
        if (d->job != b.dataset_job) return;
        b.dataset_job = 0;
        b.columns = d->columns;
        b.column = d->column;
        b.rows = d->rows;
        b.warnings = d->warnings;
        b.row_spans = d->spans;
        b.labels = d->labels;
        b.results.clear();
        b.span_total = {};
        b.total = int64_t(d->rows.size());
        b.done = 0;
        b.name = d->path.filename().string();
        b.phase = BatchPhase::Ready;
        for (size_t i = 0; i < d->rows.size() && i < 500; ++i) ctx.note(d->rows[i]);
        for (const auto& w : d->warnings) ctx.note(w);
        size_t spans = 0;
        for (const auto& r : d->spans) spans += r.size();
        ctx.log(!d->warnings.empty(), d->path.string() + ": " + std::to_string(d->rows.size()) + " rows" +
                                          (spans ? ", " + std::to_string(spans) + " labelled spans" : "") +
                                          (d->warnings.empty() ? ""
                                                               : ", " + std::to_string(d->warnings.size()) +
                                                                     " skipped (first: " + d->warnings[0] + ")"));
    }
}

void BatchController::failed(const JobFailed& e) {
    const std::string msg = ctx.log_failure(e);
    auto& b = s.batch;
    if (e.job == b.dataset_job) {
        b.dataset_job = 0;
        b.phase = BatchPhase::Idle;
        b.error = msg;
    } else if (e.job == b.job) {
        b.phase = e.code == ErrorCode::Cancelled ? BatchPhase::Idle : BatchPhase::Failed;
        b.error = e.code == ErrorCode::Cancelled ? "cancelled" : msg;
        b.job = 0;
    }
}

void BatchController::engine_died() {
    s.batch.job = 0;
    if (s.batch.phase == BatchPhase::Running) s.batch.phase = BatchPhase::Failed;
}

}  // namespace t5s::ui
