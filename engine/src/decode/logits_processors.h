#pragma once
// Logits processors and samplers with transformers' semantics, each a small function on a batch
// of scores [N, V] (float32) given the decoder sequences so far [N, L] (start token included).
// Tested on synthetic logits without a model (tests/test_logits_processors.cpp).
#include <ATen/ATen.h>

#include <vector>

#include "spans/sentinel_guard.h"
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
// The three warpers of `options`, in that order.
void apply_warpers(at::Tensor& scores, const GenerationOptions& options);

// The sampling warpers computed on the top-k candidates only, instead of masking the whole
// vocabulary: `scores` [N, V] has had the penalties applied. On success `ids` [N, k] and `warped`
// [N, k] hold the candidates and their warped scores, whose softmax is exactly the softmax of the
// full-vocabulary path restricted to its non-zero entries. Returns false (outputs untouched) when
// top-k is off or covers the vocabulary, or when a tie at the k-th score would keep more than k
// tokens (apply_top_k keeps every tie); the caller then takes the full-vocabulary path.
bool warp_top_k_candidates(const at::Tensor& scores, const GenerationOptions& options, at::Tensor* ids, at::Tensor* warped);

// One token per row drawn from the warped distribution of `scores` [N, V] (penalties already
// applied; on the full-vocabulary path the warpers are applied to `scores` in place). Returns the
// tokens [N]; *logprob gets their log-probabilities under that distribution.
at::Tensor sample_tokens(at::Tensor& scores, const GenerationOptions& options, at::Generator& generator, at::Tensor* logprob);

// at::topk(scores, k) (largest, sorted): a one-pass heap per row for contiguous float CPU scores
// [N, V] when the top k+1 values of every row are distinct (the result is then unique); at::topk
// itself otherwise, so that ties keep its order. Used by beam search.
std::tuple<at::Tensor, at::Tensor> topk_distinct_fast(const at::Tensor& scores, int64_t k);

// Protected spans (spans/sentinel_guard.h): row r must emit each sentinel of *row_required[r]
// (nullptr or empty: none) exactly once, in any order; every other sentinel of `range` is banned,
// </s> is banned while one remains and its score goes to the owed sentinels (each keeps the larger
// of its own and </s>'s: where the model would end, it places a span), and the next one is forced
// (all other scores -inf) when only as many steps are left. Applied after the other processors,
// before the warpers.
void apply_sentinel_guard(at::Tensor& scores, const at::Tensor& sequences, const std::vector<const std::vector<int>*>& row_required,
                          spans::SentinelRange range, int max_new_tokens, int64_t eos_id);

// All processors of `options` in HF's order (penalties; then warpers when sampling).
void process_logits(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& options, int64_t eos_id,
                    bool include_warpers);

}  // namespace t5s
