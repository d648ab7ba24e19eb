#pragma once
// One job model for everything that runs in the background: a Job is one unit of work (a model
// load, a generation request, a batch, a training run, a history query...) with an id, a kind, a
// state, atomic cancel / pause requests, progress, the live settings it re-reads and the error it
// ended with. The JobRegistry hands out ids and finds jobs by id from any thread.
//
// Modelled on ImHex's TaskManager (a Task with an interrupt flag, progress and a captured
// exception; holders that reach it by a weak reference), without its global state: each
// EngineThread owns one registry, and a request scheduler (HTTP server, continuous batching) can
// own another and drive Jobs from its own threads. Plain C++ only: no torch, no SQLite, no UI.
//
// Threads: every member of Job and JobRegistry may be called from any thread. A job body reads
// cancel_requested() / pause_requested() at its own safe points (a decoding step, a row batch, a
// trainer micro-batch); control() hooks let a body that owns its own stop flags (the trainer) see
// the requests at once.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t5s/error.h"
#include "t5s/generation_options.h"

namespace t5s {

using JobId = uint64_t;  // 0 = none; ids increase from 1

enum class JobKind { LoadModel, UnloadModel, Generate, Batch, Train, Io, Learn };
template <>
struct EnumNames<JobKind> {  // learn: a learning-loop round (t5s/learning.h)
    static constexpr const char* kWhat = "job kind";
    static constexpr EnumName<JobKind> kNames[] = {{JobKind::LoadModel, "load"},    {JobKind::UnloadModel, "unload"},
                                                   {JobKind::Generate, "generate"}, {JobKind::Batch, "batch"},
                                                   {JobKind::Train, "train"},       {JobKind::Io, "io"},
                                                   {JobKind::Learn, "learn"}};
};

// Queued -> Running -> Finished | Failed | Cancelled; a pausable job may go Running -> Paused ->
// Queued (resumed) -> Running again.
enum class JobState { Queued, Running, Paused, Finished, Failed, Cancelled };
template <>
struct EnumNames<JobState> {
    static constexpr const char* kWhat = "job state";
    static constexpr EnumName<JobState> kNames[] = {{JobState::Queued, "queued"}, {JobState::Running, "running"},
                                                    {JobState::Paused, "paused"}, {JobState::Finished, "finished"},
                                                    {JobState::Failed, "failed"}, {JobState::Cancelled, "cancelled"}};
};

enum class JobSignal { Cancel, Pause, Resume };

struct JobError {
    ErrorCode code = ErrorCode::Internal;
    std::string message;
};

class Job {
public:
    Job(JobId id, JobKind kind) : id_(id), kind_(kind) {}
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    JobId id() const { return id_; }
    JobKind kind() const { return kind_; }
    bool pausable() const { return kind_ == JobKind::Batch || kind_ == JobKind::Train; }  // Learn: cancel only

    JobState state() const { return state_.load(std::memory_order_acquire); }
    void set_state(JobState state) { state_.store(state, std::memory_order_release); }
    bool finished() const;  // Finished, Failed or Cancelled

    // Requests from any thread. cancel() also wakes a paused job so that it can see the cancel.
    void cancel();
    void pause();
    void resume();
    bool cancel_requested() const { return generation_.cancel.load(std::memory_order_acquire); }
    bool pause_requested() const { return pause_.load(std::memory_order_acquire); }
    // Called on every request, on the requesting thread (e.g. forwards to TrainingJob::stop).
    void on_signal(std::function<void(JobSignal)> hook);

    // Progress in the job's own unit (rows, steps, candidates); total 0 = unknown.
    void set_progress(int64_t done, int64_t total);
    int64_t done() const { return done_.load(std::memory_order_acquire); }
    int64_t total() const { return total_.load(std::memory_order_acquire); }

    // The settings a running generation re-reads at every step; null for jobs without them (and
    // for a generation until it starts: a queued request keeps the settings it was submitted with).
    void attach_settings(std::shared_ptr<SettingsHandle> settings);
    std::shared_ptr<SettingsHandle> settings() const;

    // What Model::generate() is given: its cancel flag is this job's cancel flag and its
    // live_settings are this job's settings. The body sets on_step before generating.
    GenerationControl& generation() { return generation_; }

    // The error the job ended with (also sets the state: Cancelled for ErrorCode::Cancelled).
    void fail(ErrorCode code, std::string message);
    std::optional<JobError> error() const;

private:
    const JobId id_;
    const JobKind kind_;
    std::atomic<JobState> state_{JobState::Queued};
    std::atomic<bool> pause_{false};
    std::atomic<int64_t> done_{0}, total_{0};
    GenerationControl generation_;
    mutable std::mutex mutex_;  // guards the members below and generation_.live_settings
    std::function<void(JobSignal)> hook_;
    std::optional<JobError> error_;
};

// A copy of a job's public numbers (for status lines, telemetry, an HTTP /jobs listing).
struct JobInfo {
    JobId id = 0;
    JobKind kind = JobKind::Io;
    JobState state = JobState::Queued;
    int64_t done = 0, total = 0;
};

class JobRegistry {
public:
    // A new Queued job with the next id.
    std::shared_ptr<Job> create(JobKind kind);
    // Only an id: for commands that act at once and never become a job (Cancel, UpdateSettings...).
    JobId reserve_id() { return next_id_.fetch_add(1); }

    std::shared_ptr<Job> find(JobId id) const;  // null once removed
    void remove(JobId id);                      // the job object lives on in whoever holds it
    void clear();

    // Requests by id; false when no such job is registered.
    bool cancel(JobId id);
    void cancel_all();
    // Applies `change` to the settings of every registered job that has settings; returns how many.
    int update_settings(const std::function<GenerationOptions(const GenerationOptions&)>& change);

    std::vector<JobInfo> snapshot() const;  // in id order
    size_t size() const;

private:
    std::atomic<JobId> next_id_{1};
    mutable std::mutex mutex_;
    std::map<JobId, std::shared_ptr<Job>> jobs_;
};

}  // namespace t5s
