#pragma once
// Test double for the engine-thread tests: a deterministic Model with no weights that steps like a
// decoder (on_step, cancel, live_settings) so the mechanics can be tested fast and exactly.
#include <filesystem>
#include <memory>

#include "t5s/model.h"

namespace t5s {

std::unique_ptr<Model> make_fake_model(const std::filesystem::path& dir, const RuntimeOptions& options, int step_delay_ms = 2);

}  // namespace t5s
