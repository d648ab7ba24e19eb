#pragma once
// train --json: each progress event as a JSON line on stdout, then one object with the run's
// results (the text progress on stderr stays as it is).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/trainer.h"

namespace t5s::cli {

// {"event": "step"|"eval"|"checkpoint"|"finished", ...}; null for the text-only events (plan,
// report, message), which stay on stderr.
nlohmann::json training_event_json(const TrainingEvent& e);

// {"event": "done", "out", "final_model", "best_checkpoint", "checkpoints", "steps", "final_loss",
// "best_eval_loss", "stop_reason", "elapsed_s", "peak_memory_bytes"}; checkpoints: those this run saved.
nlohmann::json training_result_json(const TrainingResult& r, const std::string& out_dir,
                                    const std::vector<std::string>& checkpoints);

}  // namespace t5s::cli
