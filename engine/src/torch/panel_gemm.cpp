#include "torch/panel_gemm.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "torch/claimed_chunks.h"
#include "torch/page_prefault.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define T5S_PANEL_AVX2 1
#define T5S_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define T5S_PANEL_AVX2 0
#endif

namespace t5s {
namespace {

constexpr int64_t kPanel = 16;  // columns per panel: two 8-float AVX2 registers
constexpr int64_t kMaxBlockRows = 6;

struct Product {
    const float* x = nullptr;  // [m, k]
    const float* w = nullptr;  // panels [ceil(n / 16), k, 16]
    float* y = nullptr;        // [m, n]
    int64_t m = 0, k = 0, n = 0;
    const float* panel(int64_t p) const { return w + p * k * kPanel; }
};

// Writes one panel's 16 sums of a row, cutting the zero columns past n off the last panel.
inline void store_row(const Product& g, int64_t row, int64_t p, const float* sums) {
    const int64_t c0 = p * kPanel, cols = std::min(kPanel, g.n - c0);
    std::memcpy(g.y + row * g.n + c0, sums, static_cast<size_t>(cols) * sizeof(float));
}

// Panels a block of `rows` rows takes at once: the sums (rows x panels x 2 registers) stay within
// 12 of the 16 AVX2 registers, and one row alone still has 8 independent FMA chains.
int64_t panels_per_tile(int64_t rows) { return rows >= 4 ? 1 : rows == 3 ? 2 : rows == 2 ? 3 : 4; }

#if T5S_PANEL_AVX2
// rows [r0, r0 + R) x panels [p0, p0 + P): one FMA chain per output element, k ascending.
template <int R, int P>
T5S_AVX2_FMA void tile_avx2(const Product& g, int64_t r0, int64_t p0) {
    // Every loop over R and P is unrolled, so that acc lives in registers only.
    __m256 acc[R][P][2];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) acc[r][p][0] = acc[r][p][1] = _mm256_setzero_ps();
    const float* x = g.x + r0 * g.k;
    const float* b = g.panel(p0);
    const int64_t panel_stride = g.k * kPanel;
    for (int64_t kk = 0; kk < g.k; ++kk, b += kPanel) {
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
            // From 4 rows the FMAs outlast the loads: fetch the next tile's panel (one cache line
            // per k) meanwhile, since a decoder's weights come from memory, not cache, at every
            // step. With fewer rows the loads dominate and an extra stream only competes.
            // Prefetching past the last panel is harmless.
            if constexpr (R >= 4) _mm_prefetch(reinterpret_cast<const char*>(b + (P + p) * panel_stride), _MM_HINT_T0);
            const __m256 lo = _mm256_loadu_ps(b + p * panel_stride), hi = _mm256_loadu_ps(b + p * panel_stride + 8);
#pragma GCC unroll 6
            for (int r = 0; r < R; ++r) {
                const __m256 a = _mm256_broadcast_ss(x + r * g.k + kk);
                acc[r][p][0] = _mm256_fmadd_ps(a, lo, acc[r][p][0]);
                acc[r][p][1] = _mm256_fmadd_ps(a, hi, acc[r][p][1]);
            }
        }
    }
    alignas(32) float sums[kPanel];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
            _mm256_store_ps(sums, acc[r][p][0]);
            _mm256_store_ps(sums + 8, acc[r][p][1]);
            store_row(g, r0 + r, p0 + p, sums);
        }
}

using Tile = void (*)(const Product&, int64_t, int64_t);

// The instantiated shapes: [rows - 1][panels - 1], as far as panels_per_tile(rows) allows.
Tile tile_for(int64_t rows, int64_t panels) {
    static const Tile table[kMaxBlockRows][4] = {
        {tile_avx2<1, 1>, tile_avx2<1, 2>, tile_avx2<1, 3>, tile_avx2<1, 4>},
        {tile_avx2<2, 1>, tile_avx2<2, 2>, tile_avx2<2, 3>, nullptr},
        {tile_avx2<3, 1>, tile_avx2<3, 2>, nullptr, nullptr},
        {tile_avx2<4, 1>, nullptr, nullptr, nullptr},
        {tile_avx2<5, 1>, nullptr, nullptr, nullptr},
        {tile_avx2<6, 1>, nullptr, nullptr, nullptr},
    };
    return table[rows - 1][panels - 1];
}
#endif

// The portable fallback: the same chains (std::fma is the single-rounding FMA the AVX2 path uses).
void rows_portable(const Product& g, int64_t r0, int64_t rows, int64_t p0, int64_t panels) {
    float sums[kPanel];
    for (int64_t r = r0; r < r0 + rows; ++r)
        for (int64_t p = p0; p < p0 + panels; ++p) {
            const float* x = g.x + r * g.k;
            const float* b = g.panel(p);
            for (int64_t c = 0; c < kPanel; ++c) {
                float acc = 0.0f;
                for (int64_t kk = 0; kk < g.k; ++kk) acc = std::fma(x[kk], b[kk * kPanel + c], acc);
                sums[c] = acc;
            }
            store_row(g, r, p, sums);
        }
}

// Row blocks of at most 6 rows, as even as possible (16 rows: 6, 5, 5), so that no block is left
// with a row or two whose few FMA chains would wait on each other.
struct RowBlocks {
    int64_t count = 0, base = 0, larger = 0;  // `larger` blocks of base + 1 rows come first
    RowBlocks(int64_t m) : count((m + kMaxBlockRows - 1) / kMaxBlockRows), base(m / count), larger(m % count) {}
    int64_t rows(int64_t i) const { return base + (i < larger ? 1 : 0); }
    int64_t start(int64_t i) const { return i * base + std::min(i, larger); }
    int64_t widest() const { return base + (larger ? 1 : 0); }
};

// Panels [p_begin, p_end) of every row: a step's panels stay in cache while each row block uses them.
void run_panels(const Product& g, const RowBlocks& blocks, int64_t step, int64_t p_begin, int64_t p_end, bool avx2) {
    for (int64_t p = p_begin; p < p_end; p += step) {
        const int64_t panels = std::min(step, p_end - p);
        for (int64_t b = 0; b < blocks.count; ++b) {
            const int64_t r0 = blocks.start(b), rows = blocks.rows(b);
#if T5S_PANEL_AVX2
            if (avx2) {
                const int64_t per_tile = panels_per_tile(rows);
                for (int64_t q = p; q < p + panels; q += per_tile) tile_for(rows, std::min(per_tile, p + panels - q))(g, r0, q);
                continue;
            }
#endif
            (void)avx2;
            rows_portable(g, r0, rows, p, panels);
        }
    }
}

void multiply(const float* x, int64_t m, const at::Tensor& panels, int64_t n, bool avx2, float* y) {
    const int64_t k = panels.size(1);
    Product g{x, panels.data_ptr<float>(), y, m, k, n};
    if (g.m == 0) return;
    const RowBlocks blocks(g.m);
    const int64_t step = panels_per_tile(blocks.widest());
    const int64_t units = (panels.size(0) + step - 1) / step;
    // Threads split the columns only, never k: the sums' order does not depend on the thread count.
    const int64_t work_per_unit = g.m * k * kPanel * step;
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 17) / work_per_unit);
    const int64_t chunk = claim_size(units, k * kPanel * step * static_cast<int64_t>(sizeof(float)));
    parallel_claimed(units, chunk, grain, [&](int64_t u0, int64_t u1) {
        run_panels(g, blocks, step, u0 * step, std::min(u1 * step, panels.size(0)), avx2);
    });
}

// panel[kk * 16 + c] = rows[c][kk] (0 where rows[c] is null), 16 values of k at a time: each
// source row is read a cache line at a time and each panel line written whole.
void transpose_into_panel(const float* const* rows, int64_t k, float* panel) {
    constexpr int64_t kBlock = 16;
    for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
        const int64_t width = std::min(kBlock, k - k0);
        float block[kPanel][kBlock];
        for (int64_t c = 0; c < kPanel; ++c) {
            if (rows[c]) std::memcpy(block[c], rows[c] + k0, static_cast<size_t>(width) * sizeof(float));
            else std::fill(block[c], block[c] + width, 0.0f);
        }
        for (int64_t j = 0; j < width; ++j)
            for (int64_t c = 0; c < kPanel; ++c) panel[(k0 + j) * kPanel + c] = block[c][j];
    }
}

}  // namespace

at::Tensor pack_panels(const at::Tensor& weight) { return pack_panels(std::vector<at::Tensor>{weight}); }

at::Tensor pack_panels(const std::vector<at::Tensor>& parts) {
    TORCH_CHECK(!parts.empty(), "pack_panels: no weight");
    const int64_t k = parts[0].dim() == 2 ? parts[0].size(1) : -1;
    std::vector<at::Tensor> held;  // contiguous (a mapped or loaded weight already is: no copy)
    std::vector<const float*> data;
    std::vector<int64_t> first_row{0};
    for (const at::Tensor& w : parts) {
        TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kFloat && w.is_cpu() && w.size(1) == k,
                    "pack_panels: fp32 CPU [N, K] weights with one K");
        held.push_back(w.contiguous());
        data.push_back(held.back().data_ptr<float>());
        first_row.push_back(first_row.back() + w.size(0));
    }
    const int64_t n = first_row.back(), count = (n + kPanel - 1) / kPanel;
    // Straight into the result from the parts: neither a fused nor a padded copy beside it (the
    // head: 66 MB for t5-small, 1 GB for mT5-large; q|k|v: three weights).
    at::Tensor panels = at::empty({count, k, kPanel}, parts[0].options());
    float* out = panels.data_ptr<float>();
    at::parallel_for(0, count, 16, [&](int64_t begin, int64_t end) {
        prefault_for_writing(out + begin * k * kPanel, static_cast<size_t>((end - begin) * k * kPanel) * sizeof(float));
        for (int64_t p = begin; p < end; ++p) {
            const float* rows[kPanel];  // this panel's source rows; nullptr past n (zero columns)
            for (int64_t c = 0; c < kPanel; ++c) {
                const int64_t r = p * kPanel + c;
                if (r >= n) {
                    rows[c] = nullptr;
                    continue;
                }
                const size_t part = std::upper_bound(first_row.begin(), first_row.end(), r) - first_row.begin() - 1;
                rows[c] = data[part] + (r - first_row[part]) * k;
            }
            transpose_into_panel(rows, k, out + p * k * kPanel);
        }
    });
    return panels;
}

at::Tensor panel_linear(const at::Tensor& x_in, const at::Tensor& panels, int64_t n, KernelIsa isa) {
    TORCH_CHECK(x_in.scalar_type() == at::kFloat && x_in.is_cpu(), "panel_linear: fp32 CPU input expected");
    const at::Tensor x = x_in.contiguous();
    const int64_t k = panels.size(1);
    TORCH_CHECK(x.size(-1) == k && panels.size(0) * kPanel >= n, "panel_linear: shapes do not match");
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = n;
    at::Tensor y = at::empty(shape, x.options());
    panel_linear_into(x.data_ptr<float>(), x.numel() / k, panels, n, isa, y.data_ptr<float>());
    return y;
}

void panel_linear_into(const float* x, int64_t rows, const at::Tensor& panels, int64_t n, KernelIsa isa, float* y) {
    multiply(x, rows, panels, n, isa == KernelIsa::Avx2 && detect_cpu_features().avx2_fma, y);
}

}  // namespace t5s
