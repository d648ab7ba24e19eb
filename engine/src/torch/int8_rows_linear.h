#pragma once
// The int8 linear layer off our CPU kernels: on CUDA, and on the CPU as its twin (T5S_INT8_KERNEL=rows).
// Activations are quantised per row to symmetric int8 at each call (scale max|x_row| / 127, round
// half to even), multiplied by the int8 weight with int32 sums by at::_int_mm (cuBLASLt on CUDA),
// then rescaled once per output by the two scales. No dequantised copy of the weight is made: a
// call's extra memory is the int8 activations and the int32 product, not a layer's weight.
#include <ATen/ATen.h>

#include "torch/int8_gemm.h"

namespace t5s {

// x: [..., K] float (fp32/bf16/fp16) on the weight's device -> [..., N] in x's dtype. w.q: int8
// [N, K], w.scale: [N, 1]. Layers whose K or N is not a multiple of 8 (the int32 product's
// alignment on CUDA) dequantise the one layer instead; T5's are multiples of 64.
at::Tensor int8_rows_linear(const at::Tensor& x, const Int8Rows& w);

// The activation half alone, for tests: x2d [M, K] float -> int8 [M, K] and fp32 scales [M, 1].
Int8Rows quantize_activation_rows(const at::Tensor& x2d);

}  // namespace t5s
