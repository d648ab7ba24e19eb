#pragma once
// int8 matmul for CPU decoding with AVX512-VNNI, the scheme CTranslate2 uses: int8 weights with
// one scale per output row, activations quantised per row to 8 bits at each call (shifted by 128
// to unsigned, the operand form vpdpbusd multiplies), int32 sums, one fp32 rescale per output.
//
// Why our own: LibTorch reaches int8 only through FBGEMM (fast at 1 row, slow at 8-32) and
// oneDNN (the reverse), and keeping both forms doubles the weights. Decoding multiplies 1-32
// rows by each weight; this kernel streams each weight once for all rows.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "t5s/kernel_policy.h"

namespace t5s {

// One int8 linear layer in the VNNI layout: blocks of 16 output features, 4 consecutive input
// features per 32-bit lane ([ceil(N/16), K/4, 16, 4] int8, K zero-padded to a multiple of 64).
// A column block's 16 x 64-byte rows are also an AMX B tile, so one copy serves both kernels.
struct Int8Weight {
    at::Tensor packed;
    at::Tensor scale;  // fp32 [N rounded up to 16]: weight row scales, 0 in the padding
    at::Tensor comp;   // int32 [N rounded up to 16]: 128 * sum_k w[n][k], undoes the activation shift
    int64_t n = 0, k = 0;
    bool defined() const { return packed.defined(); }
    int64_t bytes() const;
};

// Symmetric per-row int8 (every int8 form: this kernel, FBGEMM, CUDA, the embedding table):
// scale [rows, 1] = max(max|w_row| / 127, 1e-8); q = clamp(round(w / scale), -127, 127), rounding
// half to even. Any device; the CPU fp32 case is one pass over the weight.
struct Int8Rows {
    at::Tensor q;      // int8, w's shape
    at::Tensor scale;  // w's dtype, [rows, 1]
};
Int8Rows quantize_int8_rows(const at::Tensor& w);

// q: int8 [N, K], symmetric with per-row scale [N] or [N, 1] -> the packed form.
Int8Weight pack_int8_weight(const at::Tensor& q, const at::Tensor& scale);

// x: fp32 CPU [..., K] -> fp32 [..., N]. Each row of x is quantised with its own scale
// max|x_row| / 127 (round to nearest even). `kernel` is Vnni, Amx (AMX tiles from 2 rows, VNNI
// below) or Avx2 (int8_gemm_avx2.h) as the kernel policy chose it (t5s/kernel_policy.h: it checked
// that the CPU has them; Fbgemm and Rows are refused). All three give identical results: they sum
// the same int32 products exactly.
at::Tensor int8_linear(const at::Tensor& x, const Int8Weight& w, Int8Kernel kernel);
// Whether `kernel` multiplies this packed layout (Vnni, Amx, Avx2); FBGEMM and the rows path have forms of their own.
inline bool multiplies_packed_int8(Int8Kernel kernel) { return kernel != Int8Kernel::Fbgemm && kernel != Int8Kernel::Rows; }
// The same product on raw rows: x [rows, w.k] -> y [rows, w.n], row-major fp32 (the decode step's
// one pass, t5_step_cpu.cpp).
void int8_linear_into(const float* x, int64_t rows, const Int8Weight& w, Int8Kernel kernel, float* y);

// Shared by the packed-weight kernels (int8_gemm.cpp, int8_gemm_avx2.cpp).
namespace int8_detail {

// Column blocks of 16 outputs per parallel task over `rows` rows of `kp` (padded K) inputs:
// enough work per task that waking a thread pays off (about 256k multiply-adds).
inline int64_t blocks_per_task(int64_t rows, int64_t kp) { return std::max<int64_t>(1, (int64_t{1} << 18) / (rows * kp * 16)); }

// n elements reused per calling thread and element type: no allocation per layer in the decode loop.
template <class T>
T* thread_buffer(int64_t n) {
    thread_local std::vector<T> buffer;
    if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
    return buffer.data();
}

// Rows per parallel task when quantising activations of `k` values a row: some 32k values a task,
// so the encoder's rows (1024 x 3072 at batch 32) are split over the threads while a decode step's
// few rows stay on the calling thread. Each row is quantised whole by one thread: the same bits.
inline int64_t quantize_rows_per_task(int64_t k) { return std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(k, 1)); }

// Weight lines a kernel call prefetches into L2 for a later call, spread over its K loop (a
// burst would stall the loop on the memory queue).
struct PanelPrefetch {
    const int8_t* from = nullptr;
    int64_t lines = 0;     // 64-byte lines from `from`
    int64_t per_step = 0;  // lines per step of the K loop

    // The step's lines: `kk` the K loop's step.
    void at_step(int64_t kk) const {
        for (int64_t line = kk * per_step, last = std::min(line + per_step, lines); line < last; ++line)
            __builtin_prefetch(from + line * 64, 0, 2);  // read, into L2
    }
};

// The share of the next weight panel (`next_bytes` from `next`; null: none) that row group
// `group` of `groups` prefetches over its `k4` steps. Row group 0 reads this panel from memory;
// the later ones find it in cache, so they bring in the next panel meanwhile (at most 8 lines a step).
inline PanelPrefetch next_panel_share(const int8_t* next, int64_t next_bytes, int64_t group, int64_t groups, int64_t k4) {
    constexpr int64_t kMaxPrefetchPerStep = 8;
    if (!next || group == 0 || groups < 2 || next_bytes <= 0) return {};
    const int64_t lines = next_bytes / 64, share = (lines + groups - 2) / (groups - 1);
    const int64_t first = (group - 1) * share, count = std::min(share, lines - first);
    if (count <= 0) return {};
    return {next + first * 64, count, std::min(kMaxPrefetchPerStep, (count + k4 - 1) / k4)};
}

}  // namespace int8_detail

}  // namespace t5s
