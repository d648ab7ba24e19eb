#include "serve/service.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <set>
#include <thread>

#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "serve/learner.h"
#include "serve/request_json.h"
#include "t5s/device.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/hub.h"
#include "t5s/process_memory.h"

namespace t5s::serve {
namespace {

const std::vector<double> kSecondsBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
const std::vector<double> kRowBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

Labels replica_label(int index) { return {{"replica", std::to_string(index)}}; }

void declare_metrics(Metrics& m) {
    m.declare_counter("t5studio_requests_total", "HTTP requests answered, by endpoint and status code.");
    m.declare_histogram("t5studio_request_duration_seconds", "Time from submission to the last candidate of POST /augment.",
                        kSecondsBuckets);
    m.declare_histogram("t5studio_time_to_first_candidate_seconds", "Time from submission to the first finished candidate.",
                        kSecondsBuckets);
    m.declare_gauge("t5studio_queue_length", "Requests waiting to join the running batch.");
    m.declare_gauge("t5studio_running_sequences", "Rows (candidates, beams) in the running batch.");
    m.declare_counter("t5studio_input_tokens_total", "Tokens of the texts of answered requests.");
    m.declare_counter("t5studio_generated_tokens_total", "Token ids of the candidates returned.");
    m.declare_counter("t5studio_decoded_tokens_total", "Tokens decoded (every row of every step, beams included).");
    m.declare_histogram("t5studio_batch_rows", "Rows per decoding step.", kRowBuckets);
    m.declare_counter("t5studio_candidates_dropped_total",
                      "Candidates dropped (listed under \"dropped\" with keep_dropped), by the option that dropped them.");
    m.declare_gauge("t5studio_device_memory_used_bytes", "CUDA caching allocator: bytes held by live tensors (GPU only).");
    m.declare_gauge("process_resident_memory_bytes", "Resident memory of the process.");
    m.declare_counter("t5studio_recipe_requests_total",
                      "Requests run through an augmentation recipe, by recipe (its configured name, or \"inline\") and outcome.");
}

// The settings every request starts from, by `generate`'s rule (t5s/generation_config.h):
// generation_config.json and config.json's default task, --task NAME over the default task, and
// --task-prefix TEXT over both ("" included). The prefix's source is worded as `info` words it.
GenerationOptions start_defaults(const ServeConfig& c, std::string* task_prefix_source) {
    GenerationConfig model = load_model_generation_defaults(c.model_dir);
    for (const std::string& w : model.warnings) std::cerr << "t5studio serve: warning: " << w << "\n";  // none in silence
    if (!c.task.empty()) model = with_task(std::move(model), c.task);
    GenerationOptions o;
    std::set<std::string> given;
    if (c.task_prefix_given || !c.task_prefix.empty()) {
        given.insert("task_prefix");
        o.task_prefix = c.task_prefix;
    }
    apply_generation_config(model, given, &o);
    *task_prefix_source = given.count("task_prefix") ? "--task-prefix"
                          : model.task_prefix        ? model.task_prefix_source
                                                     : "built-in default";
    return o;
}

}  // namespace

Service::Service(ServeConfig config) : config_(std::move(config)) {
    recipes_ = std::make_unique<ServeRecipes>(config_);  // a bad recipe stops serve before it binds
    declare_metrics(metrics_);
    const GenerationOptions defaults = start_defaults(config_, &task_prefix_source_);
    task_prefix_ = defaults.task_prefix;
    defaults_ = std::make_shared<SettingsHandle>(defaults);
}

Service::~Service() {
    learner_.reset();   // a running round is cancelled before the replicas go
    replicas_.clear();  // schedulers stop before the history writer goes
    history_.reset();
}

// Loads on a thread of its own that ends with the load. LibTorch's OpenMP runtime (libgomp) keeps
// a pool of workers for every thread that ran a parallel region, and once it manages more threads
// than there are cores it stops spinning between regions: each of the ~40 parallel regions of a
// decoding step then waits for a futex wake-up (t5-small, 2 cores: 6.9 instead of 5.4 ms per
// one-row step). The loader's pool goes with the loader, leaving the schedulers' alone.
void Service::load() {
    std::exception_ptr error;
    std::thread loader([&] {
        try {
            load_replicas();
        } catch (...) {
            error = std::current_exception();
        }
    });
    loader.join();
    if (error) std::rethrow_exception(error);
    if (!config_.learn_dir.empty()) start_learner();
    ready_ = true;
}

void Service::load_replicas() {
    const int n = config_.devices.empty() ? config_.replicas : static_cast<int>(config_.devices.size());
    const int threads = config_.threads > 0 ? config_.threads : physical_core_count();
    for (int i = 0; i < n; ++i) {
        const std::string device = config_.devices.empty() ? config_.device : config_.devices[static_cast<size_t>(i)];
        RuntimeOptions r =
            cli::with_adapter(cli::runtime_from_flags(device, config_.dtype, std::max(1, threads / n)), config_.adapter);
        auto replica = std::make_unique<Replica>();
        replica->index = i;
        replica->model = Model::load(config_.model_dir, r);
        if (!replica->model->has_tokenizer())
            throw Error(ErrorCode::FileNotFound,
                        config_.model_dir + ": the model has no tokenizer (spiece.model or tokenizer.json)");
        const Embedder* embedder = nullptr;
        if (!config_.embedder.empty()) {
            auto& shared = embedders_[device];
            if (!shared) shared = Embedder::load(config_.embedder, r);
            embedder = shared.get();
        }
        replica->embedder = embedder;
        replica->scheduler = std::make_unique<Scheduler>(*replica->model, SchedulerLimits{config_.max_batch, config_.max_queue},
                                                         defaults_, embedder);
        Replica* raw = replica.get();
        replica->scheduler->set_step_observer([this, raw](const StepStats& s) {
            metrics_.observe("t5studio_batch_rows", replica_label(raw->index), s.rows);
            metrics_.add("t5studio_decoded_tokens_total", replica_label(raw->index), static_cast<double>(s.tokens));
        });
        replicas_.push_back(std::move(replica));
    }
    // The recipes' step models once, where the first replica runs, each recipe's checked against
    // the memory free there first.
    const std::string first_device = config_.devices.empty() ? config_.device : config_.devices[0];
    recipes_->load_models(*replicas_[0]->model, cli::runtime_from_flags(first_device, config_.dtype, std::max(1, threads / n)));
    history_ = std::make_unique<HistoryWriter>(config_.history, *replicas_[0]->model);
    for (const auto& r : replicas_) {
        for (const char* name :
             {"t5studio_input_tokens_total", "t5studio_generated_tokens_total", "t5studio_decoded_tokens_total"})
            metrics_.add(name, replica_label(r->index), 0.0);
    }
}

Replica* Service::pick() {
    if (!ready_) return nullptr;
    Replica* best = nullptr;
    int best_load = 0;
    for (const auto& r : replicas_) {
        const SchedulerStats s = r->scheduler->stats();
        const int load = s.queue_length + s.running_requests;
        if (!best || load < best_load) best = r.get(), best_load = load;
    }
    return best;
}

std::vector<Replica*> Service::replicas() {
    std::vector<Replica*> out;
    if (!ready_) return out;
    for (const auto& r : replicas_) out.push_back(r.get());
    return out;
}

void Service::start_learner() {
    LearningOptions o{config_.learn};
    o.model_dir = config_.model_dir;
    o.history_path = config_.history;
    o.adapter_dir = config_.learn_dir;
    o.source_prefix = task_prefix_;  // the pairs are trained (and held out) as the base reads its inputs
    o.threads = config_.threads;
    learner_ = std::make_unique<Learner>(*this, o);
    const std::string current = adapter_version_dir(config_.learn_dir, learner_->version());
    if (!current.empty())
        for (const auto& r : replicas_) r->model->set_adapter(current);
    learner_->start();
}

std::shared_ptr<Job> Service::submit(Replica& replica, ServeRequest request, RequestEvents events) {
    for (size_t i = 0; i < request.texts.size(); ++i)  // before the scheduler tokenises them
        check_text_bytes(request.texts[i], request.texts.size() == 1 ? "text" : "texts[" + std::to_string(i) + "]");
    {
        std::unique_lock<std::mutex> lock(swap_mutex_);
        swap_cv_.wait(lock, [&] { return !swapping_; });
        ++in_flight_;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto finish = [this, done] {
        if (done->exchange(true)) return;
        std::lock_guard<std::mutex> lock(swap_mutex_);
        --in_flight_;
        swap_cv_.notify_all();
    };
    auto on_done = std::move(events.on_done);
    events.on_done = [on_done, finish](const RequestOutcome& o) {
        if (on_done) on_done(o);
        finish();
    };
    std::shared_ptr<Job> job;
    try {
        job = replica.scheduler->submit(std::move(request), std::move(events));
    } catch (...) {
        finish();
        throw;
    }
    if (!job) finish();
    return job;
}

void Service::swap_adapter(const std::string& dir) {
    std::unique_lock<std::mutex> lock(swap_mutex_);
    swap_cv_.wait(lock, [&] { return !swapping_; });
    swapping_ = true;
    swap_cv_.wait(lock, [&] { return in_flight_ == 0; });
    try {
        for (const auto& r : replicas_) r->model->set_adapter(dir);
    } catch (...) {
        swapping_ = false;
        swap_cv_.notify_all();
        throw;
    }
    swapping_ = false;
    swap_cv_.notify_all();
}

std::string Service::model_version() const {
    const int64_t v = learner_ ? learner_->version() : 0;
    std::string name = model_name();
    if (v > 0) name += "+adapter-v" + std::to_string(v);
    else if (!config_.adapter.empty()) name += "+" + std::filesystem::path(config_.adapter).filename().string();
    return name;
}

// "ORG/NAME" for a model opened from the Hugging Face cache, else the folder's name.
std::string Service::model_name() const { return hub::display_name(config_.model_dir); }

void Service::record(const Replica& replica, const RequestOutcome& o) {
    const Labels labels = replica_label(replica.index);
    if (!o.error) {
        metrics_.observe("t5studio_request_duration_seconds", labels, o.total_s);
        metrics_.add("t5studio_input_tokens_total", labels, static_cast<double>(o.input_tokens));
        metrics_.add("t5studio_generated_tokens_total", labels, static_cast<double>(o.output_tokens));
        history_->record(o.results, o.options, o.total_s * 1000.0);
        for (const auto& [reason, n] : o.dropped)  // labelled by option: bounded, unlike reasons carrying a threshold
            metrics_.add("t5studio_candidates_dropped_total",
                         {{"replica", std::to_string(replica.index)}, {"reason", option_of(reason)}}, static_cast<double>(n));
    }
    if (o.first_candidate_s >= 0) metrics_.observe("t5studio_time_to_first_candidate_seconds", labels, o.first_candidate_s);
}

void Service::record_step(const Replica& replica, const RequestOutcome& o) {
    if (o.error) return;
    const Labels labels = replica_label(replica.index);
    metrics_.add("t5studio_input_tokens_total", labels, static_cast<double>(o.input_tokens));
    metrics_.add("t5studio_generated_tokens_total", labels, static_cast<double>(o.output_tokens));
}

void Service::record_recipe(const RequestRecipe& recipe, const std::vector<GenerationResult>& results,
                            const GenerationOptions& options, double seconds, bool ok) {
    metrics_.add("t5studio_recipe_requests_total", {{"recipe", recipe.label}, {"outcome", ok ? "ok" : "error"}});
    if (ok) history_->record(results, options, seconds * 1000.0, recipe.record_json);
}

std::shared_ptr<void> Service::begin_recipe() {
    std::lock_guard<std::mutex> lock(recipes_mutex_);
    if (draining_ || !ready_) return nullptr;
    ++recipes_running_;
    return std::shared_ptr<void>(static_cast<void*>(this), [this](void*) {  // not owned: the holder only counts
        std::lock_guard<std::mutex> done(recipes_mutex_);
        --recipes_running_;
        recipes_cv_.notify_all();
    });
}

std::string Service::render_metrics() {
    for (Replica* r : replicas()) {
        const SchedulerStats s = r->scheduler->stats();
        metrics_.set("t5studio_queue_length", replica_label(r->index), s.queue_length);
        metrics_.set("t5studio_running_sequences", replica_label(r->index), s.running_sequences);
    }
    const DeviceMemory mem = query_device_memory();
    if (mem.cuda.available)
        metrics_.set("t5studio_device_memory_used_bytes", {{"device", "cuda"}}, static_cast<double>(mem.cuda.allocated_bytes));
    metrics_.set("process_resident_memory_bytes", {}, static_cast<double>(process_rss_bytes()));
    return metrics_.render();
}

nlohmann::json Service::health() const {
    nlohmann::json j = {{"status", draining_ ? "draining"
                                   : ready_  ? "ok"
                                             : "loading"},
                        {"model", model_name()},
                        {"model_dir", config_.model_dir},
                        {"uptime_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()},
                        {"replicas", static_cast<int>(replicas_.size())}};
    if (ready_ && !replicas_.empty()) {
        j["device"] = replicas_[0]->model->info().device;
        j["dtype"] = replicas_[0]->model->info().precision;
        j["threads_per_replica"] = replicas_[0]->model->info().threads;
        if (!config_.embedder.empty()) j["embedder"] = config_.embedder;
    }
    j["model_class"] = "T5Studio";  // Label Studio's ML backend shape (GET / answers {"status": "UP", ...})
    j["model_version"] = model_version();
    if (learner_) j["learning"] = learner_->status();
    j["task_prefix"] = {{"value", task_prefix_}, {"source", task_prefix_source_}};  // the resolved one, as `info`'s settings
    j["config"] = serve_config_to_json(config_);  // what serve was started with (its flags' table; keys left out)
    return j;
}

// Running recipes first: their next steps still need the schedulers, which refuse new requests
// once they drain. Past the deadline they are cancelled, as the schedulers' requests are.
bool Service::drain() {
    {
        std::lock_guard<std::mutex> lock(recipes_mutex_);
        draining_ = true;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                 std::chrono::duration<double>(config_.drain_timeout_s));
    bool all = true;
    {
        std::unique_lock<std::mutex> lock(recipes_mutex_);
        if (!recipes_cv_.wait_until(lock, deadline, [&] { return recipes_running_ == 0; })) {
            all = false;
            recipes_cancelled_ = true;
        }
    }
    for (Replica* r : replicas()) all = r->scheduler->drain(deadline) && all;
    {
        std::unique_lock<std::mutex> lock(recipes_mutex_);  // cancelled ones end at their next step
        recipes_cv_.wait_for(lock, std::chrono::seconds(30), [&] { return recipes_running_ == 0; });
    }
    if (history_) history_->flush();
    return all;
}

}  // namespace t5s::serve
