#pragma once
// Reads the tensors of a Hugging Face checkpoint folder: model.safetensors, sharded safetensors
// (model.safetensors.index.json), pytorch_model.bin or sharded .bin (pytorch_model.bin.index.json).
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "t5s/model_config.h"

namespace t5s {

struct LoadedWeights {
    std::map<std::string, at::Tensor> tensors;  // CPU, as stored
    std::vector<std::string> files;             // files actually read
    std::string stored_dtypes;                  // e.g. "F32" or "BF16" or "F16+F32"
};

// How safetensors weights are held. Copied: tensors of their own (training writes them in place).
// Mapped: read-only views of the file's mapping where the bytes are aligned (torch/mapped_tensor.h),
// copies elsewhere and for pytorch_model.bin; for inference, which never writes a weight.
enum class WeightStorage { Copied, Mapped };

// Integer/boolean buffers known by name (position_ids, token_type_ids, attention masks,
// *.num_batches_tracked) are skipped; any other non-float tensor is a t5s::Error(Unsupported)
// naming it and its file.
LoadedWeights load_checkpoint_tensors(const std::filesystem::path& dir, WeightStorage storage = WeightStorage::Copied);

// HF parameter names and shapes the config implies; tied aliases resolved (shared.weight is the
// source of encoder/decoder embed_tokens and, when tied, lm_head). Throws t5s::Error naming the
// file and tensor on a missing tensor or a shape mismatch.
std::map<std::string, at::Tensor> select_t5_parameters(LoadedWeights& loaded, const ModelConfig& config,
                                                       const std::string& where);

// name -> expected shape for every parameter of a T5ForConditionalGeneration with this config.
std::vector<std::pair<std::string, std::vector<int64_t>>> t5_parameter_shapes(const ModelConfig& config);

}  // namespace t5s
