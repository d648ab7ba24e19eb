#include "controllers/training_controller.h"

#include <algorithm>
#include <iterator>

#include "controllers/model_controller.h"

namespace t5s::ui {

namespace {
const StoredTrainingRun* find_run(const std::vector<StoredTrainingRun>& runs, int64_t id) {
    for (const auto& r : runs)
        if (r.id == id) return &r;
    return nullptr;
}
}  // namespace

void TrainingController::open_training() {
    auto& t = s.train;
    t.open = true;
    t.focus = true;
    if (t.model_dir.empty() && s.model.info) t.model_dir = s.model.info->dir.string();
    if (t.out_dir.empty() && !t.model_dir.empty()) {
        std::string base = t.model_dir;
        while (base.size() > 1 && base.back() == '/') base.pop_back();
        t.out_dir = base + "-finetuned";
    }
}

namespace {

// The settings a preset fills in; everything else on the Training panel stays as the user set it.
struct PresetSettings {
    int steps, epochs, batch_size, grad_accum;
    double lr;
    ScheduleKind schedule;
    int warmup_steps, eval_every, save_every, patience;
    bool lora;  // a rank-8 LoRA adapter on q and v (alpha 16, dropout 0.05) on the frozen base
};

// Indexed by TrainPreset.
const PresetSettings kPresets[] = {
    // Quick: a few minutes, to check that the data and the model fit together.
    {200, 1, 8, 1, 1e-3, ScheduleKind::Constant, 0, 50, 0, 0, false},
    // Balanced: three passes over the data.
    {0, 3, 16, 1, 5e-4, ScheduleKind::Linear, 100, 200, 1000, 0, false},
    // Thorough: a long run with early stopping on the eval loss.
    {0, 10, 16, 2, 3e-4, ScheduleKind::Cosine, 500, 500, 1000, 5, false},
    // LoRA (low memory): the base frozen (held in bf16), only a small adapter trains (higher lr, as PEFT recipes use).
    {0, 3, 16, 1, 1e-3, ScheduleKind::Linear, 100, 200, 1000, 0, true},
};

}  // namespace

void TrainingController::apply_training_preset(int preset) {
    auto& t = s.train;
    auto& o = t.options;
    t.preset = std::clamp(preset, 0, int(std::size(kPresets)) - 1);
    const PresetSettings& p = kPresets[t.preset];
    o.steps = p.steps;
    o.epochs = p.epochs;
    o.batch_size = p.batch_size;
    o.grad_accum = p.grad_accum;
    o.lr = p.lr;
    o.optimizer = OptimizerKind::AdamW;
    o.schedule = p.schedule;
    o.warmup_steps = p.warmup_steps;
    o.eval_every = p.eval_every;
    o.save_every = p.save_every;
    o.patience = p.patience;
    o.lora = p.lora;
    if (p.lora) o.lora_r = 8, o.lora_alpha = 16, o.lora_dropout = 0.05, o.lora_targets = "q,v";
    // A bf16 base halves its memory; its losses stay within 1 % of the loss decrease of an fp32 base (trainer [lora_base]).
    o.lora_base_precision = p.lora ? Precision::Bf16 : Precision::Fp32;
}

void TrainingController::start_training() {
    auto& t = s.train;
    if (t.job) return;
    if (t.model_dir.empty() && s.model.info) t.model_dir = s.model.info->dir.string();
    if (t.model_dir.empty()) {
        t.error = "choose the model folder to fine-tune";
        return;
    }
    if (t.data_file.empty() && !t.data_from_history) {
        t.error = "choose a training file (.jsonl / .csv / .tsv with source and target) or the history's accepted pairs";
        return;
    }
    if (t.out_dir.empty()) {
        t.error = "choose an output folder";
        return;
    }
    StartTraining cmd;
    cmd.options = t.options;
    cmd.options.model_dir = t.model_dir;
    cmd.options.init_config.clear();
    cmd.options.data_file = t.data_file;
    cmd.options.out_dir = t.out_dir;
    cmd.unload_model = t.unload_model;
    cmd.data_from_history = t.data_from_history;
    launch_training(std::move(cmd));
}

void TrainingController::launch_training(StartTraining cmd) {
    auto& t = s.train;
    t.error.clear();
    t.run_id = 0;
    t.train_loss.clear();
    t.eval_loss.clear();
    t.step = t.total_steps = 0;
    t.epoch = 0;
    t.loss = t.eval = t.best_eval = -1;
    t.lr = t.tokens_per_s = t.elapsed_s = t.eta_s = 0;
    t.memory_bytes = t.peak_memory_bytes = 0;
    t.report.clear();
    t.estimate.clear();
    t.samples.clear();
    t.last_checkpoint.clear();
    t.final_dir.clear();
    t.stop_reason.clear();
    const std::string data =
        cmd.data_from_history ? (t.data_file.empty() ? "history pairs" : t.data_file + " + history pairs") : t.data_file;
    t.job = submit(std::move(cmd));
    if (t.job) {
        t.phase = TrainPhase::Running;
        s.job_kind[t.job] = "training";
        ctx.log(false, "training " + t.model_dir + " on " + data + " -> " + t.out_dir);
    }
}

void TrainingController::refresh_training_runs() {
    auto& t = s.train;
    if (t.runs_job || s.engine_dead) return;
    t.runs_stale = false;
    t.runs_job = submit(QueryTrainingRuns{50});
}

bool TrainingController::run_interrupted(const StoredTrainingRun& run) const {
    return run.status == "running" && !(s.train.job && run.id == s.train.run_id);
}

void TrainingController::continue_training_run(int64_t run_id) {
    auto& t = s.train;
    if (t.job) return;
    const StoredTrainingRun* run = find_run(t.runs, run_id);
    if (!run) return;
    StartTraining cmd;
    try {
        cmd.options = training_options_from_json(run->options_json);
    } catch (const Error& e) {
        t.error = "run " + std::to_string(run_id) + ": its settings can't be read (" + e.what() + ")";
        return;
    }
    cmd.options.resume = true;  // from the newest checkpoint in its folder
    cmd.history_run_id = run_id;
    cmd.unload_model = t.unload_model;
    // The panel shows what is running.
    t.options = cmd.options;
    t.model_dir = cmd.options.model_dir;
    t.data_file = cmd.options.data_file;
    t.out_dir = cmd.options.out_dir;
    t.data_from_history = false;  // its history pairs were written to its folder: data_file names them
    launch_training(std::move(cmd));
    if (t.job) {
        t.run_id = run_id;
        ctx.log(false, "continuing training run " + std::to_string(run_id) + " from its checkpoints in " + t.out_dir);
    }
}

void TrainingController::delete_training_run(int64_t run_id) {
    auto& t = s.train;
    if (t.job && run_id == t.run_id) return;  // the live run keeps its record
    ctx.send(DeleteTrainingRun{run_id});      // answered by HistoryDeleted
    t.runs.erase(std::remove_if(t.runs.begin(), t.runs.end(), [&](const StoredTrainingRun& r) { return r.id == run_id; }),
                 t.runs.end());
    if (t.selected_run == run_id) t.selected_run = 0;
}

std::string adapter_run_base(const StoredTrainingRun& run) {
    try {
        const TrainingOptions o = training_options_from_json(run.options_json);
        return (o.lora || !o.adapter_dir.empty()) ? o.model_dir : std::string();
    } catch (const Error&) {
        return {};  // an unreadable record: treated as a full fine-tuning run
    }
}

void TrainingController::use_run_model(int64_t run_id) {
    const StoredTrainingRun* run = find_run(s.train.runs, run_id);
    if (!run || run->final_dir.empty()) return;
    const std::string base = adapter_run_base(*run);  // a LoRA run's final folder is an adapter
    if (!base.empty()) model_.load_model(base, run->final_dir);
    else model_.load_model(run->final_dir);
}

void TrainingController::pause_training() {
    if (s.train.job && s.train.phase == TrainPhase::Running) ctx.send(PauseJob{s.train.job});
}

void TrainingController::resume_training() {
    auto& t = s.train;
    if (t.job && t.phase == TrainPhase::Paused) {
        ctx.send(ResumeJob{t.job});
        t.phase = TrainPhase::Running;
    }
}

void TrainingController::stop_training() {
    if (s.train.job) ctx.send(Cancel{s.train.job});
}

void TrainingController::use_trained_model() {
    auto& t = s.train;
    if (t.final_dir.empty() || t.job) return;
    if (t.options.lora || !t.options.adapter_dir.empty()) model_.load_model(t.model_dir, t.final_dir);
    else model_.load_model(t.final_dir);
}

void TrainingController::engine_died() {
    auto& t = s.train;
    t.runs_job = 0;
    if (t.job) {
        t.job = 0;
        t.phase = TrainPhase::Failed;
        t.error = "the engine stopped during training; the last checkpoint is in " + t.out_dir;
    }
}

}  // namespace t5s::ui
