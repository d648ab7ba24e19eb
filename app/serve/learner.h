#pragma once
// The learning loop inside `t5studio serve --learn-dir DIR` (t5s/learning.h): annotations become
// accepted pairs in the history, and every --learn-every new pairs (or on request: Label Studio's
// START_TRAINING, POST /train) a round runs on a background thread of its own (a JobKind::Learn job
// in the learner's registry; generation never waits for it). An adopted version is hot-swapped into
// every replica (Model::set_adapter: running requests finish with theirs).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "t5s/history_store.h"
#include "t5s/jobs.h"
#include "t5s/learning.h"

namespace t5s::serve {

class Service;

class Learner {
public:
    // options: model_dir, history_path, adapter_dir and the rounds' settings (options.every: new pairs per round).
    Learner(Service& service, LearningOptions options);
    ~Learner();  // cancels a running round (the current version stays) and joins

    void start();  // the thread; call after the replicas are loaded

    // Records (source, target) as an accepted pair; origin "" = a new generation, else an existing
    // generation with that origin gets the target as an edit. Returns the new pairs since the last round.
    int64_t add_pair(const std::string& source, const std::string& target, const std::string& origin);
    JobId request_round();  // queues a round now (one at a time: returns the queued/running job's id)

    int64_t version() const { return version_.load(); }
    std::string adapter_dir() const { return options_.adapter_dir; }
    const std::string& source_prefix() const { return options_.source_prefix; }
    nlohmann::json status() const;
    // Waits until no round is queued or running (tests, shutdown); false on timeout.
    bool wait_idle(double timeout_s);

private:
    void run();
    void round();
    Service& service_;
    LearningOptions options_;
    std::atomic<int64_t> version_{0};
    std::atomic<bool> cancel_{false};
    JobRegistry jobs_;
    mutable std::mutex mutex_;  // guards the members below and the history connection
    std::condition_variable wake_, idle_;
    std::unique_ptr<HistoryStore> history_;
    std::shared_ptr<Job> pending_, running_;
    int64_t new_pairs_ = 0;
    bool stop_ = false;
    nlohmann::json last_;  // the last round's result
    std::thread thread_;
};

}  // namespace t5s::serve
