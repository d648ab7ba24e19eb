#pragma once
// Fused CPU kernels (fp32, bf16) for the decode step, where each ATen op works on a few rows and its
// dispatch and temporaries cost more than its arithmetic: T5's RMS norm (7 ops -> 1) and
// single-query attention (matmul, bias add, softmax, matmul, head merge -> 1). Same formulas and
// the same fp32 accumulation as transformers; only the summation order differs (rounding-level).
#include <ATen/ATen.h>

namespace t5s {

// False when T5S_FUSED_KERNELS=0 (A/B runs, and the op-by-op ctest): every fused CPU kernel
// (these, vocab_kernels.h) is then left out.
bool fused_kernels_enabled();

// x [..., d] fp32 -> weight * (x * rsqrt(mean(x^2) + eps)).
at::Tensor rms_norm_cpu_f32(const at::Tensor& x, const at::Tensor& weight, double eps);

// One query per row: q [B, H, 1, dk], k/v [B / share, H, L, dk] (any strides, last dim
// contiguous; query row b reads k/v row b / share), bias [1, B or B / share, ...] broadcastable
// to [., H, 1, L]. Unscaled scores (T5), softmax in fp32. Returns the heads merged: [B, 1, H * dk].
at::Tensor single_query_attention_cpu_f32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          const at::Tensor& bias);

// The same for bf16 tensors, rounding to bf16 wherever transformers' bf16 ops do (every op
// output), computing in fp32 in between.
at::Tensor rms_norm_cpu_bf16(const at::Tensor& x, const at::Tensor& weight, double eps);
at::Tensor single_query_attention_cpu_bf16(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& bias);

}  // namespace t5s
