#pragma once
// Decoding strategies over a T5Network: greedy / sampling (with finished-row compaction) and
// beam search (a port of transformers' vectorised beam search, same sequences and scores).
#include <ATen/ATen.h>

#include <vector>

#include "t5s/generation_options.h"
#include "spans/sentinel_guard.h"
#include "torch/beam_search.h"
#include "torch/t5_network.h"

namespace t5s {

// encoder_hidden [B, S, d], attention_mask [B, S]. Returns, per input row, its candidates. `guard`
// (protected spans, may be null): the sentinels each input must emit exactly once.
std::vector<std::vector<DecodedSequence>> decode_greedy_or_sample(const T5Network& net, const at::Tensor& encoder_hidden,
                                                                  const at::Tensor& attention_mask,
                                                                  const GenerationOptions& options,
                                                                  GenerationControl* control, at::Generator* generator,
                                                                  const spans::SentinelGuard* guard = nullptr);

std::vector<std::vector<DecodedSequence>> decode_beam_search(const T5Network& net, const at::Tensor& encoder_hidden,
                                                             const at::Tensor& attention_mask, const GenerationOptions& options,
                                                             GenerationControl* control, const spans::SentinelGuard* guard = nullptr);

}  // namespace t5s
