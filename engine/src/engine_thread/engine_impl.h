#pragma once
// Private state of EngineThread, shared by engine_thread.cpp, model_jobs.cpp and io_jobs.cpp.
// Every submitted command that does work becomes a Job in `jobs` (t5s/jobs.h) and a LaneTask on
// one of the two lanes; Cancel / PauseJob / ResumeJob / UpdateSettings act on the registry at once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "engine_thread/kept_recipe.h"
#include "t5s/engine_thread.h"
#include "t5s/history_store.h"
#include "t5s/jobs.h"

namespace t5s::detail {

using Clock = std::chrono::steady_clock;

// Rows of a BatchAugment already done: kept across pause / resume.
struct BatchRun {
    std::vector<bool> done;
};

struct LaneTask {
    std::shared_ptr<Job> job;
    Command command;
    Clock::time_point submitted;
    std::shared_ptr<BatchRun> batch;       // BatchAugment only
    std::shared_ptr<TrainingJob> trainer;  // StartTraining only: made at submit so PauseJob works before it runs
#ifdef T5S_TEST_HOOKS
    bool crash_lane = false;  // EngineTestAccess::crash_lane: the lane dies on it
#endif
};

// How a job body left its lane: done (the job leaves the registry) or parked (a paused batch,
// kept off the lanes until ResumeJob puts it back).
enum class JobEnd { Done, Parked };

enum class LaneId { Model, Io, Download };

struct Lane {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<LaneTask> queue;
    std::thread thread;
    bool stop = false;
    std::atomic<int> running{0};
};

struct LaneCrash {};

GenerationOptions merge_live(GenerationOptions current, const GenerationOptions& update);

struct EngineImpl {
    EngineConfig config;
    Clock::time_point started;
    JobRegistry jobs;

    std::mutex events_mutex;
    std::condition_variable events_cv;  // notified by emit()
    std::vector<Event> events;

    Lane model_lane, io_lane, download_lane;  // download: PullModel only (hub_jobs.cpp)

    mutable std::mutex control_mutex;  // guards parked, dead and death_message
    std::map<JobId, LaneTask> parked;  // paused batches
    bool dead = false;
    std::string death_message;

    // Model lane only.
    std::unique_ptr<Model> model;
    RuntimeOptions model_runtime;              // what `model` was loaded with: a recipe's step models load so too
    KeptRecipe kept_recipe;                    // the last Generate's recipe and its step models (recipe_jobs.cpp)
    std::shared_ptr<const Embedder> embedder;  // shared: a scorer may hold it while a new one loads
    std::string model_hash;
    std::unique_ptr<HistoryStore> model_history;
    // Io lane only.
    std::unique_ptr<HistoryStore> io_history;

    std::atomic<int64_t> tokens_total{0};
    std::thread sampler;
    std::mutex sampler_mutex;
    std::condition_variable sampler_cv;
    bool sampler_stop = false;

    // engine_thread.cpp: routing and lanes
    JobId submit(Command command);
    std::optional<JobId> act_now(const Command& command);  // Cancel, PauseJob, ResumeJob, UpdateSettings
    JobId enqueue_job(Command command);
    void emit(Event event);
    void fail(JobId job, ErrorCode code, std::string message);  // JobFailed for a command that is no job
    void fail(Job& job, ErrorCode code, std::string message);   // the job's error + JobFailed
    void park(LaneTask task);
    std::optional<LaneTask> unpark(JobId job);
    Lane& lane(LaneId id) { return id == LaneId::Model ? model_lane : id == LaneId::Io ? io_lane : download_lane; }
    void enqueue(Lane& lane, LaneTask task);
    void lane_loop(Lane& lane, bool model_lane);
    void run_task(LaneTask& task, bool model_lane);
    JobEnd run_guarded(LaneTask& task, bool model_lane);
    JobEnd run_model_job(LaneTask& task);  // model_jobs.cpp
    void run_io_job(LaneTask& task);       // io_jobs.cpp
    bool run_hub_job(LaneTask& task);      // hub_jobs.cpp: PullModel, ListModels, DeleteModel (false: not one)
    bool run_learn_job(LaneTask& task);    // learn_jobs.cpp: LearnNow, ListAdapterVersions (false: not one)
    AdapterVersionsListed versions_listed(JobId id, const std::filesystem::path& adapter_dir);
    void mark_dead(const std::string& message);
    void start_lanes();
    void stop_lanes();
    void sampler_loop();
    int queue_length();

    // model_jobs.cpp helpers
    void load_model(Job& job, const LoadModel& cmd);
    void load_embedder(Job& job, const LoadEmbedder& cmd);
    void set_adapter(Job& job, const SetAdapter& cmd);
    void use_adapter_version(Job& job, const UseAdapterVersion& cmd);  // learn_jobs.cpp
    void generate(Job& job, const Generate& cmd, Clock::time_point submitted);
    // The request's texts through its recipe (recipe_jobs.cpp); cmd.recipe must be set.
    std::vector<GenerationResult> generate_recipe(Job& job, const Generate& cmd, const GenerationOptions& options);
    // `texts` through the recipe of `source` with the job's control (cancel, decoding steps);
    // on_step_start(k, n) as step k of n starts (may be empty). Shared by Generate and BatchAugment.
    std::vector<GenerationResult> run_recipe_texts(Job& job, const RecipeSource& source, const std::vector<std::string>& texts,
                                                   const std::vector<std::vector<Span>>& spans, const GenerationOptions& options,
                                                   const std::function<void(int64_t, int64_t)>& on_step_start);
    std::vector<GenerationResult> generate_texts(const std::vector<std::string>& texts,
                                                 const std::vector<std::vector<Span>>& spans, const GenerationOptions& options,
                                                 GenerationControl* control);
    JobEnd run_batch(LaneTask& task);
    void run_training(Job& job, TrainingJob& trainer, const StartTraining& cmd);
    HistoryStore* history_for_model_lane();
    HistoryStore& history_for_io_lane();
};

}  // namespace t5s::detail

namespace t5s {
struct EngineThread::Impl : detail::EngineImpl {};
}  // namespace t5s
