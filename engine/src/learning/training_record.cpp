#include "t5s/training_record.h"

#include <filesystem>

#include "t5s/error.h"

namespace t5s {

TrainingRecorder::TrainingRecorder(HistoryStore* history, int64_t continue_run, const TrainingOptions& options)
    : history_(history), last_flush_(std::chrono::steady_clock::now()) {
    if (!history_) return;
    if (continue_run > 0) {
        // A run to continue must exist: the caller asked for it by id.
        if (!history_->training_run(continue_run))
            throw Error(ErrorCode::InvalidArgument,
                        "history " + history_->path() + ": no training run " + std::to_string(continue_run));
        history_->reopen_training_run(continue_run, 0);
        run_ = continue_run;
        return;
    }
    guarded([&] {
        TrainingRunRecord r;
        r.model = options.model_dir.empty() ? options.init_config : options.model_dir;
        r.data = options.data_file;
        for (const auto& f : options.extra_data_files) r.data += (r.data.empty() ? "" : " + ") + f;
        r.out_dir = options.out_dir;
        TrainingOptions saved = options;
        saved.resume = true;  // what continuing it means
        r.options_json = training_options_to_json(saved);
        r.total_steps = options.steps;
        run_ = history_->begin_training_run(r);
    });
}

template <class F>
void TrainingRecorder::guarded(F&& f) {
    if (!history_) return;
    try {
        f();
    } catch (const std::exception& e) {
        error_ = std::string("training history not recorded: ") + e.what();
        history_ = nullptr;
    }
}

void TrainingRecorder::on_event(const TrainingEvent& e) {
    if (!history_ || run_ <= 0) return;
    using K = TrainingEvent::Kind;
    if (e.kind != K::Step && e.kind != K::Eval && e.kind != K::Checkpoint) return;
    if (e.kind == K::Step && e.total_steps != total_steps_) {
        total_steps_ = e.total_steps;
        guarded([&] { history_->reopen_training_run(run_, total_steps_); });
    }
    if (e.kind == K::Step || e.kind == K::Eval) {
        TrainingPoint p;
        p.step = e.step;
        p.elapsed_s = e.elapsed_s;
        p.loss = e.kind == K::Step ? e.loss : -1;
        p.eval_loss = e.kind == K::Eval ? e.eval_loss : -1;
        p.lr = e.lr;
        p.tokens_per_s = e.tokens_per_s;
        p.memory_bytes = e.memory_bytes;
        // An eval at the step just logged joins its point (one row per step).
        if (!pending_.empty() && pending_.back().step == p.step) {
            if (p.eval_loss >= 0) pending_.back().eval_loss = p.eval_loss;
            if (p.loss >= 0) pending_.back() = p;
        } else {
            pending_.push_back(p);
        }
    }
    const auto now = std::chrono::steady_clock::now();
    if (e.kind != K::Step || now - last_flush_ >= std::chrono::seconds(1)) flush();
}

void TrainingRecorder::flush() {
    last_flush_ = std::chrono::steady_clock::now();
    if (pending_.empty()) return;
    guarded([&] { history_->add_training_points(run_, pending_); });
    pending_.clear();
}

void TrainingRecorder::finished(const std::string& stop_reason, const std::string& final_dir, const std::string& summary) {
    if (run_ <= 0) return;
    flush();
    guarded([&] { history_->end_training_run(run_, stop_reason.empty() ? "completed" : stop_reason, final_dir, summary); });
}

void TrainingRecorder::failed(const std::string& message) {
    if (run_ <= 0) return;
    flush();
    guarded([&] { history_->end_training_run(run_, "failed", "", message); });
}

ExportResult export_history_pairs(HistoryStore& history, const std::string& out_dir) {
    std::filesystem::create_directories(out_dir);
    const std::string pairs = (std::filesystem::path(out_dir) / "history-pairs.jsonl").string();
    ExportOptions options;
    options.format = ExportFormat::Jsonl;
    options.filter.accepted_only = true;
    options.dedupe = true;
    options.overwrite = true;
    const ExportResult r = history.export_to(pairs, options);
    if (r.rows_written == 0)
        throw Error(ErrorCode::InvalidArgument, history.path() + ": no accepted or edited pairs to train on");
    return r;
}

}  // namespace t5s
