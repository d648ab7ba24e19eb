#include "serve/learner.h"

#include <chrono>
#include <iostream>

#include "serve/request_json.h"
#include "serve/service.h"
#include "t5s/error.h"

namespace t5s::serve {

Learner::Learner(Service& service, LearningOptions options) : service_(service), options_(std::move(options)) {
    history_ = std::make_unique<HistoryStore>(options_.history_path);
    version_ = current_adapter_version(options_.adapter_dir);
}

Learner::~Learner() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        cancel_ = true;
        if (running_) running_->cancel();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Learner::start() {
    thread_ = std::thread([this] { run(); });
}

int64_t Learner::add_pair(const std::string& source, const std::string& target, const std::string& origin) {
    check_text_bytes(source, "the pair's source");  // a round tokenises them
    check_text_bytes(target, "the pair's target");
    bool trigger = false;
    int64_t n = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto existing = origin.empty() ? std::nullopt : history_->find_by_origin(origin);
        if (existing) {
            history_->edit(*existing, 0, target);
        } else {
            GenerationRecord rec;
            rec.input = source;
            rec.candidates.push_back(CandidateRecord{target, 0.0, {}});
            rec.model_path = options_.model_dir;
            rec.adapter = adapter_version_dir(options_.adapter_dir, version_.load());
            rec.adapter_version = version_.load();
            rec.origin = origin;
            history_->accept(history_->record(rec), 0);
        }
        n = ++new_pairs_;
        trigger = options_.every > 0 && new_pairs_ >= options_.every;
    }
    if (trigger) request_round();
    return n;
}

JobId Learner::request_round() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_) return pending_->id();
    pending_ = jobs_.create(JobKind::Learn);
    wake_.notify_all();
    return pending_->id();
}

bool Learner::wait_idle(double timeout_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return !pending_ && !running_; });
}

nlohmann::json Learner::status() const {
    std::lock_guard<std::mutex> lock(mutex_);
    nlohmann::json j = {{"version", version_.load()},
                        {"adapter", adapter_version_dir(options_.adapter_dir, version_.load())},
                        {"adapter_dir", options_.adapter_dir},
                        {"new_pairs", new_pairs_},
                        {"every", options_.every},
                        {"state", running_   ? "training"
                                  : pending_ ? "queued"
                                             : "idle"}};
    if (running_) j["job"] = running_->id();
    else if (pending_) j["job"] = pending_->id();
    if (!last_.is_null()) j["last_round"] = last_;
    return j;
}

void Learner::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || pending_; });
            if (stop_) break;
            running_ = std::move(pending_);
            pending_.reset();
            new_pairs_ = 0;
            cancel_ = false;
            running_->set_state(JobState::Running);
            running_->on_signal([this](JobSignal s) {
                if (s == JobSignal::Cancel) cancel_ = true;
            });
        }
        round();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.remove(running_->id());
            running_.reset();
        }
        idle_.notify_all();
    }
    idle_.notify_all();
}

void Learner::round() {
    const JobId id = running_->id();
    try {
        const LearningRoundResult r = run_learning_round(options_, {}, &cancel_);
        if (r.status == "adopted") {
            service_.swap_adapter(r.adapter);  // between requests: running ones finish with theirs
            version_ = r.version;
        }
        std::cerr << "t5studio serve: learning round (job " << id << "): " << r.status << ": " << r.why << "\n";
        running_->set_state(JobState::Finished);
        std::lock_guard<std::mutex> lock(mutex_);
        last_ = nlohmann::json::parse(r.to_json());
        last_["job"] = id;
    } catch (const std::exception& e) {
        const bool cancelled = cancel_.load();
        running_->fail(cancelled ? ErrorCode::Cancelled : ErrorCode::Internal, e.what());
        std::cerr << "t5studio serve: learning round (job " << id << ") failed, the current version stays: " << e.what() << "\n";
        std::lock_guard<std::mutex> lock(mutex_);
        last_ = {{"status", "failed"}, {"why", e.what()}, {"job", id}, {"version", version_.load()}};
    }
}

}  // namespace t5s::serve
