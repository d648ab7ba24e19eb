// TrainingController: the events of a training run and of the past-runs list.
#include <cmath>

#include "controllers/training_controller.h"

namespace t5s::ui {

void TrainingController::apply(const Event& event) {
    auto& t = s.train;
    if (auto* u = std::get_if<TrainingUpdate>(&event)) {
        if (u->job != 0 && u->job == t.job) apply_update(u->event);
    } else if (auto* p = std::get_if<JobPaused>(&event)) {
        if (p->job != 0 && p->job == t.job) t.phase = TrainPhase::Paused;
    } else if (auto* f = std::get_if<JobFinished>(&event)) {
        if (f->job == 0 || f->job != t.job) return;
        t.job = 0;
        t.runs_stale = true;
        t.phase = TrainPhase::Done;
        t.eta_s = 0;
        ctx.log(false, "training: " + f->summary);
    } else if (auto* r = std::get_if<TrainingRunRecorded>(&event)) {
        if (r->job != 0 && r->job == t.job) t.run_id = r->run_id;
        t.runs_stale = true;
    } else if (auto* l = std::get_if<TrainingRunsLoaded>(&event)) {
        if (l->job != t.runs_job) return;
        t.runs_job = 0;
        t.runs = l->runs;
        for (const auto& run : t.runs) {
            ctx.note(run.model);
            ctx.note(run.data);
            ctx.note(run.out_dir);
            ctx.note(run.message);
        }
    }
}

void TrainingController::apply_update(const TrainingEvent& e) {
    auto& t = s.train;
    using K = TrainingEvent::Kind;
    switch (e.kind) {
        case K::Report:
            t.report = e.message;
            ctx.note(e.message);
            break;
        case K::Plan:
            t.estimate = e.message;
            ctx.note(e.message);
            break;
        case K::Message:
            ctx.note(e.message);
            ctx.log(false, "training: " + e.message);
            break;
        case K::Checkpoint:
            t.last_checkpoint = e.message;
            ctx.note(e.message);
            break;
        case K::Step:
            if (std::isfinite(e.loss)) {
                t.train_loss.push(e.elapsed_s, e.loss);
                t.loss = e.loss;
            }
            break;
        case K::Eval:
            if (e.eval_loss >= 0 && std::isfinite(e.eval_loss)) {
                t.eval_loss.push(e.elapsed_s, e.eval_loss);
                t.eval = e.eval_loss;
            }
            if (!e.samples.empty()) {
                t.samples = e.samples;
                for (const auto& g : e.samples) {
                    ctx.note(g.source);
                    ctx.note(g.reference);
                    ctx.note(g.prediction);
                }
            }
            break;
        case K::Finished:
            t.final_dir = e.message;
            t.stop_reason = to_string(e.stop_reason);
            ctx.note(e.message);
            break;
    }
    // Progress numbers: steps from every kind that has them, the rest from Step events.
    if (e.total_steps > 0 && e.step > 0) {
        t.step = e.step;
        t.total_steps = e.total_steps;
    }
    if (e.kind == K::Step) {
        t.epoch = e.epoch;
        t.eta_s = e.eta_s;
        t.lr = e.lr;
        t.tokens_per_s = e.tokens_per_s;
        t.elapsed_s = e.elapsed_s;
        t.memory_bytes = e.memory_bytes;
        t.peak_memory_bytes = e.peak_memory_bytes;
        t.batch_size = e.batch_size;
        t.grad_accum = e.grad_accum;
    }
    if (e.best_eval_loss >= 0) t.best_eval = e.best_eval_loss;
}

void TrainingController::failed(const JobFailed& e) {
    auto& t = s.train;
    if (e.job != 0 && e.job == t.runs_job) {
        t.runs_job = 0;
        ctx.log(true, "past training runs: " + e.message);
        return;
    }
    if (e.job != 0 && e.job == t.job) {
        t.job = 0;
        t.runs_stale = true;
        t.phase = TrainPhase::Failed;
        t.error = std::string(to_string(e.code)) + ": " + e.message;
        ctx.log(true, "training failed: " + t.error);
        return;
    }
    ctx.log_failure(e);
}

}  // namespace t5s::ui
