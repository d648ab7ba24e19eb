#pragma once
// Per-step work over the vocabulary on the CPU (AVX-512 or AVX2), for fp32 logits [rows, vocab]:
// - greedy's pick: the first maximum of each row and its log-probability (logit - logsumexp).
//   ATen needs max(dim), then log_softmax (a full [rows, vocab] output) and a gather: at batch
//   32 and t5-small's 32k vocabulary that was 3.5 ms of a 20 ms step. Here: two passes, no
//   temporaries.
// - beam search's log-softmax, in place (the logits are the step's own tensor): no second
//   [rows, vocab] tensor per step.
#include <ATen/ATen.h>

#include "t5s/kernel_policy.h"

namespace t5s {

// logits: fp32 CPU [rows, vocab], last dim contiguous. On success sets next (int64 [rows]) and
// logprob (fp32 [rows]) and returns true. `isa` is the kernel policy's choice (KernelPolicy::vocab:
// Avx512 or Avx2, checked against the CPU there). Returns false, touching nothing, when isa is Off
// (or Portable), or a row holds a NaN or +inf or only -inf: the caller then takes ATen's path,
// which defines those cases.
bool greedy_pick_cpu(const at::Tensor& logits, at::Tensor& next, at::Tensor& logprob, KernelIsa isa);

// logits <- log_softmax(logits, -1), in place. Same conditions and fallback as above (false:
// logits untouched).
bool log_softmax_inplace_cpu(at::Tensor& logits, KernelIsa isa);

}  // namespace t5s
