// EngineThread: three worker lanes (model, io, download), a telemetry sampler, and the routing
// between them. The job bodies live in model_jobs.cpp, io_jobs.cpp and hub_jobs.cpp.
#include "t5s/engine_thread.h"
#include "t5s/device.h"

#include <unistd.h>
#include <chrono>
#include <cstdio>

#include "engine_thread/engine_impl.h"
#include "platform/idle_heap.h"
#include "t5s/generation_fields.h"
#include "t5s/process_memory.h"

namespace t5s {

namespace detail {

void EngineImpl::emit(Event event) {
    {
        std::lock_guard<std::mutex> lock(events_mutex);
        events.push_back(std::move(event));
    }
    events_cv.notify_all();
}

void EngineImpl::fail(JobId job, ErrorCode code, std::string message) { emit(JobFailed{job, code, std::move(message)}); }

void EngineImpl::fail(Job& job, ErrorCode code, std::string message) {
    job.fail(code, message);
    emit(JobFailed{job.id(), code, std::move(message)});
}

// Every exception of a job body is caught here and becomes JobFailed (the lane lives on).
JobEnd EngineImpl::run_guarded(LaneTask& task, bool model_lane) {
    Job& job = *task.job;
    try {
        if (model_lane) return run_model_job(task);
        if (!run_hub_job(task) && !run_learn_job(task)) run_io_job(task);
    } catch (...) {
        // Models and the trainer report running out of memory as Error(OutOfMemory), recognised by
        // exception type (torch/torch_errors.h); an Internal error reaching here is a bug.
        const CaughtError e = describe_exception(std::current_exception());
        fail(job, e.code, e.message);
    }
    return JobEnd::Done;
}

// One task from a lane: skipped when cancelled while queued, else run; then the job leaves the
// registry unless its body parked it (a paused batch).
void EngineImpl::run_task(LaneTask& task, bool model_lane) {
#ifdef T5S_TEST_HOOKS
    if (task.crash_lane) throw LaneCrash{};
#endif
    const std::shared_ptr<Job> job = task.job;  // the task may be moved away when parked
    if (job->cancel_requested()) {
        fail(*job, ErrorCode::Cancelled, "cancelled before it started");
    } else {
        job->set_state(JobState::Running);
        if (run_guarded(task, model_lane) == JobEnd::Parked) return;
        if (!job->finished()) job->set_state(JobState::Finished);
    }
    jobs.remove(job->id());
}

void EngineImpl::lane_loop(Lane& lane, bool model_lane) {
    bool heap_to_release = false;  // the model lane ran a job since its heap was last given back
    try {
        for (;;) {
            LaneTask task;
            {
                std::unique_lock<std::mutex> lock(lane.mutex);
                wait_for_work(lane.cv, lock, &heap_to_release, [&] { return lane.stop || !lane.queue.empty(); });
                if (lane.stop) return;
                task = std::move(lane.queue.front());
                lane.queue.pop_front();
                lane.running = 1;
            }
            run_task(task, model_lane);
            lane.running = 0;
            heap_to_release = model_lane;
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
    download_lane.stop = false;
    download_lane.thread = std::thread([this] { lane_loop(download_lane, false); });
}

void EngineImpl::stop_lanes() {
    jobs.cancel_all();  // running bodies stop at their next safe point; a paused trainer wakes to stop
    for (Lane* lane : {&model_lane, &io_lane, &download_lane}) {
        {
            std::lock_guard<std::mutex> lock(lane->mutex);
            lane->stop = true;
        }
        lane->cv.notify_all();
    }
    for (Lane* lane : {&model_lane, &io_lane, &download_lane})
        if (lane->thread.joinable()) lane->thread.join();
}

void EngineImpl::enqueue(Lane& lane, LaneTask task) {
    {
        std::lock_guard<std::mutex> lock(lane.mutex);
        lane.queue.push_back(std::move(task));
    }
    lane.cv.notify_one();
}

void EngineImpl::park(LaneTask task) {
    task.job->set_state(JobState::Paused);
    const JobId id = task.job->id();
    std::lock_guard<std::mutex> lock(control_mutex);
    parked.insert_or_assign(id, std::move(task));
}

std::optional<LaneTask> EngineImpl::unpark(JobId job) {
    std::lock_guard<std::mutex> lock(control_mutex);
    auto it = parked.find(job);
    if (it == parked.end()) return std::nullopt;
    LaneTask task = std::move(it->second);
    parked.erase(it);
    return task;
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
    for (Lane* lane : {&model_lane, &io_lane, &download_lane}) {
        std::lock_guard<std::mutex> lock(lane->mutex);
        n += int(lane->queue.size()) + lane->running.load();
    }
    return n;
}

// Fields a running job may change: the per-step ones (the decoder's own list), plus length and
// filtering, which apply from the job's next request (e.g. the next rows of a batch).
GenerationOptions merge_live(GenerationOptions current, const GenerationOptions& update) {
    // Live::NextRequest and Live::EveryStep fields (t5s/generation_fields.h: protect too, so a batch protects
    // with them from its next row batch); min tokens capped by the new max.
    return merge_step_settings(with_live_fields(std::move(current), update, Live::NextRequest), update);
}

}  // namespace detail

EngineThread::EngineThread(EngineConfig config) : impl_(std::make_unique<Impl>()) {
    impl_->config = std::move(config);
    if (!impl_->config.model_factory)
        impl_->config.model_factory = [](const std::filesystem::path& dir, const RuntimeOptions& o) {
            return Model::load(dir, o);
        };
    if (!impl_->config.embedder_factory)
        impl_->config.embedder_factory = [](const std::filesystem::path& dir, const RuntimeOptions& o) {
            return Embedder::load(dir, o);
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

bool EngineThread::wait_for_events(double timeout_s) {
    std::unique_lock<std::mutex> lock(impl_->events_mutex);
    return impl_->events_cv.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return !impl_->events.empty(); });
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
    std::vector<detail::LaneTask> lost;
    for (detail::Lane* lane : {&impl_->model_lane, &impl_->io_lane, &impl_->download_lane}) {
        std::lock_guard<std::mutex> lock(lane->mutex);
        for (auto& t : lane->queue) lost.push_back(std::move(t));
        lane->queue.clear();
        lane->running = 0;
    }
    for (auto& t : lost) impl_->fail(*t.job, ErrorCode::Cancelled, "engine restarted before this job ran");
    impl_->kept_recipe.clear();
    impl_->model.reset();
    impl_->embedder.reset();
    impl_->model_history.reset();
    impl_->io_history.reset();
    impl_->jobs.clear();
    {
        std::lock_guard<std::mutex> lock(impl_->control_mutex);
        impl_->parked.clear();
        impl_->dead = false;
        impl_->death_message.clear();
    }
    impl_->start_lanes();
}

int EngineThread::queue_length() const { return impl_->queue_length(); }

}  // namespace t5s
