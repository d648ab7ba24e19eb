#pragma once
// Limits checked before a generation allocates anything ("huge inputs"): the source
// length, and an up-front estimate of the peak bytes a batch needs against the memory free now.
// Torch-free: the arithmetic is tested in test_core.
#include <cstdint>
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/model_config.h"

namespace t5s {

// Longest source accepted when neither the request nor the config says: the model_max_length
// transformers' T5 tokenizers use.
constexpr int64_t kDefaultMaxSourceTokens = 512;

// options.max_source_tokens if set (> 0), else the config's n_positions if it has one, else
// kDefaultMaxSourceTokens. Tokens are counted with the </s> the tokenizer appends.
int64_t source_token_limit(const ModelConfig& config, const GenerationOptions& options);

// Throws t5s::Error(InvalidArgument) naming the first input (1-based) longer than the limit.
void check_source_lengths(const std::vector<std::vector<int>>& input_ids, const ModelConfig& config,
                          const GenerationOptions& options);

// Peak bytes one batch of `inputs` sources of `source_tokens` tokens needs to generate with
// `options` at `element_bytes` per activation (4 fp32, 2 bf16/fp16): decoder self-attention cache
// and its position-bias table (both grow with max_new_tokens), cross-attention K/V, the encoder's
// attention scores (quadratic in the source), per-step logits. An estimate, in double so that
// absurd settings cannot overflow.
double estimate_generation_bytes(const ModelConfig& config, int64_t inputs, int64_t source_tokens,
                                 const GenerationOptions& options, int64_t element_bytes);

// Throws t5s::Error(OutOfMemory) "generation would need about X GB but only Y GB are free on
// <device>; ..." when the estimate exceeds `available_bytes` (skipped when that is unknown, <= 0).
void check_generation_memory(const ModelConfig& config, int64_t inputs, int64_t source_tokens, const GenerationOptions& options,
                             int64_t element_bytes, int64_t available_bytes, const std::string& device);

}  // namespace t5s
