#pragma once
// Shared output helpers for the subcommands: JSON on stdout with --json, readable text otherwise.
#include <nlohmann/json.hpp>
#include <string>

#include "t5s/device.h"
#include "t5s/model.h"

namespace t5s::cli {

void print_json(const nlohmann::json& j);
nlohmann::json to_json(const ModelInfo& info);
nlohmann::json profile_json(const DeviceProfile& profile);
// dtype may be "auto" (measured default for the device).
RuntimeOptions runtime_from_flags(const std::string& device, const std::string& dtype, int threads);
// --adapter DIR: a LoRA adapter folder (PEFT format) applied on load; empty: none.
inline RuntimeOptions with_adapter(RuntimeOptions o, const std::string& dir) {
    o.adapter = dir;
    return o;
}

}  // namespace t5s::cli
