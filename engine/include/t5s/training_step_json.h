#pragma once
// A training step's measurements as JSON: the fields that the run folder's train_log.jsonl (written by the
// trainer) and `train --json`'s "step" events (app/cli) both carry. One builder, so that the two
// cannot drift apart; each caller adds its own fields (nlohmann::json sorts the keys on output, so
// where they are added does not change the line).
#include <nlohmann/json.hpp>

#include "t5s/trainer.h"

namespace t5s {

// {"step", "epoch", "loss", "lr", "grad_norm", "tokens_per_s", "memory_bytes", "elapsed_s"} of a
// Step event.
nlohmann::json training_step_json(const TrainingEvent& e);

}  // namespace t5s
