// Job and JobRegistry (t5s/jobs.h): the one job model of the engine.
#include "t5s/jobs.h"

namespace t5s {

bool Job::finished() const {
    const JobState s = state();
    return s == JobState::Finished || s == JobState::Failed || s == JobState::Cancelled;
}

void Job::on_signal(std::function<void(JobSignal)> hook) {
    std::lock_guard<std::mutex> lock(mutex_);
    hook_ = std::move(hook);
}

void Job::cancel() {
    generation_.cancel.store(true, std::memory_order_release);
    pause_.store(false, std::memory_order_release);  // a paused body must wake up to see the cancel
    std::lock_guard<std::mutex> lock(mutex_);
    if (hook_) hook_(JobSignal::Cancel);
}

void Job::pause() {
    pause_.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> lock(mutex_);
    if (hook_) hook_(JobSignal::Pause);
}

void Job::resume() {
    pause_.store(false, std::memory_order_release);
    std::lock_guard<std::mutex> lock(mutex_);
    if (hook_) hook_(JobSignal::Resume);
}

void Job::set_progress(int64_t done, int64_t total) {
    done_.store(done, std::memory_order_release);
    total_.store(total, std::memory_order_release);
}

void Job::attach_settings(std::shared_ptr<SettingsHandle> settings) {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.live_settings = std::move(settings);
}

std::shared_ptr<SettingsHandle> Job::settings() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return generation_.live_settings;
}

void Job::fail(ErrorCode code, std::string message) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = JobError{code, std::move(message)};
    }
    set_state(code == ErrorCode::Cancelled ? JobState::Cancelled : JobState::Failed);
}

std::optional<JobError> Job::error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

std::shared_ptr<Job> JobRegistry::create(JobKind kind) {
    auto job = std::make_shared<Job>(next_id_.fetch_add(1), kind);
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_[job->id()] = job;
    return job;
}

std::shared_ptr<Job> JobRegistry::find(JobId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : it->second;
}

void JobRegistry::remove(JobId id) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.erase(id);
}

void JobRegistry::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.clear();
}

bool JobRegistry::cancel(JobId id) {
    auto job = find(id);  // not under our lock: the job's hook may take its own locks
    if (!job) return false;
    job->cancel();
    return true;
}

void JobRegistry::cancel_all() {
    std::vector<std::shared_ptr<Job>> all;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& [id, job] : jobs_) all.push_back(job);
    }
    for (auto& job : all) job->cancel();
}

int JobRegistry::update_settings(const std::function<GenerationOptions(const GenerationOptions&)>& change) {
    std::vector<std::shared_ptr<SettingsHandle>> handles;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& [id, job] : jobs_)
            if (auto s = job->settings()) handles.push_back(std::move(s));
    }
    for (auto& h : handles) h->set(change(h->get()));
    return int(handles.size());
}

std::vector<JobInfo> JobRegistry::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<JobInfo> out;
    out.reserve(jobs_.size());
    for (const auto& [id, job] : jobs_) out.push_back(JobInfo{id, job->kind(), job->state(), job->done(), job->total()});
    return out;
}

size_t JobRegistry::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return jobs_.size();
}

}  // namespace t5s
