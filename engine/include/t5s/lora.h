#pragma once
// Which linear layers of a T5 model LoRA can adapt, by PEFT's names, and what an adapter on them
// costs in parameters. Torch-free (the UI and the memory plan use it); the adapter files and the
// math live in the engine (torch/lora.h).
#include <cstdint>
#include <string>
#include <vector>

#include "t5s/model_config.h"

namespace t5s {

struct LoraLinear {
    std::string path;  // HF module path, e.g. "encoder.block.0.layer.0.SelfAttention.q"
    int64_t out = 0, in = 0;
};

// Every linear layer of the blocks (never lm_head), sorted by path.
std::vector<LoraLinear> lora_linear_modules(const ModelConfig& config);
// The short target names this variant has: q k v o, wi or wi_0 wi_1, wo.
std::vector<std::string> lora_target_names(const ModelConfig& config);
// "q,v" / "all-linear" -> target list; a name matching nothing throws InvalidArgument listing the
// valid ones.
std::vector<std::string> parse_lora_targets(const std::string& text, const ModelConfig& config);
// Module paths the targets select, by PEFT's rule (the path equals the name or ends with "." + name;
// "all-linear": all). A target matching nothing throws InvalidArgument naming `where` and the valid names.
std::vector<std::string> lora_module_paths(const ModelConfig& config, const std::vector<std::string>& targets,
                                           const std::string& where);
// r * (in + out) summed over the selected modules.
int64_t lora_trainable_parameters(const ModelConfig& config, int64_t r, const std::vector<std::string>& targets);

}  // namespace t5s
