#pragma once
// Teacher-forced mean log-probability of each row's labels: the back_score of quality-aware
// generation (t5s/candidate_scores.h).
#include <ATen/ATen.h>

#include <vector>

#include "torch/t5_network.h"

namespace t5s {

// input_ids / attention_mask [B, S]; labels [B, T] padded with -100. Per row: the mean over its
// labels of log p(label | input, labels before it), computed as T5Network::loss computes the loss
// (float32 log-softmax of the logits), so it equals minus that row's loss.
std::vector<double> per_row_mean_log_probs(const T5Network& net, const at::Tensor& input_ids, const at::Tensor& attention_mask,
                                           const at::Tensor& labels);

}  // namespace t5s
