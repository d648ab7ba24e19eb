// Model-lane jobs: load, generate, batch augmentation. Everything that touches the Model runs here.
#include <algorithm>

#include "t5s/device.h"
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>

#include "engine_thread/engine_impl.h"
#include "t5s/seed.h"
#ifdef T5S_HAVE_TRAINER
#include "engine_thread/training_record.h"
#endif

namespace t5s::detail {

using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

template <class... Ts>
struct Overload : Ts... { using Ts::operator()...; };
template <class... Ts>
Overload(Ts...) -> Overload<Ts...>;

}  // namespace


HistoryStore* EngineImpl::history_for_model_lane() {
    if (config.history_db.empty()) return nullptr;
    if (!model_history) model_history = std::make_unique<HistoryStore>(config.history_db.string());
    return model_history.get();
}

void EngineImpl::run_model_job(Task& task) {
    std::visit(Overload{
                   [&](const LoadModel& c) { load_model(task.id, c); },
                   [&](const UnloadModel&) {
                       model.reset();
                       emit(ModelUnloaded{task.id});
                   },
                   [&](const Generate& c) { generate(task.id, c, task.submitted); },
                   [&](const BatchAugment&) { run_batch(task.id); },
                   [&](const ResumeJob&) { run_batch(task.id); },
                   [&](const StartTraining& c) { run_training(task.id, c); },
                   [&](const auto&) { throw Error(ErrorCode::Internal, "command routed to the wrong lane"); },
               },
               task.command);
}

void EngineImpl::load_model(JobId id, const LoadModel& cmd) {
    emit(JobStarted{id, "load"});
    const auto t0 = Clock::now();
    model.reset();  // free the old one first: two models may not fit
    model = config.model_factory(cmd.dir, cmd.runtime);
    if (!model) throw Error(ErrorCode::Internal, "model factory returned nothing for " + cmd.dir.string());
    model_hash = model->info().content_hash;  // same fingerprint the CLI records
    emit(ModelLoaded{id, model->info(), ms_since(t0), recommend_profile(cmd.runtime.device)});
}

namespace {

GenerationRecord make_record(const GenerationResult& r, const GenerationOptions& o, const ModelInfo& info,
                             const std::string& hash, double total_ms, std::string origin) {
    GenerationRecord rec;
    rec.input = r.input;
    for (const auto& c : r.candidates) rec.candidates.push_back({c.text, c.score});
    rec.settings_json = generation_options_to_json(o);
    rec.seed = o.do_sample ? o.seed : -1;
    rec.model_path = info.dir.string();
    rec.model_hash = hash;
    rec.precision = info.precision;
    rec.device = info.device;
    rec.total_ms = total_ms;
    rec.origin = std::move(origin);
    return rec;
}

}  // namespace

void EngineImpl::generate(JobId id, const Generate& cmd, Clock::time_point submitted) {
    emit(JobStarted{id, "generate"});
    const auto t0 = Clock::now();
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    if (cmd.texts.empty()) throw Error(ErrorCode::InvalidArgument, "nothing to generate: the source text is empty");
    validate_generation_options(cmd.options);
    GenerationOptions options = cmd.options;
    if (options.do_sample) options.seed = resolve_seed(options.seed);

    auto control = std::make_shared<GenerationControl>();
    control->live_settings = std::make_shared<SettingsHandle>(options);
    int64_t tokens = 0;
    auto last_emit = Clock::now() - std::chrono::seconds(1);
    control->on_step = [&](const StepInfo& s) {
        tokens += s.tokens_generated;
        tokens_total += s.tokens_generated;
        const auto now = Clock::now();
        if (now - last_emit >= std::chrono::milliseconds(15)) {
            last_emit = now;
            emit(GenerationStep{id, s.step, s.active_rows, tokens});
        }
    };
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        running_generations[id] = control;
    }
    struct Unregister {
        EngineImpl* self;
        JobId id;
        ~Unregister() {
            std::lock_guard<std::mutex> lock(self->control_mutex);
            self->running_generations.erase(id);
        }
    } unregister{this, id};

    std::vector<std::string> inputs;
    inputs.reserve(cmd.texts.size());
    for (const auto& t : cmd.texts) inputs.push_back(cmd.task_prefix + t);
    auto results = model->generate(inputs, options, control.get());
    if (control->cancel) throw Error(ErrorCode::Cancelled, "generation cancelled");
    for (size_t i = 0; i < results.size() && i < cmd.texts.size(); ++i) results[i].input = cmd.texts[i];

    GenerationDone done;
    done.job = id;
    done.options = options;
    done.timings.queue_ms = std::chrono::duration<double, std::milli>(t0 - submitted).count();
    done.timings.run_ms = ms_since(t0);
    done.timings.tokens = tokens;
    done.timings.tokens_per_s = done.timings.run_ms > 0 ? tokens * 1000.0 / done.timings.run_ms : 0.0;
    done.history_ids.assign(results.size(), 0);
    if (cmd.record_history) {
        if (HistoryStore* h = history_for_model_lane()) {
            std::vector<GenerationRecord> records;
            for (const auto& r : results)
                records.push_back(make_record(r, options, model->info(), model_hash, done.timings.run_ms, "ui"));
            done.history_ids = h->record_many(records);
        }
    }
    done.results = std::move(results);
    emit(std::move(done));
}

void EngineImpl::run_batch(JobId id) {
    std::shared_ptr<BatchState> state;
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        auto it = batches.find(id);
        if (it == batches.end()) throw Error(ErrorCode::InvalidArgument, "unknown batch job");
        state = it->second;
    }
    struct Finish {
        EngineImpl* self;
        JobId id;
        BatchState* state;
        bool keep = false;
        ~Finish() {
            state->running = false;
            if (keep) return;
            std::lock_guard<std::mutex> lock(self->control_mutex);
            self->batches.erase(id);
        }
    } finish{this, id, state.get()};
    state->running = true;
    emit(JobStarted{id, "batch"});
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    const auto& req = state->request;
    const int64_t total = int64_t(req.rows.size());
    HistoryStore* history = history_for_model_lane();
    const std::string origin_prefix = "batch:" + req.name + "#";
    // Rows recorded by an earlier run of the same batch (same name) count as done.
    if (history)
        for (size_t i = 0; i < req.rows.size(); ++i)
            if (!state->done[i] && history->find_by_origin(origin_prefix + std::to_string(i))) state->done[i] = true;
    auto count_done = [&] {
        int64_t n = 0;
        for (bool d : state->done) n += d;
        return n;
    };
    const int64_t done_at_start = count_done();
    const auto t0 = Clock::now();
    size_t next = 0;
    for (;;) {
        if (state->cancel) throw Error(ErrorCode::Cancelled, "batch cancelled");
        if (state->pause) {
            state->paused = true;
            finish.keep = true;
            emit(JobPaused{id, count_done(), total});
            return;
        }
        GenerationOptions options = state->settings->get();
        std::vector<size_t> rows;
        while (next < req.rows.size() && int(rows.size()) < std::max(1, options.batch_size)) {
            if (!state->done[next]) rows.push_back(next);
            ++next;
        }
        if (rows.empty()) break;
        validate_generation_options(options);
        auto control = std::make_shared<GenerationControl>();
        control->live_settings = state->settings;
        control->on_step = [&](const StepInfo& s) { tokens_total += s.tokens_generated; };
        {
            std::lock_guard<std::mutex> lock(control_mutex);
            running_generations[id] = control;
        }
        std::vector<std::string> inputs;
        for (size_t r : rows) inputs.push_back(req.task_prefix + req.rows[r]);
        const auto tb = Clock::now();
        std::vector<GenerationResult> results;
        try {
            results = model->generate(inputs, options, control.get());
        } catch (...) {
            std::lock_guard<std::mutex> lock(control_mutex);
            running_generations.erase(id);
            throw;
        }
        {
            std::lock_guard<std::mutex> lock(control_mutex);
            running_generations.erase(id);
        }
        if (control->cancel || state->cancel) throw Error(ErrorCode::Cancelled, "batch cancelled");
        std::vector<GenerationId> ids(results.size(), 0);
        for (size_t k = 0; k < results.size() && k < rows.size(); ++k) results[k].input = req.rows[rows[k]];
        if (history) {
            std::vector<GenerationRecord> records;
            for (size_t k = 0; k < results.size(); ++k)
                records.push_back(make_record(results[k], options, model->info(), model_hash, ms_since(tb),
                                              origin_prefix + std::to_string(rows[k])));
            ids = history->record_many(records);
        }
        for (size_t k = 0; k < results.size() && k < rows.size(); ++k) {
            state->done[rows[k]] = true;
            emit(BatchRowDone{id, int64_t(rows[k]), std::move(results[k]), ids[k]});
        }
        const int64_t d = count_done();
        const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
        const double rate = secs > 0 ? double(d - done_at_start) / secs : 0.0;
        emit(Progress{id, d, total, rate, rate > 0 ? double(total - d) / rate : -1.0});
    }
    emit(JobFinished{id, "batch", std::to_string(count_done()) + " of " + std::to_string(total) + " rows done"});
}

// Training runs the trainer on this lane: Generate and LoadModel queue behind it. The inference
// model stays loaded unless the command asks to unload it (training memory on a small GPU).
void EngineImpl::run_training(JobId id, const StartTraining& cmd) {
#ifndef T5S_HAVE_TRAINER
    (void)cmd;
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        trainings.erase(id);
    }
    emit(JobStarted{id, "train"});
    throw Error(ErrorCode::Unsupported, "this build has no trainer (t5s_trainer was not built)");
#else
    std::shared_ptr<TrainingState> state;
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        auto it = trainings.find(id);
        if (it == trainings.end()) throw Error(ErrorCode::Cancelled, "cancelled before it started");
        state = it->second;
        state->started = true;
    }
    struct Unregister {
        EngineImpl* self;
        JobId id;
        ~Unregister() {
            std::lock_guard<std::mutex> lock(self->control_mutex);
            self->trainings.erase(id);
        }
    } unregister{this, id};
    emit(JobStarted{id, "train"});
    if (cmd.unload_model && model) {
        model.reset();
        emit(ModelUnloaded{id});
    }
    TrainingOptions options = cmd.options;
    HistoryStore* history = history_for_model_lane();
    if (cmd.data_from_history) {
        if (!history) throw Error(ErrorCode::InvalidArgument, "training on history pairs needs a history database");
        const std::string pairs = export_history_pairs(*history, options.out_dir).path;
        if (options.data_file.empty()) options.data_file = pairs;
        else options.extra_data_files.push_back(pairs);
    }
    validate_training_options(options);
    if (cmd.history_run_id > 0 && !options.resume)
        throw Error(ErrorCode::InvalidArgument, "continuing recorded run " + std::to_string(cmd.history_run_id) +
                                                    " needs options.resume (it goes on from its checkpoints)");
    TrainingRecorder recorder(history, cmd.history_run_id, options);
    if (recorder.run_id() > 0) emit(TrainingRunRecorded{id, recorder.run_id()});
    // Step events at most every 100 ms (the last step always goes out); the rest pass unchanged.
    auto last_step_emit = Clock::now() - std::chrono::seconds(1);
    TrainingResult result;
    try {
        state->job.set_options(options);
        result = state->job.run([&](const TrainingEvent& e) {
            recorder.on_event(e);
            if (e.kind == TrainingEvent::Kind::Step) {
                state->step = e.step;
                state->total = e.total_steps;
                const auto now = Clock::now();
                if (now - last_step_emit < std::chrono::milliseconds(100) && e.step < e.total_steps) return;
                last_step_emit = now;
            }
            emit(TrainingUpdate{id, e});
        });
    } catch (const std::exception& e) {
        recorder.failed(e.what());
        throw;
    }
    const std::string stop_reason = to_string(result.stop_reason);
    recorder.finished(stop_reason, result.final_model_dir,
                      stop_reason + " after " + std::to_string(result.steps) + " steps");
    emit(JobFinished{id, "train",
                     stop_reason + " after " + std::to_string(result.steps) + " steps: " + result.final_model_dir});
#endif
}

}  // namespace t5s::detail
