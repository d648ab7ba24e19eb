#pragma once
// Logits processors and samplers with transformers' semantics, each a small function on a batch
// of scores [N, V] (float32) given the decoder sequences so far [N, L] (start token included).
// Tested on synthetic logits without a model (tests/test_logits_processors.cpp).
#include <ATen/ATen.h>

#include "t5s/generation_options.h"

namespace t5s {

// HF RepetitionPenaltyLogitsProcessor: scores of tokens already in `sequences` are divided by
// `penalty` if positive, multiplied if negative.
void apply_repetition_penalty(at::Tensor& scores, const at::Tensor& sequences, float penalty);
// HF NoRepeatNGramLogitsProcessor: bans tokens that would repeat an n-gram of the sequence.
void apply_no_repeat_ngram(at::Tensor& scores, const at::Tensor& sequences, int ngram_size);
// HF MinNewTokensLengthLogitsProcessor: </s> forbidden until `min_new_tokens` tokens exist.
void apply_min_new_tokens(at::Tensor& scores, int64_t new_tokens, int min_new_tokens, int64_t eos_id);
// Warpers (sampling only), in HF's order: temperature, top-k, top-p.
void apply_temperature(at::Tensor& scores, float temperature);
void apply_top_k(at::Tensor& scores, int top_k);
void apply_top_p(at::Tensor& scores, float top_p);

// All processors of `options` in HF's order (penalties; then warpers when sampling).
void process_logits(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& options, int64_t eos_id,
                    bool include_warpers);

}  // namespace t5s
