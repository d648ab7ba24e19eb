#pragma once
// fp32 decoding on the CPU multiplies a few rows (the running batch) by each weight. This kernel
// holds W^T in panels of 16 columns (K x 16 floats, contiguous) and keeps the running sums in
// AVX2 registers, 1 to 6 rows at a time.
//
// It is batch-invariant: every output element is one fused multiply-add chain over k = 0..K-1, in
// that order, whatever the row count, the row's position in the batch or the thread count. A
// request decoded in a batch of 16 therefore computes bit for bit what it computes alone, which
// is what continuous batching promises (decode/batch_decoder.h). The portable fallback (CPUs
// without AVX2/FMA) runs the same chains with std::fma: the same bits, slowly.
//
// Chosen over MKL's packed sgemm (packed_gemm.h) where the kernel policy says so
// (t5s/kernel_policy.h: Fp32Gemm::Panels, by default on CPUs with AVX2 but not AVX-512): MKL runs
// its generic code path on AMD CPUs.
#include <ATen/ATen.h>

#include <vector>

#include "t5s/kernel_policy.h"

namespace t5s {

// weight [N, K] fp32 CPU -> panels [ceil(N / 16), K, 16] (columns past N zero).
at::Tensor pack_panels(const at::Tensor& weight);
// The panels of at::cat(parts, 0) (parts [N_i, K] fp32 CPU), packed from the parts themselves:
// a fused layer (q|k|v) needs no fused copy of its weights at load.
at::Tensor pack_panels(const std::vector<at::Tensor>& parts);

// x [..., K] fp32 CPU -> x @ weight^T [..., N], with the AVX2/FMA code (isa Avx2: the policy has
// checked that the CPU has it) or the portable std::fma chains (any other isa): the same bits.
at::Tensor panel_linear(const at::Tensor& x, const at::Tensor& panels, int64_t n, KernelIsa isa);
// The same on raw rows: x [rows, K] -> y [rows, n], row-major (the decode step's one pass).
void panel_linear_into(const float* x, int64_t rows, const at::Tensor& panels, int64_t n, KernelIsa isa, float* y);

}  // namespace t5s
