#pragma once
// Training ops whose backward keeps less than ATen's own.
//
// frozen_linear: x W^T for a frozen weight held compactly (bf16 / fp16, or int8 with per-row scales): the weight is
// dequantised to the input's dtype for the product only, and autograd keeps neither that fp32 copy
// nor the input. Backward gives the input's gradient, grad_y · dequant(W), dequantising again; the
// weight gets none (it is frozen). This is what lets a LoRA base stay at half or a quarter of its
// fp32 size while the adapters train.
#include <ATen/ATen.h>

namespace t5s {

// values: [out, in] bf16 / fp16 (row_scale undefined) or int8 (row_scale [out, 1]).
at::Tensor frozen_linear(const at::Tensor& x, const at::Tensor& values, const at::Tensor& row_scale);

// The LoRA term scale · B(A · dropout(x)) in training, keeping the input (often shared: q and v read
// the same normed x; every layer's cross-attention reads the same encoder output) and the bool
// dropout mask instead of the dropped-out copy; backward recomputes it. Same mask (native_dropout)
// and the same values as the plain ops.
at::Tensor lora_term_keeping_input(const at::Tensor& x, const at::Tensor& a, const at::Tensor& b, double scale, double dropout);

// relu(x) whose backward keeps a bool mask (x > 0) instead of the float output: a quarter of the
// bytes; the same values and gradients as at::relu.
at::Tensor relu_keeping_mask(const at::Tensor& x);

}  // namespace t5s
