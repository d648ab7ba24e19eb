#pragma once
// transformers' logits processors that bias, suppress or force given tokens, each a small function
// on a batch of scores [N, V] (float32) given the decoder sequences so far [N, L] (start token
// included). `length` is L: transformers' cur_len, where the first generated position has L = 1.
// process_logits (decode/logits_processors.h) applies them in transformers' order; tested against
// transformers' own classes (tests/test_generation_controls.cpp).
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

#include "t5s/generation_options.h"

namespace t5s {

// HF SequenceBiasLogitsProcessor: a one-token entry's bias goes to its token in every row; a longer
// entry's to its last token in the rows that end with the rest of it. Throws InvalidArgument on an
// id outside the vocabulary (transformers' ValueError).
void apply_sequence_bias(at::Tensor& scores, const at::Tensor& sequences, const SequenceBias& bias);
// HF SuppressTokensLogitsProcessor: the tokens get -inf (ids outside the vocabulary are ignored).
void apply_suppress_tokens(at::Tensor& scores, const TokenIds& tokens);
// HF SuppressTokensAtBeginLogitsProcessor: the same where length == begin_index (transformers'
// begin index for an encoder-decoder: 1, or 2 when forced_bos_token_id takes the first position).
void apply_begin_suppress_tokens(at::Tensor& scores, int64_t length, int64_t begin_index, const TokenIds& tokens);
int64_t begin_suppress_index(const GenerationOptions& options);
// HF ForcedBOSTokenLogitsProcessor: at length 1 every score is -inf but `id`'s, which is 0 (-1: off).
void apply_forced_bos(at::Tensor& scores, int64_t length, int id);
// HF ForcedEOSTokenLogitsProcessor: at length max_length - 1 (max_length counts the start token)
// every score is -inf but those of `ids`, which are 0.
void apply_forced_eos(at::Tensor& scores, int64_t length, int64_t max_length, const TokenIds& ids);
// HF ExponentialDecayLengthPenalty (input length 1): once length > start_index + 1, </s>'s score
// s becomes s + |s| * (decay_factor^(length - start_index - 1) - 1).
void apply_length_decay(at::Tensor& scores, int64_t length, const std::optional<LengthDecay>& decay, int64_t eos_id);
// HF LogitNormalization (renormalize_logits): a log-softmax, the last processor of all.
void apply_renormalize(at::Tensor& scores, bool renormalize);
// An id of these settings outside [0, vocab): a one-line message naming the field, else "".
std::string token_settings_outside_vocab(const GenerationOptions& options, int64_t vocab);

}  // namespace t5s
