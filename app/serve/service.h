#pragma once
// What `t5studio serve` runs: one model replica and one continuous-batching scheduler per device
// (or per CPU share), the live default settings they share, Prometheus metrics, and the history
// writer. The HTTP layer (http_routes.cpp) only talks to this.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/history_writer.h"
#include "serve/metrics.h"
#include "serve/serve_config.h"
#include "serve/serve_recipes.h"
#include "t5s/embedder.h"
#include "t5s/learning.h"
#include "t5s/model.h"
#include "t5s/scheduler.h"

namespace t5s::serve {

class Learner;

struct Replica {
    int index = 0;
    std::unique_ptr<Model> model;
    std::unique_ptr<Scheduler> scheduler;
    const Embedder* embedder = nullptr;  // the scheduler's (--embedder), shared per device; null: none
};

class Service {
public:
    explicit Service(ServeConfig config);
    ~Service();

    // Loads every replica (the server answers /ready with 503 until this returns).
    void load();
    bool ready() const { return ready_.load(); }
    bool draining() const { return draining_.load(); }
    const ServeConfig& config() const { return config_; }
    // The task prefix serve resolved at start (--task-prefix, --task, else the model's default
    // task's, else ""): the defaults' first one, Label Studio's predictions' and the learner's.
    const std::string& task_prefix() const { return task_prefix_; }

    // The replica with the shortest queue (waiting + running requests); null before load().
    Replica* pick();
    std::vector<Replica*> replicas();
    const std::shared_ptr<SettingsHandle>& defaults() const { return defaults_; }
    Metrics& metrics() { return metrics_; }
    HistoryWriter& history() { return *history_; }
    std::string model_name() const;
    // "BASE" or "BASE+adapter-vN": what Label Studio shows and compares (stale predictions).
    std::string model_version() const;
    Learner* learner() { return learner_.get(); }  // null without --learn-dir
    // The configured recipes, read and checked by the constructor; their models loaded by load().
    const ServeRecipes& recipes() const { return *recipes_; }
    // A recipe request running (serve/recipe_request.h) while the returned holder lives; null when
    // the server is draining. drain() waits for them before the schedulers stop taking their steps.
    std::shared_ptr<void> begin_recipe();
    // True once the drain timeout passed: running recipes stop at their next step.
    bool recipes_cancelled() const { return recipes_cancelled_.load(); }

    // Submits to the replica's scheduler, counted in flight until its on_done. Waits while an
    // adapter swap is under way. Returns the scheduler's answer (null: queue full / draining).
    std::shared_ptr<Job> submit(Replica& replica, ServeRequest request, RequestEvents events);
    // Switches every replica to the adapter `dir` between requests: new requests wait, the
    // requests in flight finish with the adapter they started with, then the swap, then new ones go.
    void swap_adapter(const std::string& dir);

    // Bookkeeping of one finished /augment request (metrics, history).
    void record(const Replica& replica, const RequestOutcome& outcome);
    // One scheduled step of a recipe: its tokens only (the recipe's request is recorded once).
    void record_step(const Replica& replica, const RequestOutcome& outcome);
    // One finished recipe request: counted by recipe, its results into the history naming it.
    void record_recipe(const RequestRecipe& recipe, const std::vector<GenerationResult>& results,
                       const GenerationOptions& options, double seconds, bool ok);
    // Gauges read at scrape time, then the text.
    std::string render_metrics();
    nlohmann::json health() const;

    // Stops admitting; waits for queued and running requests up to the drain timeout.
    bool drain();

private:
    void load_replicas();
    void start_learner();
    ServeConfig config_;
    std::string task_prefix_, task_prefix_source_;
    std::shared_ptr<SettingsHandle> defaults_;
    Metrics metrics_;
    std::unique_ptr<HistoryWriter> history_;
    std::unique_ptr<Learner> learner_;
    std::unique_ptr<ServeRecipes> recipes_;
    std::mutex recipes_mutex_;  // guards recipes_running_
    std::condition_variable recipes_cv_;
    int64_t recipes_running_ = 0;
    std::atomic<bool> recipes_cancelled_{false};
    // One sentence embedder per device, shared by the replicas there: embed() is const and keeps
    // no state between calls, so schedulers call it concurrently. Outlives the replicas.
    std::map<std::string, std::unique_ptr<Embedder>> embedders_;
    std::vector<std::unique_ptr<Replica>> replicas_;
    std::atomic<bool> ready_{false}, draining_{false};
    std::mutex swap_mutex_;  // guards in_flight_ and swapping_
    std::condition_variable swap_cv_;
    int64_t in_flight_ = 0;
    bool swapping_ = false;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace t5s::serve
