#pragma once
// Low-rank adapters (LoRA) in PEFT's on-disk format: adapter_config.json + adapter_model.safetensors
// with PEFT's tensor names (`base_model.model.<module>.lora_A.weight`, A [r, in], B [out, r]).
// Reading validates everything PEFT could have written that this engine does not implement; writing
// produces a folder `peft.PeftModel.from_pretrained` loads. The network applies an adapter through
// Linear's LoRA term (T5Network::set_adapter) without touching the base weights.
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "t5s/lora.h"
#include "t5s/model_config.h"

namespace t5s {

struct LoraSettings {
    int64_t r = 8;
    double alpha = 16.0;
    double dropout = 0.05;
    std::vector<std::string> targets{"q", "v"};  // PEFT target_modules; {"all-linear"} for every linear layer
    bool rslora = false;                         // scale alpha / sqrt(r) instead of alpha / r
    std::string base_model;                      // base_model_name_or_path
    double scale() const;
};

struct LoraModule {
    at::Tensor a;  // [r, in]
    at::Tensor b;  // [out, r]
};

struct LoraAdapter {
    LoraSettings settings;
    std::map<std::string, LoraModule> modules;  // HF module path, e.g. "encoder.block.0.layer.0.SelfAttention.q"
    int64_t parameter_count() const;
};

// Reads <dir>/adapter_config.json: PEFT options this engine does not implement -> "unsupported: <key>
// in <file>"; a missing file names the folder.
LoraSettings read_lora_config(const std::filesystem::path& dir);
// Reads and checks a whole adapter against the base's config: tensor names, pairs, shapes (one line
// naming the tensor and both shapes). Tensors come back as fp32 on the CPU.
LoraAdapter load_lora_adapter(const std::filesystem::path& dir, const ModelConfig& config);
// Writes adapter_config.json and adapter_model.safetensors (fp32) into `dir` (created if needed);
// each file atomically.
void save_lora_adapter(const std::filesystem::path& dir, const LoraAdapter& adapter);

// PEFT's initialisation: A Kaiming-uniform (a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in))), B zero;
// modules in sorted path order from one generator seeded with `seed`.
LoraAdapter init_lora_adapter(const ModelConfig& config, const LoraSettings& settings, int64_t seed);

// W + scale * B A for every adapted weight (as PEFT's merge_and_unload), in the weight's dtype.
void merge_lora_into(std::map<std::string, at::Tensor>& params, const LoraAdapter& adapter);

}  // namespace t5s
