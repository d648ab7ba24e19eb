#pragma once
// The Model panel's CPU-kernel lines, from the engine's model info (t5s/kernel_policy.h chose them;
// `t5studio info` prints the same): plain strings, so the panel only draws them.
#include <string>
#include <utility>
#include <vector>

#include "t5s/model.h"

namespace t5s::ui {

// (label, value) rows: the CPU class (with the detected one where a switch lowered it), the
// decoder's matmul form, then each kernel choice. Empty when the info carries no policy.
std::vector<std::pair<std::string, std::string>> cpu_kernel_rows(const ModelInfo& info);

}  // namespace t5s::ui
