// Model-lane jobs: load, generate, batch augmentation. Everything that touches the Model runs here.
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include "t5s/device.h"

#include "engine_thread/engine_impl.h"
#include "t5s/candidate_scores.h"
#include "t5s/overload.h"
#include "t5s/seed.h"
#include "t5s/training_record.h"

namespace t5s::detail {

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

HistoryStore* EngineImpl::history_for_model_lane() {
    if (config.history_db.empty()) return nullptr;
    if (!model_history) model_history = std::make_unique<HistoryStore>(config.history_db.string());
    return model_history.get();
}

JobEnd EngineImpl::run_model_job(LaneTask& task) {
    Job& job = *task.job;
    JobEnd end = JobEnd::Done;
    std::visit(Overload{
                   [&](const LoadModel& c) { load_model(job, c); },
                   [&](const UnloadModel&) {
                       kept_recipe.clear();  // its step models go with the model they ran beside
                       model.reset();
                       emit(ModelUnloaded{job.id()});
                   },
                   [&](const LoadEmbedder& c) { load_embedder(job, c); },
                   [&](const UnloadEmbedder&) {
                       embedder.reset();
                       emit(EmbedderUnloaded{job.id()});
                   },
                   [&](const SetAdapter& c) { set_adapter(job, c); },
                   [&](const UseAdapterVersion& c) { use_adapter_version(job, c); },
                   [&](const Generate& c) { generate(job, c, task.submitted); },
                   [&](const BatchAugment&) { end = run_batch(task); },
                   [&](const StartTraining& c) { run_training(job, *task.trainer, c); },
                   [&](const auto&) { throw Error(ErrorCode::Internal, "command routed to the wrong lane"); },
               },
               task.command);
    return end;
}

void EngineImpl::load_model(Job& job, const LoadModel& cmd) {
    const JobId id = job.id();
    emit(JobStarted{id, "load"});
    const auto t0 = Clock::now();
    kept_recipe.clear();
    model.reset();  // free the old one first: two models may not fit
    model = config.model_factory(cmd.dir, cmd.runtime);
    model_runtime = cmd.runtime;
    if (!model) throw Error(ErrorCode::Internal, "model factory returned nothing for " + cmd.dir.string());
    model_hash = model->info().content_hash;  // same fingerprint the CLI records
    emit(ModelLoaded{id, model->info(), ms_since(t0), recommend_profile(cmd.runtime.device)});
}

void EngineImpl::load_embedder(Job& job, const LoadEmbedder& cmd) {
    const JobId id = job.id();
    emit(JobStarted{id, "load_embedder"});
    const auto t0 = Clock::now();
    embedder.reset();  // free the old one first
    std::unique_ptr<Embedder> loaded = config.embedder_factory(cmd.dir, cmd.runtime);
    if (!loaded) throw Error(ErrorCode::Internal, "embedder factory returned nothing for " + cmd.dir.string());
    embedder = std::move(loaded);
    emit(EmbedderLoaded{id, embedder->info(), ms_since(t0)});
}

void EngineImpl::set_adapter(Job& job, const SetAdapter& cmd) {
    emit(JobStarted{job.id(), "adapter"});
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    model->set_adapter(cmd.dir);
    emit(AdapterSet{job.id(), cmd.dir, model->info().adapter_parameter_count});
}

namespace {

// How the history names a recipe the app ran, as `generate --recipe` names its file: a file as
// the CLI records it, the editor's text (saved or not) by the hash of that text. "" without a recipe.
std::string recipe_record(const std::optional<RecipeSource>& recipe) {
    if (!recipe) return {};
    return recipe->json.empty() ? recipe_record_json(recipe->file) : recipe_text_record_json(recipe->file.string(), recipe->json);
}

GenerationRecord make_record(const GenerationResult& r, const GenerationOptions& o, const ModelInfo& info,
                             const std::string& hash, double total_ms, std::string origin, const std::string& recipe_json) {
    GenerationRecord rec = generation_record_of(r);
    rec.recipe_json = recipe_json;
    rec.settings_json = settings_json_with_spans(generation_options_to_json(o), r);  // spans as the CLI records them
    rec.seed = o.do_sample ? o.seed : -1;
    rec.model_path = info.dir.string();
    rec.model_hash = hash;
    rec.precision = info.precision;
    rec.device = info.device;
    rec.adapter = info.adapter.string();
    rec.adapter_version = rec.adapter.empty() ? 0 : adapter_version_of_dir(rec.adapter);  // learning loop (0: other)
    rec.total_ms = total_ms;
    rec.origin = std::move(origin);
    return rec;
}

}  // namespace

// Every generation runs through the scheduler `serve` uses (generate_scored submits the texts as
// one request) and is scored with the embedder loaded now, if any (similarity beside back_score,
// change and fluency). Without one, Model::generate is that same call for the LibTorch model
// (generate_scored with no embedder); going through it keeps test doubles that implement only
// generate() usable. Spans given with the texts go through generate_scored (the detected ones, from
// options.protect, through either).
std::vector<GenerationResult> EngineImpl::generate_texts(const std::vector<std::string>& texts,
                                                         const std::vector<std::vector<Span>>& spans,
                                                         const GenerationOptions& options, GenerationControl* control) {
    const std::shared_ptr<const Embedder> scorer = embedder;
    const bool given = std::any_of(spans.begin(), spans.end(), [](const std::vector<Span>& s) { return !s.empty(); });
    if (given) return generate_scored(*model, scorer.get(), texts, spans, options, control);
    if (scorer) return generate_scored(*model, scorer.get(), texts, options, control);
    return model->generate(texts, options, control);
}

void EngineImpl::generate(Job& job, const Generate& cmd, Clock::time_point submitted) {
    const JobId id = job.id();
    emit(JobStarted{id, "generate"});
    const auto t0 = Clock::now();
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    if (cmd.texts.empty()) throw Error(ErrorCode::InvalidArgument, "nothing to generate: the source text is empty");
    validate_generation_options(cmd.options);
    GenerationOptions options = cmd.options;
    if (options.do_sample) options.seed = resolve_seed(options.seed);

    // From here on UpdateSettings reaches this request (a queued one keeps what it was given); a
    // recipe keeps the settings it started with (engine_thread.h: Generate::recipe).
    if (!cmd.recipe) job.attach_settings(std::make_shared<SettingsHandle>(options));
    GenerationControl& control = job.generation();
    int64_t tokens = 0;
    auto last_emit = Clock::now() - std::chrono::seconds(1);
    control.on_step = [&, id](const StepInfo& s) {  // called only inside generate_texts below
        tokens += s.tokens_generated;
        tokens_total += s.tokens_generated;
        const auto now = Clock::now();
        if (now - last_emit >= std::chrono::milliseconds(15)) {
            last_emit = now;
            emit(GenerationStep{id, s.step, s.active_rows, tokens});
        }
    };

    options.task_prefix = cmd.task_prefix;  // the engine prepends it (and scores back_score with it)
    if (!cmd.spans.empty() && cmd.spans.size() != cmd.texts.size())
        throw Error(ErrorCode::InvalidArgument, "generate: spans must be given for every text or for none");
    auto results = cmd.recipe ? generate_recipe(job, cmd, options) : generate_texts(cmd.texts, cmd.spans, options, &control);
    if (job.cancel_requested()) throw Error(ErrorCode::Cancelled, "generation cancelled");
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
            const std::string recipe_json = recipe_record(cmd.recipe);
            for (const auto& r : results)
                records.push_back(make_record(r, options, model->info(), model_hash, done.timings.run_ms, "ui", recipe_json));
            done.history_ids = h->record_many(records);
        }
    }
    done.results = std::move(results);
    emit(std::move(done));
}

// Rows go through the model in batches of options.batch_size; pause and cancel are seen between
// row batches (cancel also at every decoding step). A paused batch parks its task off the lane.
// With a recipe, each row batch is one run_recipe call (recipe_jobs.cpp); its candidates carry
// their routes into BatchRowDone and the history.
JobEnd EngineImpl::run_batch(LaneTask& task) {
    Job& job = *task.job;
    const JobId id = job.id();
    BatchRun& run = *task.batch;
    const auto& req = std::get<BatchAugment>(task.command);
    emit(JobStarted{id, "batch"});
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    const int64_t total = int64_t(req.rows.size());
    HistoryStore* history = history_for_model_lane();
    const std::string origin_prefix = "batch:" + req.name + "#";
    // Rows recorded by an earlier run of the same batch (same name) count as done.
    if (history)
        for (size_t i = 0; i < req.rows.size(); ++i)
            if (!run.done[i] && history->find_by_origin(origin_prefix + std::to_string(i))) run.done[i] = true;
    auto count_done = [&] {
        int64_t n = 0;
        for (bool d : run.done) n += d;
        return n;
    };
    const int64_t done_at_start = count_done();
    const auto t0 = Clock::now();
    GenerationControl& control = job.generation();  // live_settings: attached at submit
    control.on_step = [this](const StepInfo& s) { tokens_total += s.tokens_generated; };
    std::optional<std::string> recipe_json;  // how the history names the job's recipe
    size_t next = 0;
    for (;;) {
        if (job.cancel_requested()) throw Error(ErrorCode::Cancelled, "batch cancelled");
        if (job.pause_requested()) {
            const int64_t done = count_done();
            job.set_progress(done, total);
            park(std::move(task));  // before JobPaused: a ResumeJob answering it finds the task parked
            emit(JobPaused{id, done, total});
            return JobEnd::Parked;
        }
        // A recipe batch has no live settings: it keeps those it was submitted with.
        GenerationOptions options = job.settings() ? job.settings()->get() : req.options;
        std::vector<size_t> rows;
        while (next < req.rows.size() && int(rows.size()) < std::max(1, options.batch_size)) {
            if (!run.done[next]) rows.push_back(next);
            ++next;
        }
        if (rows.empty()) break;
        validate_generation_options(options);
        std::vector<std::string> inputs;
        std::vector<std::vector<Span>> spans;
        for (size_t r : rows) {
            inputs.push_back(req.rows[r]);
            spans.push_back(r < req.spans.size() ? req.spans[r] : std::vector<Span>());
        }
        options.task_prefix = req.task_prefix;  // the engine prepends it (and scores back_score with it)
        const auto tb = Clock::now();
        std::vector<GenerationResult> results = req.recipe ? run_recipe_texts(job, *req.recipe, inputs, spans, options, {})
                                                           : generate_texts(inputs, spans, options, &control);
        if (job.cancel_requested()) throw Error(ErrorCode::Cancelled, "batch cancelled");
        std::vector<GenerationId> ids(results.size(), 0);
        for (size_t k = 0; k < results.size() && k < rows.size(); ++k) results[k].input = req.rows[rows[k]];
        if (history) {
            std::vector<GenerationRecord> records;
            if (!recipe_json) recipe_json = recipe_record(req.recipe);  // once per job, at its first record
            for (size_t k = 0; k < results.size(); ++k)
                records.push_back(make_record(results[k], options, model->info(), model_hash, ms_since(tb),
                                              origin_prefix + std::to_string(rows[k]), *recipe_json));
            ids = history->record_many(records);
        }
        for (size_t k = 0; k < results.size() && k < rows.size(); ++k) {
            run.done[rows[k]] = true;
            emit(BatchRowDone{id, int64_t(rows[k]), std::move(results[k]), ids[k]});
        }
        const int64_t d = count_done();
        job.set_progress(d, total);
        const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
        const double rate = secs > 0 ? double(d - done_at_start) / secs : 0.0;
        emit(Progress{id, d, total, rate, rate > 0 ? double(total - d) / rate : -1.0});
    }
    emit(JobFinished{id, "batch", std::to_string(count_done()) + " of " + std::to_string(total) + " rows done"});
    return JobEnd::Done;
}

// Training runs the trainer on this lane: Generate and LoadModel queue behind it. The inference
// model stays loaded unless the command asks to unload it (training memory on a small GPU).
void EngineImpl::run_training(Job& job, TrainingJob& trainer, const StartTraining& cmd) {
    const JobId id = job.id();
    emit(JobStarted{id, "train"});
    if (cmd.unload_model && model) {
        kept_recipe.clear();
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
        trainer.set_options(options);
        result = trainer.run([&](const TrainingEvent& e) {
            recorder.on_event(e);
            if (e.kind == TrainingEvent::Kind::Step) {
                job.set_progress(e.step, e.total_steps);  // what JobPaused reports
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
    recorder.finished(stop_reason, result.final_model_dir, stop_reason + " after " + std::to_string(result.steps) + " steps");
    emit(JobFinished{id, "train", stop_reason + " after " + std::to_string(result.steps) + " steps: " + result.final_model_dir});
}

}  // namespace t5s::detail
