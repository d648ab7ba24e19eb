#pragma once
// Continuous batching for serving: one Scheduler owns one loaded Model and one thread that runs
// it. Requests wait in a FIFO queue; before every decoding step the requests at the head of the
// queue are encoded and their rows (candidates, beams) join the running batch, and rows that
// finished leave it, so a short request never waits for a long one. Every request's output is
// what generate_scored (t5s/candidate_scores.h) gives for each of its texts alone (same greedy and
// beam ids, same sampled ids for the same seed, same scores, filters, ranking and rounds). Requests are Jobs in the scheduler's
// JobRegistry: cancelling the job (or passing its timeout) takes its rows out of the batch at the next step.
//
// Every generation runs through one: `t5studio serve` keeps one per replica; generate_scored
// (t5s/candidate_scores.h: the desktop, the batch panel, `t5studio generate`) submits its texts as
// one request to a scheduler of its own that decodes on the caller's thread. Torch-free header.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5s/embedder.h"
#include "t5s/generation_options.h"
#include "t5s/jobs.h"
#include "t5s/model.h"

namespace t5s {

struct ServeRequest {
    std::vector<std::string> texts;
    // Settings: the scheduler's defaults at submission, with the fields named in `named` (by their
    // JSON names, t5s/generation_fields.h) taken from `options` instead.
    GenerationOptions options;
    std::vector<std::string> named;
    double timeout_s = 0.0;                // 0 = none; past it the request ends as cancelled
    std::vector<std::vector<Span>> spans;  // protected spans per text (t5s/spans.h); empty: none given
    // Optional: settings changed while it runs; their per-step fields (Live::EveryStep,
    // t5s/generation_fields.h) apply from the next step, as GenerationControl::live_settings does.
    std::shared_ptr<SettingsHandle> live;
    // Optional: set by the caller to cancel (as cancel(id)); must outlive the request.
    const std::atomic<bool>* cancel = nullptr;
};

struct RequestOutcome {
    std::vector<GenerationResult> results;  // one per text, in order (complete only without error)
    std::optional<JobError> error;          // Cancelled (client gone, timeout, shutdown), OutOfMemory...
    GenerationOptions options;              // the settings it ran with
    int64_t input_tokens = 0;               // tokens of the texts (</s> included)
    int64_t output_tokens = 0;              // ids of the candidates returned
    std::map<DropReason, int64_t> dropped;  // candidates dropped, by rule (option_of names the option that
                                            // dropped them: "no_copy", "min_change"...); = results' dropped
    double queued_s = 0.0;                  // submission -> first rows in the batch
    double first_candidate_s = -1.0;        // submission -> first candidate (-1: none)
    double total_s = 0.0;
};

struct RequestEvents {
    // Both run on the scheduler thread: keep them short (hand the data to another thread).
    // on_candidate: each returned candidate, with its scores, once it is settled: without a ranking
    // when its round is scored (later rounds only add after it), with a ranking when its text's
    // rounds end; in the order of the result.
    std::function<void(size_t text_index, const Candidate& candidate)> on_candidate;
    std::function<void(const RequestOutcome& outcome)> on_done;  // exactly once
    // After every decoding step the request had rows in: its steps so far and its rows in that step.
    std::function<void(const StepInfo& step)> on_step;
};

struct SchedulerLimits {
    int max_batch = 64;   // rows per decoding step (a request larger than this runs alone)
    int max_queue = 256;  // requests waiting; submit() refuses more
};

struct SchedulerStats {
    int queue_length = 0;       // requests not yet fully in the batch
    int running_requests = 0;   // requests with rows in the batch
    int running_sequences = 0;  // rows in the batch
    int64_t steps = 0;          // decoding steps so far
};

struct StepStats {
    int rows = 0;          // rows decoded in this step
    int64_t tokens = 0;    // tokens produced (= rows)
    double seconds = 0.0;  // the step's wall time (admission included)
};

// Where the scheduler decodes: on a thread of its own (serve), or on the caller's thread inside
// run_until_idle() (generate_scored: a lone generation keeps its thread and that thread's OpenMP
// team — a fresh thread per call paid ~50 ms setting one up).
enum class SchedulerThread { Own, Caller };

class Scheduler {
public:
    // `model` (and `embedder`) must outlive the scheduler. `defaults` are the live default settings
    // (shared with whoever changes them; a change applies to requests submitted afterwards).
    // `embedder` (may be null; its embed() is called on the scheduler thread) gives the candidates
    // their similarity, as generate_scored does; without it a similarity filter or rank is refused.
    Scheduler(const Model& model, SchedulerLimits limits, std::shared_ptr<SettingsHandle> defaults,
              const Embedder* embedder = nullptr, SchedulerThread where = SchedulerThread::Own);
    ~Scheduler();  // cancels what is left and joins the thread
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Validates (throws t5s::Error(InvalidArgument) naming the field or text) and queues the
    // request. Returns null when the queue is full or the scheduler is draining.
    std::shared_ptr<Job> submit(ServeRequest request, RequestEvents events);
    bool cancel(JobId id);  // the request leaves the queue or the batch before the next step

    // Called on the scheduler thread after every decoding step.
    void set_step_observer(std::function<void(const StepStats&)> observer);
    SchedulerStats stats() const;
    const std::shared_ptr<SettingsHandle>& defaults() const { return defaults_; }
    JobRegistry& jobs() { return jobs_; }
    const Model& model() const { return model_; }

    // Stops accepting; lets queued and running requests finish until `deadline`, then cancels the
    // rest. Returns true when everything finished in time.
    bool drain(std::chrono::steady_clock::time_point deadline);
    // SchedulerThread::Caller: decodes here until every request submitted so far has finished.
    void run_until_idle();

private:
    struct State;
    void run();

    const Model& model_;
    const Embedder* embedder_;
    SchedulerLimits limits_;
    std::shared_ptr<SettingsHandle> defaults_;
    JobRegistry jobs_;
    std::unique_ptr<State> state_;
};

}  // namespace t5s
