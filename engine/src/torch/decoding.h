#pragma once
// Decoding strategies over a T5Network: greedy / sampling (with finished-row compaction) and
// beam search (a port of transformers' vectorised beam search, same sequences and scores).
#include <ATen/ATen.h>

#include <vector>

#include "t5s/generation_options.h"
#include "torch/beam_search.h"
#include "torch/t5_network.h"

namespace t5s {

// encoder_hidden [B, S, d], attention_mask [B, S]. Returns, per input row, its candidates.
std::vector<std::vector<DecodedSequence>> decode_greedy_or_sample(const T5Network& net, const at::Tensor& encoder_hidden,
                                                                  const at::Tensor& attention_mask,
                                                                  const GenerationOptions& options,
                                                                  GenerationControl* control, at::Generator* generator);

std::vector<std::vector<DecodedSequence>> decode_beam_search(const T5Network& net, const at::Tensor& encoder_hidden,
                                                             const at::Tensor& attention_mask, const GenerationOptions& options,
                                                             GenerationControl* control);

}  // namespace t5s
