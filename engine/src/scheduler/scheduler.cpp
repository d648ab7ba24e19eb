// The scheduler thread: FIFO admission into the shared batch, one decoding step at a time,
// cancellation and timeouts between steps; finished rounds go through the quality steps of
// generate_scored (scheduler/request_rounds.h) and may re-enter the batch. Torch-free: the tensors live
// in BatchDecoder.
#include "t5s/scheduler.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "decode/batch_decoder.h"
#include "platform/idle_heap.h"
#include "scheduler/request_rounds.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/generation_limits.h"
#include "t5s/process_memory.h"
#include "t5s/seed.h"

namespace t5s {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Pending {
    std::shared_ptr<Job> job;
    std::vector<std::string> texts;
    std::vector<std::vector<int>> ids;
    RequestEvents events;
    RequestOutcome outcome;
    std::unique_ptr<scheduler::RequestRounds> rounds;  // scores, filters, rounds, selection
    Clock::time_point submitted;
    std::optional<Clock::time_point> deadline;
    size_t next_input = 0;  // next text whose first round joins the batch
    size_t inputs_done = 0;
    std::set<decode::GroupId> groups;  // groups of this request in the batch
    bool admitted = false, finished = false;
    std::shared_ptr<SettingsHandle> live;  // the caller's running settings (ServeRequest::live)
    uint64_t live_version = 0;             // the version last applied
    const std::atomic<bool>* cancel_flag = nullptr;
    int steps = 0;  // decoding steps it had rows in (RequestEvents::on_step)
};

struct GroupOwner {
    std::shared_ptr<Pending> request;
    size_t input = 0;
    int round = 0;
};

}  // namespace

struct Scheduler::State {
    Scheduler& owner;
    std::mutex mutex;
    std::condition_variable wake, idle;
    std::deque<std::shared_ptr<Pending>> queue;                                       // requests with texts not yet admitted
    std::deque<std::pair<std::shared_ptr<Pending>, std::pair<size_t, int>>> retries;  // (input, round) re-runs
    std::vector<std::shared_ptr<Pending>> active;                                     // admitted, not finished
    std::function<void(const StepStats&)> observer;
    std::atomic<bool> draining{false}, stopping{false};
    bool until_idle = false;  // run_until_idle(): collect stops once everything finished
    SchedulerStats stats;
    // Scheduler thread only.
    std::unique_ptr<decode::BatchDecoder> decoder;
    std::map<decode::GroupId, GroupOwner> owners;
    bool heap_to_release = false;  // a step ran since the heap was last given back (platform/idle_heap.h)
    decode::GroupId next_group = 1;
    std::thread thread;

    explicit State(Scheduler& s) : owner(s) {}
    bool all_done() const { return queue.empty() && active.empty() && retries.empty(); }
    using Admission = std::pair<std::shared_ptr<Pending>, std::pair<size_t, int>>;
    bool collect(std::vector<Admission>* admit, std::vector<std::shared_ptr<Pending>>* cancelled);
    void publish_batch_stats(int rows, const std::vector<Admission>& joining);
    void fail(const std::shared_ptr<Pending>& p, ErrorCode code, const std::string& message);
    void fail_running(const CaughtError& error);
    void add_groups(std::vector<Admission>& admit);
    void apply_live_settings();
    std::vector<std::pair<std::shared_ptr<Pending>, int>> rows_watched() const;
    void report_steps(const std::vector<std::pair<std::shared_ptr<Pending>, int>>& stepped);
    void step_once();
    void complete_groups(const std::vector<decode::GroupId>& finished);
    void complete_rounds(const std::shared_ptr<Pending>& p);
    void finish(const std::shared_ptr<Pending>& p);
};

Scheduler::Scheduler(const Model& model, SchedulerLimits limits, std::shared_ptr<SettingsHandle> defaults,
                     const Embedder* embedder, SchedulerThread where)
    : model_(model),
      embedder_(embedder),
      limits_(limits),
      defaults_(std::move(defaults)),
      state_(std::make_unique<State>(*this)) {
    if (!defaults_) defaults_ = std::make_shared<SettingsHandle>();
    limits_.max_batch = std::max(1, limits_.max_batch);
    limits_.max_queue = std::max(1, limits_.max_queue);
    state_->decoder = std::make_unique<decode::BatchDecoder>(model_);
    if (where == SchedulerThread::Own) state_->thread = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->stopping = state_->draining = true;
    }
    jobs_.cancel_all();
    state_->wake.notify_all();
    if (state_->thread.joinable()) state_->thread.join();
}

void Scheduler::set_step_observer(std::function<void(const StepStats&)> observer) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->observer = std::move(observer);
}

SchedulerStats Scheduler::stats() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    SchedulerStats s = state_->stats;
    s.queue_length = static_cast<int>(state_->queue.size());
    return s;
}

std::shared_ptr<Job> Scheduler::submit(ServeRequest request, RequestEvents events) {
    if (request.texts.empty()) throw Error(ErrorCode::InvalidArgument, "'texts' is empty");
    auto p = std::make_shared<Pending>();
    GenerationOptions o = with_named_fields(defaults_->get(), request.options, request.named);
    // Not a setting: a caller that masked spans itself (a recipe's leg, its text carrying the
    // sentinels) asks the decoder to keep them.
    o.keep_sentinels = o.keep_sentinels || request.options.keep_sentinels;
    validate_generation_options(o);
    require_scores_available(o, embedder_);
    if (o.do_sample) o.seed = resolve_seed(o.seed);
    const Tokenizer& tok = model_.tokenizer();
    for (size_t i = 0; i < request.texts.size(); ++i)
        require_valid_utf8(request.texts[i], request.texts.size() == 1 ? "text" : "texts[" + std::to_string(i) + "]");
    // Plans each text's protected spans; the masked texts are what the model sees.
    p->rounds = std::make_unique<scheduler::RequestRounds>(request.texts, request.spans, o, embedder_);
    o.keep_sentinels = o.keep_sentinels || p->rounds->protects();
    for (size_t i = 0; i < request.texts.size(); ++i) {
        p->ids.push_back(tok.encode(o.task_prefix + p->rounds->masked(i)));
        p->outcome.input_tokens += static_cast<int64_t>(p->ids.back().size());
    }
    check_source_lengths(p->ids, model_.info().config, o);
    if (p->rounds->protects()) {  // the candidates carry the spans back, and scoring encodes them whole
        std::vector<std::vector<int>> whole;
        for (const auto& text : request.texts) whole.push_back(tok.encode(o.task_prefix + text));
        check_source_lengths(whole, model_.info().config, o);
    }
    for (const auto& row : p->ids) {
        if (model_.info().device == "cpu")
            check_generation_memory(model_.info().config, decode::BatchDecoder::rows_for(o), static_cast<int64_t>(row.size()), o,
                                    model_.info().activation_bytes, host_available_bytes(), "cpu");
    }
    p->texts = std::move(request.texts);
    p->outcome.options = o;
    p->outcome.results.resize(p->texts.size());
    for (size_t i = 0; i < p->texts.size(); ++i) {
        p->outcome.results[i].input = p->texts[i];
        p->outcome.results[i].seed = o.do_sample ? o.seed : -1;
        p->outcome.results[i].spans = p->rounds->source_spans(i);
    }
    p->events = std::move(events);
    p->live = std::move(request.live);
    p->live_version = p->live ? p->live->version() : 0;
    p->cancel_flag = request.cancel;
    p->submitted = Clock::now();
    if (request.timeout_s > 0)
        p->deadline =
            p->submitted + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(request.timeout_s));
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->draining || static_cast<int>(state_->queue.size()) >= limits_.max_queue) return nullptr;
        p->job = jobs_.create(JobKind::Generate);
        p->job->set_progress(0, static_cast<int64_t>(p->texts.size()));
        state_->queue.push_back(p);
    }
    state_->wake.notify_all();
    return p->job;
}

bool Scheduler::cancel(JobId id) {
    const bool found = jobs_.cancel(id);
    { std::lock_guard<std::mutex> lock(state_->mutex); }
    state_->wake.notify_all();
    return found;
}

bool Scheduler::drain(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->draining = true;
    auto all_done = [&] { return state_->all_done(); };
    if (state_->idle.wait_until(lock, deadline, all_done)) return true;
    lock.unlock();
    jobs_.cancel_all();
    state_->wake.notify_all();
    lock.lock();
    state_->idle.wait_for(lock, std::chrono::seconds(30), all_done);
    return false;
}

// Under no lock: waits for work, then takes cancelled requests out and picks the groups that
// join the batch (retries first, then the FIFO, while the rows fit). False: stop.
bool Scheduler::State::collect(std::vector<Admission>* admit, std::vector<std::shared_ptr<Pending>>* cancelled) {
    std::unique_lock<std::mutex> lock(mutex);
    wait_for_work(wake, lock, &heap_to_release,
                  [&] { return stopping || until_idle || !queue.empty() || !retries.empty() || decoder->rows() > 0; });
    if ((stopping || until_idle) && all_done()) return false;
    const auto now = Clock::now();
    auto gone = [&](const std::shared_ptr<Pending>& p) {
        return p->job->cancel_requested() || (p->cancel_flag && p->cancel_flag->load()) || (p->deadline && now > *p->deadline) ||
               stopping;
    };
    for (auto it = queue.begin(); it != queue.end();) {
        if (!(*it)->admitted && gone(*it)) {
            cancelled->push_back(*it);
            it = queue.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& p : active) {
        if (gone(p)) cancelled->push_back(p);
    }
    int rows = decoder->rows();
    auto fits = [&](const GenerationOptions& o) {
        const int n = decode::BatchDecoder::rows_for(o);
        if (rows > 0 && rows + n > owner.limits_.max_batch) return false;
        rows += n;
        return true;
    };
    while (!retries.empty() && fits(retries.front().first->outcome.options)) {
        admit->push_back(retries.front());
        retries.pop_front();
    }
    while (!queue.empty() && retries.empty()) {
        auto p = queue.front();
        if (p->job->cancel_requested() || !fits(p->outcome.options)) break;
        if (!p->admitted) active.push_back(p);
        p->admitted = true;
        admit->push_back({p, {p->next_input++, 0}});
        if (p->next_input == p->texts.size()) queue.pop_front();
    }
    // The admitted rows count as running from the moment they leave the queue: a metrics reader
    // between here and the step (the inputs are encoded meanwhile) would otherwise see a request
    // in neither the queue nor the batch.
    publish_batch_stats(rows, *admit);
    return true;
}

// The batch's gauges (mutex held): its rows, and the requests with rows in it or joining it now.
void Scheduler::State::publish_batch_stats(int rows, const std::vector<Admission>& joining) {
    stats.running_sequences = rows;
    stats.running_requests = 0;
    for (const auto& p : active) {
        const bool joins = std::any_of(joining.begin(), joining.end(), [&](const Admission& a) { return a.first == p; });
        stats.running_requests += !p->groups.empty() || joins ? 1 : 0;
    }
}

void Scheduler::State::finish(const std::shared_ptr<Pending>& p) {
    if (p->finished) return;
    p->finished = true;
    p->outcome.total_s = seconds_since(p->submitted);
    if (p->outcome.error) {
        p->job->fail(p->outcome.error->code, p->outcome.error->message);
        p->outcome.output_tokens = 0;
    } else {
        p->job->set_state(JobState::Finished);
    }
    {
        std::lock_guard<std::mutex> lock(mutex);
        stats.running_sequences = decoder->rows();  // before on_done: a caller that waits on it sees the batch without it
        active.erase(std::remove(active.begin(), active.end(), p), active.end());
        queue.erase(std::remove(queue.begin(), queue.end(), p), queue.end());
        retries.erase(std::remove_if(retries.begin(), retries.end(), [&](const auto& r) { return r.first == p; }), retries.end());
    }
    owner.jobs_.remove(p->job->id());
    if (!p->events.on_done) return;
    try {
        p->events.on_done(p->outcome);
    } catch (...) {
        // The request is over either way; a caller's failing callback must not end the scheduler.
    }
}

// Last resort of the scheduler thread (run): something unexpected escaped a step. The batch is
// cleared and every admitted request fails with the message; the queue and the thread go on.
void Scheduler::State::fail_running(const CaughtError& error) {
    std::vector<std::shared_ptr<Pending>> running;
    {
        std::lock_guard<std::mutex> lock(mutex);
        running = active;
    }
    for (const auto& [gid, o] : owners) {
        try {
            decoder->remove(gid);
        } catch (...) {
            decoder = std::make_unique<decode::BatchDecoder>(owner.model_);  // start from an empty batch
            decoder->use_threads_here(owner.model_.info().threads);
            break;
        }
    }
    owners.clear();
    for (auto& p : running) {
        p->groups.clear();
        if (!p->outcome.error) p->outcome.error = JobError{error.code, error.message};
        finish(p);
    }
}

void Scheduler::State::fail(const std::shared_ptr<Pending>& p, ErrorCode code, const std::string& message) {
    for (auto g : p->groups) {
        decoder->remove(g);
        owners.erase(g);
    }
    p->groups.clear();
    if (!p->outcome.error) p->outcome.error = JobError{code, message};
    finish(p);
}

// The admitted groups join in one encoder pass (BatchDecoder::add).
void Scheduler::State::add_groups(std::vector<Admission>& admit) {
    std::vector<decode::GroupSpec> specs;
    std::vector<std::shared_ptr<Pending>> joining;
    std::vector<std::pair<const Pending*, int>> cohorts;  // a request's inputs of one round decode as one group
    for (auto& [p, where] : admit) {
        if (p->finished) continue;
        if (where.first == 0 && where.second == 0)
            p->outcome.queued_s = seconds_since(p->submitted);  // not again for later rounds
        p->job->set_state(JobState::Running);
        GenerationOptions o = p->outcome.options;
        if (where.second > 0) o.seed = p->outcome.options.seed + where.second;  // as Model::generate's rounds
        const decode::GroupId id = next_group++;
        const std::pair<const Pending*, int> round{p.get(), where.second};
        auto cohort = std::find(cohorts.begin(), cohorts.end(), round);
        if (cohort == cohorts.end()) cohort = cohorts.insert(cohorts.end(), round);
        specs.push_back({id, p->ids[where.first], o, static_cast<uint64_t>(cohort - cohorts.begin()) + 1});
        owners[id] = {p, where.first, where.second};
        p->groups.insert(id);
        joining.push_back(p);
    }
    try {
        decoder->add(specs);
        return;
    } catch (...) {
        const CaughtError e = describe_exception(std::current_exception());
        if (specs.size() == 1) return fail(joining[0], e.code, e.message);
    }
    // The pass failed (out of memory, say): one at a time, so that only the groups that fail alone fail.
    for (size_t i = 0; i < specs.size(); ++i) {
        if (joining[i]->finished) continue;
        try {
            decoder->add(specs[i]);
        } catch (...) {
            const CaughtError e = describe_exception(std::current_exception());
            fail(joining[i], e.code, e.message);
        }
    }
}

// The groups that finished in one step: decoded, screened per request, then scored all together
// (back_score passes of up to max_batch rows, one embedding call), then each request decides on
// its next rounds (scheduler/request_rounds.h).
void Scheduler::State::complete_groups(const std::vector<decode::GroupId>& finished) {
    const Tokenizer& tok = owner.model_.tokenizer();
    std::vector<std::pair<std::shared_ptr<Pending>, std::vector<scheduler::FinishedRound>>> by_request;
    for (auto gid : finished) {
        std::vector<Candidate> candidates = decoder->take_results(gid);
        auto it = owners.find(gid);
        if (it == owners.end()) continue;
        GroupOwner o = it->second;
        owners.erase(it);
        o.request->groups.erase(gid);
        o.request->rounds->decode(tok, o.input, &candidates);
        auto slot = std::find_if(by_request.begin(), by_request.end(), [&](const auto& r) { return r.first == o.request; });
        if (slot == by_request.end()) slot = by_request.insert(by_request.end(), {o.request, {}});
        slot->second.push_back({o.input, o.round, std::move(candidates)});
    }
    std::vector<RoundCandidates> round;
    for (auto& [p, rounds] : by_request) {
        for (auto& r : p->rounds->screen(std::move(rounds), &p->outcome.results)) round.push_back(std::move(r));
    }
    try {
        score_round(owner.model_, owner.embedder_, &round, owner.limits_.max_batch);
    } catch (...) {
        const CaughtError e = describe_exception(std::current_exception());
        for (auto& entry : by_request) fail(entry.first, e.code, "scoring candidates: " + e.message);
        return;
    }
    for (auto& entry : by_request) complete_rounds(entry.first);
}

// Settled candidates streamed; another round queued where the filters left too few and rounds
// remain; the request completes with its last input.
void Scheduler::State::complete_rounds(const std::shared_ptr<Pending>& p) {
    if (p->finished) return;
    const scheduler::RoundsOutcome next = p->rounds->decide(&p->outcome.results);
    for (const auto& [input, c] : next.settled) {
        if (p->outcome.first_candidate_s < 0) p->outcome.first_candidate_s = seconds_since(p->submitted);
        if (!p->events.on_candidate) continue;
        try {
            p->events.on_candidate(input, c);
        } catch (...) {
            const CaughtError e = describe_exception(std::current_exception());
            return fail(p, e.code, "delivering a candidate: " + e.message);
        }
    }
    if (!next.retries.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        for (const auto& r : next.retries) retries.push_back({p, r});
    }
    for (size_t input : next.finished) {
        const GenerationResult& r = p->outcome.results[input];
        for (const auto& c : r.candidates) p->outcome.output_tokens += static_cast<int64_t>(c.ids.size());
        for (const auto& d : r.dropped) p->outcome.dropped[d.reason.kind] += 1;
        p->inputs_done += 1;
    }
    p->job->set_progress(static_cast<int64_t>(p->inputs_done), static_cast<int64_t>(p->texts.size()));
    if (p->inputs_done == p->texts.size()) finish(p);
}

// Per-step settings a running request's caller changed (ServeRequest::live) reach its rows in the
// batch, its rounds' filters and ranking, and the rounds it has yet to start.
void Scheduler::State::apply_live_settings() {
    for (const auto& [gid, o] : owners) {
        Pending& p = *o.request;
        if (!p.live || p.finished || p.live->version() == p.live_version) continue;
        p.live_version = p.live->version();
        const GenerationOptions live = p.live->get();
        p.outcome.options = merge_step_settings(p.outcome.options, live);
        p.rounds->merge_live(live);
        for (auto g : p.groups) decoder->merge_live(g, live);
    }
}

// The requests that asked for every step (RequestEvents::on_step), with their rows in the batch.
std::vector<std::pair<std::shared_ptr<Pending>, int>> Scheduler::State::rows_watched() const {
    std::vector<std::pair<std::shared_ptr<Pending>, int>> watched;
    for (const auto& [gid, o] : owners) {
        if (!o.request->events.on_step) continue;
        auto it = std::find_if(watched.begin(), watched.end(), [&](const auto& w) { return w.first == o.request; });
        if (it == watched.end()) it = watched.insert(watched.end(), {o.request, 0});
        it->second += decoder->rows_of(gid);
    }
    return watched;
}

// Before the step's results complete anything: a finished request hears nothing after on_done.
void Scheduler::State::report_steps(const std::vector<std::pair<std::shared_ptr<Pending>, int>>& stepped) {
    for (const auto& [p, rows] : stepped) {
        if (p->finished) continue;
        p->steps += 1;
        try {
            p->events.on_step(StepInfo{p->steps, rows, rows});
        } catch (...) {
            const CaughtError e = describe_exception(std::current_exception());
            fail(p, e.code, "reporting a step: " + e.message);
        }
    }
}

void Scheduler::State::step_once() {
    if (decoder->rows() > 0) {
        const auto start = Clock::now();
        apply_live_settings();
        const auto stepped = rows_watched();
        decode::StepReport report;
        try {
            report = decoder->step();
        } catch (...) {
            // The batch was reset: every request with rows in it fails.
            const CaughtError e = describe_exception(std::current_exception());
            std::vector<std::shared_ptr<Pending>> hit;
            for (const auto& [gid, o] : owners) hit.push_back(o.request);
            owners.clear();
            for (auto& p : hit) {
                p->groups.clear();
                if (!p->outcome.error) p->outcome.error = JobError{e.code, e.message};
                finish(p);
            }
        }
        std::function<void(const StepStats&)> observer_copy;
        {
            std::lock_guard<std::mutex> lock(mutex);
            stats.steps += 1;
            stats.running_sequences = decoder->rows();
            observer_copy = observer;
        }
        if (observer_copy && report.rows > 0) observer_copy({report.rows, report.rows, seconds_since(start)});
        report_steps(stepped);
        complete_groups(report.groups_finished);
    }
    std::lock_guard<std::mutex> lock(mutex);
    publish_batch_stats(decoder->rows(), {});
    if (all_done()) idle.notify_all();
}

void Scheduler::run_until_idle() {
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->until_idle = true;
    }
    run();
}

void Scheduler::run() {
    State& s = *state_;
    if (!s.until_idle) s.decoder->use_threads_here(model_.info().threads);  // the caller's thread keeps its own
    std::vector<State::Admission> admit;
    std::vector<std::shared_ptr<Pending>> cancelled;
    while (true) {
        admit.clear();
        cancelled.clear();
        if (!s.collect(&admit, &cancelled)) break;
        try {
            for (const auto& p : cancelled) {
                const bool timed_out = p->deadline && Clock::now() > *p->deadline && !p->job->cancel_requested();
                s.fail(p, ErrorCode::Cancelled,
                       timed_out    ? "request timed out (timeout_s)"
                       : s.stopping ? "server shutting down"
                                    : "request cancelled");
            }
            s.add_groups(admit);
            s.step_once();
            s.heap_to_release = true;
        } catch (...) {
            s.fail_running(describe_exception(std::current_exception()));
        }
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    s.idle.notify_all();
}

}  // namespace t5s
