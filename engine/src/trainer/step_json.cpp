// The measurements a training step's log line and `train --json` event share (t5s/training_step_json.h).
#include "t5s/training_step_json.h"

namespace t5s {

nlohmann::json training_step_json(const TrainingEvent& e) {
    return {{"step", e.step},
            {"epoch", e.epoch},
            {"loss", e.loss},
            {"lr", e.lr},
            {"grad_norm", e.grad_norm},
            {"tokens_per_s", e.tokens_per_s},
            {"memory_bytes", e.memory_bytes},
            {"elapsed_s", e.elapsed_s}};
}

}  // namespace t5s
