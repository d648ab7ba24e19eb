#pragma once
// Records served requests into the SQLite history (`serve --history PATH`) on a thread of its own,
// so that decoding never waits for the disk; flush() on shutdown writes everything queued.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "t5s/model.h"

namespace t5s::cli {
class GenerateRecorder;
}

namespace t5s::serve {

class HistoryWriter {
public:
    HistoryWriter(const std::string& path, const Model& model);  // path "" = records nothing
    ~HistoryWriter();                                            // flushes
    // recipe_json: the recipe that made the results, for their settings JSON ("" = none).
    void record(std::vector<GenerationResult> results, const GenerationOptions& options, double elapsed_ms,
                std::string recipe_json = "");
    void flush();
    bool enabled() const { return recorder_ != nullptr; }

private:
    struct Entry {
        std::vector<GenerationResult> results;
        GenerationOptions options;
        double elapsed_ms = 0;
        std::string recipe_json;
    };
    void run();
    std::unique_ptr<cli::GenerateRecorder> recorder_;
    std::mutex mutex_;
    std::condition_variable wake_, drained_;
    std::deque<Entry> queue_;
    bool stop_ = false, busy_ = false;
    std::thread thread_;
};

}  // namespace t5s::serve
