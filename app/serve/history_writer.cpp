#include "serve/history_writer.h"

#include <iostream>

#include "common/generate_recorder.h"
#include "t5s/error.h"

namespace t5s::serve {

HistoryWriter::HistoryWriter(const std::string& path, const Model& model) {
    if (path.empty()) return;
    recorder_ = std::make_unique<cli::GenerateRecorder>(path, model);
    thread_ = std::thread([this] { run(); });
}

HistoryWriter::~HistoryWriter() {
    if (!recorder_) return;
    flush();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void HistoryWriter::record(std::vector<GenerationResult> results, const GenerationOptions& options, double elapsed_ms,
                           std::string recipe_json) {
    if (!recorder_) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back({std::move(results), options, elapsed_ms, std::move(recipe_json)});
    }
    wake_.notify_all();
}

void HistoryWriter::flush() {
    if (!recorder_) return;
    std::unique_lock<std::mutex> lock(mutex_);
    drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void HistoryWriter::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty() && stop_) return;
        Entry e = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        try {
            recorder_->set_recipe(e.recipe_json);  // this entry's only: the recorder names it in what it records next
            recorder_->record(e.results, e.options, e.elapsed_ms);
        } catch (const std::exception& ex) {
            std::cerr << "t5studio serve: history: " << ex.what() << "\n";
        }
        lock.lock();
        busy_ = false;
        drained_.notify_all();
    }
}

}  // namespace t5s::serve
