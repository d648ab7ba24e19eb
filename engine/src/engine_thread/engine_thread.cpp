// EngineThread: two worker lanes (model, io), a telemetry sampler, and the routing between them.
// The job bodies live in model_jobs.cpp and io_jobs.cpp.
#include "t5s/device.h"
#include "t5s/engine_thread.h"

#include <chrono>
#include <cstdio>
#include <unistd.h>

#include "engine_thread/engine_impl.h"
#include "t5s/process_memory.h"

namespace t5s {

const char* to_string(DecisionKind kind) {
    switch (kind) {
        case DecisionKind::Accept: return "accept";
        case DecisionKind::Reject: return "reject";
        case DecisionKind::Edit: return "edit";
        case DecisionKind::Undo: return "undo";
        case DecisionKind::Redo: return "redo";
    }
    return "?";
}

namespace detail {

using Clock = std::chrono::steady_clock;

void EngineImpl::emit(Event event) {
    std::lock_guard<std::mutex> lock(events_mutex);
    events.push_back(std::move(event));
}

void EngineImpl::fail(JobId job, ErrorCode code, std::string message) {
    emit(JobFailed{job, code, std::move(message)});
}

bool EngineImpl::take_queued_cancel(JobId job) {
    std::lock_guard<std::mutex> lock(control_mutex);
    return cancelled_queued.erase(job) > 0;
}

void EngineImpl::run_guarded(Task& task, bool model_lane) {
    try {
        if (model_lane) run_model_job(task);
        else run_io_job(task);
    } catch (const Error& e) {
        fail(task.id, e.code(), e.what());
    } catch (const std::bad_alloc&) {
        fail(task.id, ErrorCode::OutOfMemory, "out of memory (host allocation failed); try a smaller batch");
    } catch (const std::exception& e) {
        // Models and the trainer report running out of memory as Error(OutOfMemory), recognised by
        // exception type (torch/torch_errors.h); anything else reaching here is a bug.
        fail(task.id, ErrorCode::Internal, e.what());
    } catch (...) {
        fail(task.id, ErrorCode::Internal, "unknown exception in job");
    }
}

void EngineImpl::lane_loop(Lane& lane, bool model_lane) {
    try {
        for (;;) {
            Task task;
            {
                std::unique_lock<std::mutex> lock(lane.mutex);
                lane.cv.wait(lock, [&] { return lane.stop || !lane.queue.empty(); });
                if (lane.stop) return;
                task = std::move(lane.queue.front());
                lane.queue.pop_front();
                lane.running = 1;
            }
            if (std::holds_alternative<CrashLaneForTest>(task.command)) throw LaneCrash{};
            if (take_queued_cancel(task.id)) {
                fail(task.id, ErrorCode::Cancelled, "cancelled before it started");
            } else {
                run_guarded(task, model_lane);
            }
            lane.running = 0;
        }
    } catch (const LaneCrash&) {
        mark_dead(std::string(model_lane ? "model" : "io") + " lane stopped (simulated crash)");
    } catch (const std::exception& e) {
        mark_dead(std::string(model_lane ? "model" : "io") + " lane stopped: " + e.what());
    } catch (...) {
        mark_dead(std::string(model_lane ? "model" : "io") + " lane stopped: unknown error");
    }
    lane.running = 0;
}

void EngineImpl::mark_dead(const std::string& message) {
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        if (dead) return;
        dead = true;
        death_message = message;
    }
    emit(EngineDied{message});
}

void EngineImpl::start_lanes() {
    model_lane.stop = false;
    io_lane.stop = false;
    model_lane.thread = std::thread([this] { lane_loop(model_lane, true); });
    io_lane.thread = std::thread([this] { lane_loop(io_lane, false); });
}

void EngineImpl::stop_lanes() {
    {
        std::lock_guard<std::mutex> lock(control_mutex);
        for (auto& [id, control] : running_generations) control->cancel = true;
        for (auto& [id, batch] : batches) batch->cancel = true;
        for (auto& [id, training] : trainings) {
            training->job.stop();
            training->job.resume();  // a paused trainer waits: let it see the stop
        }
    }
    for (Lane* lane : {&model_lane, &io_lane}) {
        {
            std::lock_guard<std::mutex> lock(lane->mutex);
            lane->stop = true;
        }
        lane->cv.notify_all();
    }
    for (Lane* lane : {&model_lane, &io_lane})
        if (lane->thread.joinable()) lane->thread.join();
}

void EngineImpl::enqueue(Lane& lane, Task task) {
    {
        std::lock_guard<std::mutex> lock(lane.mutex);
        lane.queue.push_back(std::move(task));
    }
    lane.cv.notify_one();
}

// The engine's own CUDA numbers (torch allocator + cudaMemGetInfo); available=false on CPU.
static CudaMemory engine_cuda_memory() { return query_device_memory().cuda; }

void EngineImpl::sampler_loop() {
    const auto period = std::chrono::duration<double>(1.0 / config.telemetry_hz);
    int64_t last_tokens = tokens_total.load();
    auto last = Clock::now();
    std::unique_lock<std::mutex> lock(sampler_mutex);
    while (!sampler_stop) {
        sampler_cv.wait_for(lock, period, [&] { return sampler_stop; });
        if (sampler_stop) break;
        TelemetrySample s;
        const auto now = Clock::now();
        s.t_s = std::chrono::duration<double>(now - started).count();
        s.rss_bytes = process_rss_bytes();
        try {
            s.cuda = config.cuda_probe ? config.cuda_probe() : engine_cuda_memory();
        } catch (...) {
            s.cuda.available = false;
        }
        const int64_t tokens = tokens_total.load();
        const double dt = std::chrono::duration<double>(now - last).count();
        s.tokens_per_s = dt > 0 ? double(tokens - last_tokens) / dt : 0.0;
        last_tokens = tokens;
        last = now;
        s.queue_length = queue_length();
        emit(s);
    }
}

int EngineImpl::queue_length() {
    int n = 0;
    for (Lane* lane : {&model_lane, &io_lane}) {
        std::lock_guard<std::mutex> lock(lane->mutex);
        n += int(lane->queue.size()) + lane->running.load();
    }
    return n;
}

// Commands that act at once on running jobs; the rest go to a lane.
JobId EngineImpl::submit(Command command) {
    const JobId id = next_id.fetch_add(1);
    if (auto* c = std::get_if<Cancel>(&command)) {
        bool found = false;
        {
            std::lock_guard<std::mutex> lock(control_mutex);
            if (auto it = running_generations.find(c->job); it != running_generations.end()) {
                it->second->cancel = true;
                found = true;
            }
            if (auto it = batches.find(c->job); it != batches.end()) {
                it->second->cancel = true;
                found = true;
            }
            if (auto it = trainings.find(c->job); it != trainings.end()) {
                if (it->second->started) {
                    it->second->job.stop();    // saves a checkpoint, then Finished(stopped)
                    it->second->job.resume();  // a paused trainer must wake up to stop
                    found = true;
                } else {
                    trainings.erase(it);  // still queued: the lane fails it as cancelled
                }
            }
            if (!found) cancelled_queued.insert(c->job);
        }
        if (auto b = find_batch(c->job); b && b->paused && !b->running) {
            // A paused batch is not on a lane: finish it here.
            emit(JobFailed{c->job, ErrorCode::Cancelled, "cancelled while paused"});
            std::lock_guard<std::mutex> lock(control_mutex);
            batches.erase(c->job);
        }
        return id;
    }
    if (auto* p = std::get_if<PauseJob>(&command)) {
        if (auto t = find_training(p->job)) {
            t->job.pause();  // the trainer waits at its next micro-batch boundary
            emit(JobPaused{p->job, t->step.load(), t->total.load()});
        } else if (auto b = find_batch(p->job)) b->pause = true;
        else fail(id, ErrorCode::InvalidArgument, "no batch job " + std::to_string(p->job) + " to pause");
        return id;
    }
    if (auto* u = std::get_if<UpdateSettings>(&command)) {
        try {
            validate_generation_options(u->options);
        } catch (const Error& e) {
            fail(id, e.code(), e.what());
            return id;
        }
        int n = 0;
        {
            std::lock_guard<std::mutex> lock(control_mutex);
            for (auto& [job, control] : running_generations) {
                if (control->live_settings) control->live_settings->set(merge_live(control->live_settings->get(), u->options));
                ++n;
            }
            for (auto& [job, batch] : batches) {
                batch->settings->set(merge_live(batch->settings->get(), u->options));
                ++n;
            }
        }
        emit(SettingsUpdated{id, n});
        return id;
    }
    if (auto* t = std::get_if<StartTraining>(&command)) {
        // Registered now so that PauseJob works before the run starts (it then waits before step 1).
        std::lock_guard<std::mutex> lock(control_mutex);
        trainings[id] = std::make_shared<TrainingState>(t->options);
    }
    if (auto* b = std::get_if<BatchAugment>(&command)) {
        auto state = std::make_shared<BatchState>();
        state->request = *b;
        state->settings = std::make_shared<SettingsHandle>(b->options);
        state->done = b->done;
        state->done.resize(b->rows.size(), false);
        std::lock_guard<std::mutex> lock(control_mutex);
        batches[id] = state;
    }
    if (auto* r = std::get_if<ResumeJob>(&command)) {
        if (auto t = find_training(r->job)) {
            t->job.resume();
            return id;
        }
        auto b = find_batch(r->job);
        if (!b) {
            fail(id, ErrorCode::InvalidArgument, "no paused batch job " + std::to_string(r->job));
            return id;
        }
        b->pause = false;
        b->paused = false;
        enqueue(model_lane, Task{r->job, std::move(command), Clock::now()});
        return id;
    }
    const bool model = std::holds_alternative<LoadModel>(command) || std::holds_alternative<UnloadModel>(command) ||
                       std::holds_alternative<Generate>(command) || std::holds_alternative<BatchAugment>(command) ||
                       std::holds_alternative<StartTraining>(command) ||
                       (std::holds_alternative<CrashLaneForTest>(command) && !std::get<CrashLaneForTest>(command).io_lane);
    enqueue(model ? model_lane : io_lane, Task{id, std::move(command), Clock::now()});
    return id;
}

std::shared_ptr<TrainingState> EngineImpl::find_training(JobId job) {
    std::lock_guard<std::mutex> lock(control_mutex);
    auto it = trainings.find(job);
    return it == trainings.end() ? nullptr : it->second;
}

std::shared_ptr<BatchState> EngineImpl::find_batch(JobId job) {
    std::lock_guard<std::mutex> lock(control_mutex);
    auto it = batches.find(job);
    return it == batches.end() ? nullptr : it->second;
}

// Fields a running job may change: the per-step ones (the decoder's own list), plus length and
// filtering, which apply from the job's next request (e.g. the next rows of a batch).
GenerationOptions merge_live(GenerationOptions current, const GenerationOptions& update) {
    current.max_new_tokens = update.max_new_tokens;
    current = merge_step_settings(current, update);
    current.no_copy = update.no_copy;
    current.distinct = update.distinct;
    return current;
}

}  // namespace detail

struct EngineThread::Impl : detail::EngineImpl {};

EngineThread::EngineThread(EngineConfig config) : impl_(std::make_unique<Impl>()) {
    impl_->config = std::move(config);
    if (!impl_->config.model_factory)
        impl_->config.model_factory = [](const std::filesystem::path& dir, const RuntimeOptions& o) {
            return Model::load(dir, o);
        };
    impl_->started = detail::Clock::now();
    impl_->start_lanes();
    if (impl_->config.telemetry_hz > 0) impl_->sampler = std::thread([this] { impl_->sampler_loop(); });
}

EngineThread::~EngineThread() {
    {
        std::lock_guard<std::mutex> lock(impl_->sampler_mutex);
        impl_->sampler_stop = true;
    }
    impl_->sampler_cv.notify_all();
    if (impl_->sampler.joinable()) impl_->sampler.join();
    impl_->stop_lanes();
}

JobId EngineThread::submit(Command command) { return impl_->submit(std::move(command)); }

std::vector<Event> EngineThread::drain_events() {
    std::vector<Event> out;
    std::lock_guard<std::mutex> lock(impl_->events_mutex);
    out.swap(impl_->events);
    return out;
}

bool EngineThread::alive() const {
    std::lock_guard<std::mutex> lock(impl_->control_mutex);
    return !impl_->dead;
}

std::string EngineThread::death_message() const {
    std::lock_guard<std::mutex> lock(impl_->control_mutex);
    return impl_->death_message;
}

void EngineThread::restart() {
    impl_->stop_lanes();
    std::vector<detail::Task> lost;
    for (detail::Lane* lane : {&impl_->model_lane, &impl_->io_lane}) {
        std::lock_guard<std::mutex> lock(lane->mutex);
        for (auto& t : lane->queue) lost.push_back(std::move(t));
        lane->queue.clear();
        lane->running = 0;
    }
    for (auto& t : lost) impl_->fail(t.id, ErrorCode::Cancelled, "engine restarted before this job ran");
    impl_->model.reset();
    impl_->model_history.reset();
    impl_->io_history.reset();
    {
        std::lock_guard<std::mutex> lock(impl_->control_mutex);
        impl_->running_generations.clear();
        impl_->batches.clear();
        impl_->trainings.clear();
        impl_->cancelled_queued.clear();
        impl_->dead = false;
        impl_->death_message.clear();
    }
    impl_->start_lanes();
}

int EngineThread::queue_length() const { return impl_->queue_length(); }

}  // namespace t5s
