#pragma once
// Records a training run and its curve in the history database while it runs (`train --history`,
// the app's training jobs on the model lane, learning rounds).
// Points are buffered and flushed at least every second and at each eval, checkpoint and end, so a
// run cut off by closing the app keeps its curve. A history that fails to write never stops the
// training: recording is switched off and the reason kept in error().
#include <chrono>
#include <string>
#include <vector>

#include "t5s/history_store.h"
#include "t5s/trainer.h"

namespace t5s {

class TrainingRecorder {
public:
    // history may be null (no recording). continue_run > 0 reopens that run instead of a new one.
    TrainingRecorder(HistoryStore* history, int64_t continue_run, const TrainingOptions& options);
    int64_t run_id() const { return run_; }
    const std::string& error() const { return error_; }

    void on_event(const TrainingEvent& event);
    void finished(const std::string& stop_reason, const std::string& final_dir, const std::string& summary);
    void failed(const std::string& message);

private:
    void flush();
    template <class F>
    void guarded(F&& f);

    HistoryStore* history_;
    int64_t run_ = 0;
    int64_t total_steps_ = 0;
    std::vector<TrainingPoint> pending_;
    std::chrono::steady_clock::time_point last_flush_;
    std::string error_;
};

// Writes the accepted/edited (source, target) pairs of the history to OUT/history-pairs.jsonl
// (deduplicated; result.path, result.rows_written); InvalidArgument when there are none.
ExportResult export_history_pairs(HistoryStore& history, const std::string& out_dir);

}  // namespace t5s
