#pragma once
// fp32 decoding on the CPU multiplies a handful of rows by each weight. MKL's sgemm re-packs the
// whole weight into its blocked layout on every such call, which costs as much as the multiply
// (t5-small at batch 8: the 32128x512 head took 9 ms, 4.5 ms of it packing). Packing once at load
// (cblas_sgemm_pack / cblas_sgemm_compute) removes that.
//
// The MKL inside the PyPI LibTorch exports these functions; they are looked up at run time, so
// a LibTorch without MKL (Debian's) simply keeps at::linear. The packed layout is MKL's own: a
// weight packed in this process is only valid in this process.
#include <ATen/ATen.h>

#include "t5s/kernel_policy.h"

namespace t5s {

// The kernel policy's verdict on a weight (KernelPolicy::packing, T5S_PACKED_GEMM), whatever the
// kernel: not Off, and large enough (Auto: at least 512x512) or every size (All).
bool packing_wanted(const at::Tensor& weight, WeightPacking mode);
bool packing_wanted(int64_t elements, WeightPacking mode);  // a weight of that many elements

// True when this LibTorch's MKL offers packed sgemm (and the self-check passed): what the library
// can do, found once; whether to pack is the policy's question.
bool packed_gemm_available();

// weight [N, K] fp32 CPU -> MKL's packed form of weight^T (opaque bytes). Undefined tensor when
// packing is unavailable or the packed product does not match at::linear on a probe.
at::Tensor pack_linear_weight(const at::Tensor& weight);

// x [..., K] fp32 CPU -> x @ weight^T [..., N], with `packed` from pack_linear_weight.
at::Tensor packed_linear(const at::Tensor& x, const at::Tensor& packed, int64_t n, int64_t k);
// The same on raw rows: x [rows, k] -> y [rows, n], row-major (the decode step's one pass).
void packed_linear_into(const float* x, int64_t rows, const at::Tensor& packed, int64_t n, int64_t k, float* y);

// bf16 on the CPU: oneDNN's blocked weight layout, reordered once (torch's mkldnn ops, which
// at::linear also ends in, minus the per-call reorder). t5-small, 8 rows, 1 thread: 1.4-2.3x
// faster per layer, bit-identical from 2 rows (1 row: rounding-level differences, ~10% slower).
// Undefined tensor when this LibTorch lacks the ops or the weight is not 2-D bf16 on the CPU.
at::Tensor pack_linear_weight_bf16(const at::Tensor& weight);
at::Tensor packed_linear_bf16(const at::Tensor& x, const at::Tensor& packed);

}  // namespace t5s
