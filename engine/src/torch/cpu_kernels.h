#pragma once
// Fused CPU kernels (fp32, bf16) for the decode step, where each ATen op works on a few rows and its
// dispatch and temporaries cost more than its arithmetic: T5's RMS norm (7 ops -> 1) and
// single-query attention (matmul, bias add, softmax, matmul, head merge -> 1). Same formulas and
// the same fp32 accumulation as transformers; only the summation order differs (rounding-level).
// Each takes the instruction set the kernel policy chose (KernelPolicy::step: Avx512, Avx2 or
// Portable; Off is the caller's business: it then runs ATen op by op).
#include <ATen/ATen.h>

#include "t5s/kernel_policy.h"

namespace t5s {

// x [..., d] fp32 -> weight * (x * rsqrt(mean(x^2) + eps)).
at::Tensor rms_norm_cpu_f32(const at::Tensor& x, const at::Tensor& weight, double eps, KernelIsa isa);
// The residual add and the norm after it: sum = h + y, returns rms_norm_cpu_f32(sum, ...), the same
// bits as at::add then that kernel. `sum` is (re)allocated unless it is a contiguous tensor of h's
// shape; it may be h itself (the add is then in place).
at::Tensor residual_rms_norm_cpu_f32(const at::Tensor& h, const at::Tensor& y, at::Tensor& sum, const at::Tensor& weight,
                                     double eps, KernelIsa isa);

// One query per row: q [B, H, 1, dk], k/v [B / share, H, L, dk] (any strides, last dim
// contiguous; query row b reads k/v row b / share), bias [1, B or B / share, ...] broadcastable
// to [., H, 1, L]. With kv_rows (host, [B] long) query row b reads k/v row kv_rows[b] instead, and
// bias has one row per k/v row (or 1). Unscaled scores (T5), softmax in fp32. Returns the heads
// merged: [B, 1, H * dk].
at::Tensor single_query_attention_cpu_f32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                                          KernelIsa isa, const at::Tensor& kv_rows = {});

// The same for bf16 tensors, rounding to bf16 wherever transformers' bf16 ops do (every op
// output), computing in fp32 in between.
at::Tensor rms_norm_cpu_bf16(const at::Tensor& x, const at::Tensor& weight, double eps, KernelIsa isa);
at::Tensor single_query_attention_cpu_bf16(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                                           KernelIsa isa, const at::Tensor& kv_rows = {});

// Raw forms for the decode step's one pass over its own buffers (t5_step_cpu.cpp): no tensors, no
// allocation, no ATen dispatch; each computes exactly what its tensor form above computes.
//
// Single-query attention's operands, strides in elements: q[b * q_row + h * q_head + c],
// k[kb * k_row + h * k_head + j * k_pos + c] (v alike), bias[br * bias_row + h * bias_head + j * bias_pos]
// for query row b, head h, key j, where kb = kv_row ? kv_row[b] : b / share and br is b's bias row
// (bias_rows: 1, one per query row group, or one per K/V row with kv_row). out [rows, heads * d_kv].
template <typename T>
struct SingleQuery {
    const T* q = nullptr;
    int64_t q_row = 0, q_head = 0;
    const T* k = nullptr;
    int64_t k_row = 0, k_head = 0, k_pos = 0;
    const T* v = nullptr;
    int64_t v_row = 0, v_head = 0, v_pos = 0;
    const T* bias = nullptr;
    int64_t bias_row = 0, bias_head = 0, bias_pos = 0, bias_rows = 1;
    const int64_t* kv_row = nullptr;
    int64_t share = 1;
    int64_t rows = 0, heads = 0, keys = 0, d_kv = 0;
    T* out = nullptr;
};
void single_query_attention_f32(const SingleQuery<float>& a, KernelIsa isa);
// rows x d, row-major: out = rms_norm(x); the residual form adds y into h in place first.
void rms_norm_rows_f32(const float* x, const float* weight, int64_t rows, int64_t d, double eps, KernelIsa isa, float* out);
void residual_rms_norm_rows_f32(float* h, const float* y, const float* weight, int64_t rows, int64_t d, double eps, KernelIsa isa,
                                float* out);

// The decode step's new K or V into a contiguous CPU cache [B, H, capacity, d_kv] at position t:
// cache[b, h, t, :] = the d_kv values at src + b * row_stride + h * head_stride (strides in
// elements of the cache's type), one memcpy per (row, head). A TensorIterator copy_ was charged
// 1.1 ms per step at t5-small batch 32 for these 12 calls (t5s_profile).
void write_cache_position(const at::Tensor& cache, int64_t t, const void* src, int64_t row_stride, int64_t head_stride);

}  // namespace t5s
