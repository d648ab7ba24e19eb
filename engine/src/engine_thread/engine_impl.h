#pragma once
// Private state of EngineThread, shared by engine_thread.cpp, model_jobs.cpp and io_jobs.cpp.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "t5s/engine_thread.h"
#include "t5s/history_store.h"

namespace t5s::detail {

struct Task {
    JobId id = 0;
    Command command;
    std::chrono::steady_clock::time_point submitted;
};

struct Lane {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Task> queue;
    std::thread thread;
    bool stop = false;
    std::atomic<int> running{0};
};

struct BatchState {
    BatchAugment request;
    std::shared_ptr<SettingsHandle> settings;  // UpdateSettings lands here; read per row batch
    std::vector<bool> done;
    std::atomic<bool> pause{false};
    std::atomic<bool> cancel{false};
    std::atomic<bool> paused{false};
    std::atomic<bool> running{false};
};

struct TrainingState {
    explicit TrainingState(TrainingOptions o) : job(std::move(o)) {}
    TrainingJob job;                      // pause()/resume()/stop() from submit(); run() on the model lane
    std::atomic<int64_t> step{0}, total{0};  // last Step seen (for JobPaused)
    bool started = false;                 // guarded by control_mutex: run() reached on the lane
};

struct LaneCrash {};

GenerationOptions merge_live(GenerationOptions current, const GenerationOptions& update);

struct EngineImpl {
    EngineConfig config;
    std::atomic<JobId> next_id{1};
    std::chrono::steady_clock::time_point started;

    std::mutex events_mutex;
    std::vector<Event> events;

    Lane model_lane, io_lane;

    mutable std::mutex control_mutex;  // guards the maps below and dead/death_message
    std::map<JobId, std::shared_ptr<GenerationControl>> running_generations;
    std::map<JobId, std::shared_ptr<BatchState>> batches;
    std::map<JobId, std::shared_ptr<TrainingState>> trainings;  // running StartTraining jobs
    std::set<JobId> cancelled_queued;
    bool dead = false;
    std::string death_message;

    // Model lane only.
    std::unique_ptr<Model> model;
    std::string model_hash;
    std::unique_ptr<HistoryStore> model_history;
    // Io lane only.
    std::unique_ptr<HistoryStore> io_history;

    std::atomic<int64_t> tokens_total{0};
    std::thread sampler;
    std::mutex sampler_mutex;
    std::condition_variable sampler_cv;
    bool sampler_stop = false;

    JobId submit(Command command);
    void emit(Event event);
    void fail(JobId job, ErrorCode code, std::string message);
    bool take_queued_cancel(JobId job);
    std::shared_ptr<BatchState> find_batch(JobId job);
    void enqueue(Lane& lane, Task task);
    void lane_loop(Lane& lane, bool model_lane);
    void run_guarded(Task& task, bool model_lane);
    void run_model_job(Task& task);  // model_jobs.cpp
    void run_io_job(Task& task);     // io_jobs.cpp
    void mark_dead(const std::string& message);
    void start_lanes();
    void stop_lanes();
    void sampler_loop();
    int queue_length();

    // model_jobs.cpp helpers
    void load_model(JobId id, const LoadModel& cmd);
    void generate(JobId id, const Generate& cmd, std::chrono::steady_clock::time_point submitted);
    void run_batch(JobId id);
    void run_training(JobId id, const StartTraining& cmd);  // state registered by submit()
    std::shared_ptr<TrainingState> find_training(JobId job);
    HistoryStore* history_for_model_lane();
    HistoryStore& history_for_io_lane();
};


}  // namespace t5s::detail
