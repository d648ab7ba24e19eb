#include "torch/int8_gemm.h"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "t5s/error.h"
#include "torch/claimed_chunks.h"
#include "torch/int8_gemm_avx2.h"

namespace t5s {
namespace {

constexpr int64_t kLanes = 16;      // int32 sums per zmm register: output features per block
constexpr int kMaxRows = 4;         // rows per register tile
constexpr int kMaxBlocks = 4;       // column blocks per register tile (64 outputs)
constexpr int kStreamMaxRows = 4;   // up to here each column block is one sequential stream (block_stream)
constexpr int64_t kKChunk = 64;     // input features per AMX tile row: K is padded to this
constexpr int64_t kAmxMinRows = 2;  // from here AMX beats VNNI (t5s_int8_bench: 2x at 4 rows)

#define T5S_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define T5S_AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vnni")))

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// u8 = round(x / s) + 128 with s = max|x| / 127 per row; padding columns get 128 (value 0).
T5S_VNNI void quantize_rows(const float* x, int64_t m, int64_t k, int64_t kp, uint8_t* out, float* row_scale) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (k % kLanes)) - 1);
    const int64_t full = k - k % kLanes;
    for (int64_t r = 0; r < m; ++r) {
        const float* xr = x + r * k;
        __m512 vmax = _mm512_setzero_ps();
        for (int64_t c = 0; c < full; c += kLanes) vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_loadu_ps(xr + c)));
        if (tail) vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail, xr + full)));
        const float amax = _mm512_reduce_max_ps(vmax);
        const float s = amax > 0 ? amax / 127.0f : 1.0f;
        row_scale[r] = s;
        const __m512 inv = _mm512_set1_ps(1.0f / s);
        const __m512i shift = _mm512_set1_epi32(128);
        uint8_t* o = out + r * kp;
        for (int64_t c = 0; c < full; c += kLanes) {
            const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xr + c), inv)), shift);
            _mm512_mask_cvtusepi32_storeu_epi8(o + c, 0xFFFF, q);
        }
        if (tail) {
            const __m512i q =
                _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(tail, xr + full), inv)), shift);
            _mm512_mask_cvtusepi32_storeu_epi8(o + full, tail, q);
        }
        std::memset(o + k, 128, static_cast<size_t>(kp - k));
    }
}

// Which of a 16-column block's outputs exist (`left` columns remain from its first).
inline __mmask16 column_mask(int64_t left) {
    return left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// y = (acc - comp) * w_scale * row_scale: int32 sums back to fp32 for one row of one block.
T5S_VNNI inline void store_scaled(__m512i acc, __m512i comp, __m512 wscale, float ascale, float* y, __mmask16 mask) {
    const __m512 v =
        _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, comp)), wscale), _mm512_set1_ps(ascale));
    _mm512_mask_storeu_ps(y, mask, v);
}

using int8_detail::PanelPrefetch;

// ROWS x BLOCKS register tile: y[r][16*j + lane] for the tile's rows and column blocks, over the
// whole of K. Each weight vector loaded is used for every row of the tile.
template <int ROWS, int BLOCKS>
T5S_VNNI void tile(const uint8_t* a, int64_t lda, const int8_t* b, int64_t k4, const int32_t* comp, const float* wscale,
                   const float* ascale, float* y, int64_t ldy, int64_t n_left, PanelPrefetch pf) {
    __m512i acc[ROWS][BLOCKS];
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r) {
#pragma GCC unroll 4
        for (int j = 0; j < BLOCKS; ++j) acc[r][j] = _mm512_setzero_si512();
    }
    const int64_t block_stride = k4 * 64;  // bytes from one column block to the next
    for (int64_t kk = 0; kk < k4; ++kk) {
        pf.at_step(kk);
        __m512i bv[BLOCKS];
#pragma GCC unroll 4
        for (int j = 0; j < BLOCKS; ++j) bv[j] = _mm512_loadu_si512(b + j * block_stride + kk * 64);
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; ++r) {
            int32_t four;
            std::memcpy(&four, a + r * lda + kk * 4, sizeof four);
            const __m512i av = _mm512_set1_epi32(four);
#pragma GCC unroll 4
            for (int j = 0; j < BLOCKS; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], av, bv[j]);
        }
    }
#pragma GCC unroll 4
    for (int j = 0; j < BLOCKS; ++j) {
        const __m512i c = _mm512_loadu_si512(comp + j * kLanes);
        const __m512 ws = _mm512_loadu_ps(wscale + j * kLanes);
        const __mmask16 mask = column_mask(n_left - j * kLanes);
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; ++r) store_scaled(acc[r][j], c, ws, ascale[r], y + r * ldy + j * kLanes, mask);
    }
}

// ROWS rows x one 16-column block over the whole of K, reading the block's K/4 x 64 bytes front to
// back. With few rows each weight byte feeds too little arithmetic to hide the four interleaved
// streams (8 KB apart) of a 4-block tile: at 1 row, t5-small's decoder and head (38.5 MB) took
// 1.2-1.6x less time read as one sequential stream per block (1.20 vs 1.56 ms on one Zen 4 core,
// 0.59 vs 0.74 ms on two; 4 rows: 1.15-1.2x). Even and odd k groups sum into
// separate registers so that the dpbusd chains overlap; int32 sums are exact, so splitting
// them changes no result. k4 is even: K is padded to a multiple of 64.
template <int ROWS>
T5S_VNNI void block_stream(const uint8_t* a, int64_t lda, const int8_t* b, int64_t k4, const int32_t* comp, const float* wscale,
                           const float* ascale, float* y, int64_t ldy, int64_t n_left) {
    __m512i even[ROWS], odd[ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r) even[r] = odd[r] = _mm512_setzero_si512();
    for (int64_t kk = 0; kk < k4; kk += 2) {
        const __m512i b0 = _mm512_loadu_si512(b + kk * 64), b1 = _mm512_loadu_si512(b + kk * 64 + 64);
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; ++r) {
            int32_t four[2];
            std::memcpy(four, a + r * lda + kk * 4, sizeof four);
            even[r] = _mm512_dpbusd_epi32(even[r], _mm512_set1_epi32(four[0]), b0);
            odd[r] = _mm512_dpbusd_epi32(odd[r], _mm512_set1_epi32(four[1]), b1);
        }
    }
    const __m512i c = _mm512_loadu_si512(comp);
    const __m512 ws = _mm512_loadu_ps(wscale);
    const __mmask16 mask = column_mask(n_left);
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r) store_scaled(_mm512_add_epi32(even[r], odd[r]), c, ws, ascale[r], y + r * ldy, mask);
}

using TileFn = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*, const float*, const float*, float*,
                        int64_t, int64_t);
using PanelTileFn = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*, const float*, const float*, float*,
                             int64_t, int64_t, PanelPrefetch);

template <int ROWS, int... B>
constexpr std::array<PanelTileFn, kMaxBlocks> tiles_for_rows(std::integer_sequence<int, B...>) {
    return {&tile<ROWS, B + 1>...};
}

const std::array<std::array<PanelTileFn, kMaxBlocks>, kMaxRows>& tile_table() {
    static const std::array<std::array<PanelTileFn, kMaxBlocks>, kMaxRows> table = {
        tiles_for_rows<1>(std::make_integer_sequence<int, kMaxBlocks>{}),
        tiles_for_rows<2>(std::make_integer_sequence<int, kMaxBlocks>{}),
        tiles_for_rows<3>(std::make_integer_sequence<int, kMaxBlocks>{}),
        tiles_for_rows<4>(std::make_integer_sequence<int, kMaxBlocks>{}),
    };
    return table;
}

// ---- AMX: 16-row x 64-byte tiles; TDPBUSD multiplies a u8 A tile by an s8 B tile laid out
// exactly as one column block of the packed weight (16 rows of K/4 groups), so the packed
// weight serves both kernels.

struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// Tiles: C[a][b] = tmm(2a + b), A[a] = tmm(4 + a), B[b] = tmm(6 + b).
T5S_AMX void configure_amx(int rows0, int rows1) {
    TileConfig c;
    for (int t : {0, 1, 4}) c.rows[t] = static_cast<uint8_t>(rows0), c.colsb[t] = 64;
    if (rows1 > 0) {
        for (int t : {2, 3, 5}) c.rows[t] = static_cast<uint8_t>(rows1), c.colsb[t] = 64;
    }
    for (int t : {6, 7}) c.rows[t] = 16, c.colsb[t] = 64;
    _tile_loadconfig(&c);
}

// Up to 32 rows x 32 columns over the whole of K into acc [32][32] int32.
template <bool TWO_A, bool TWO_B>
T5S_AMX void amx_tile(const uint8_t* a, int64_t lda, const int8_t* b, int64_t block_stride, int64_t chunks, int32_t* acc) {
    _tile_zero(0);
    if (TWO_B) _tile_zero(1);
    if (TWO_A) _tile_zero(2);
    if (TWO_A && TWO_B) _tile_zero(3);
    for (int64_t c = 0; c < chunks; ++c) {
        _tile_loadd(4, a + c * kKChunk, lda);
        if (TWO_A) _tile_loadd(5, a + 16 * lda + c * kKChunk, lda);
        _tile_loadd(6, b + c * 16 * 64, 64);
        if (TWO_B) _tile_loadd(7, b + block_stride + c * 16 * 64, 64);
        _tile_dpbusd(0, 4, 6);
        if (TWO_B) _tile_dpbusd(1, 4, 7);
        if (TWO_A) _tile_dpbusd(2, 5, 6);
        if (TWO_A && TWO_B) _tile_dpbusd(3, 5, 7);
    }
    constexpr int64_t ld = 32 * 4;
    _tile_stored(0, acc, ld);
    if (TWO_B) _tile_stored(1, acc + 16, ld);
    if (TWO_A) _tile_stored(2, acc + 16 * 32, ld);
    if (TWO_A && TWO_B) _tile_stored(3, acc + 16 * 32 + 16, ld);
}

// y = (acc - comp) * w_scale * row_scale for `rows` rows and `blocks` column blocks.
T5S_VNNI void rescale(const int32_t* acc, int rows, int blocks, const int32_t* comp, const float* wscale, const float* ascale,
                      float* y, int64_t ldy, int64_t n_left) {
    for (int j = 0; j < blocks; ++j) {
        const __m512i c = _mm512_loadu_si512(comp + j * kLanes);
        const __m512 ws = _mm512_loadu_ps(wscale + j * kLanes);
        const __mmask16 mask = column_mask(n_left - j * kLanes);
        for (int r = 0; r < rows; ++r) {
            store_scaled(_mm512_loadu_si512(acc + r * 32 + j * kLanes), c, ws, ascale[r], y + r * ldy + j * kLanes, mask);
        }
    }
}

// Column pairs [begin, end) of blocks, every row: configure once per row-tile shape.
T5S_AMX void amx_columns(int64_t begin, int64_t end, int64_t blocks, const uint8_t* qa, int64_t m, int64_t kp,
                         const int8_t* packed, int64_t k4, const int32_t* comp, const float* wscale, const float* ascale,
                         float* out, int64_t n) {
    alignas(64) int32_t acc[32 * 32];
    const int64_t block_stride = k4 * 64, chunks = kp / kKChunk;
    int configured0 = -1, configured1 = -1;
    for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t block0 = pair * 2;
        const bool two_b = block0 + 1 < blocks;
        const int64_t col0 = block0 * kLanes;
        const int8_t* b = packed + block0 * block_stride;
        for (int64_t r0 = 0; r0 < m; r0 += 32) {
            const int rows0 = static_cast<int>(std::min<int64_t>(16, m - r0));
            const int rows1 = static_cast<int>(std::clamp<int64_t>(m - r0 - 16, 0, 16));
            if (rows0 != configured0 || rows1 != configured1)
                configure_amx(rows0, rows1), configured0 = rows0, configured1 = rows1;
            const uint8_t* a = qa + r0 * kp;
            if (rows1 > 0 && two_b) amx_tile<true, true>(a, kp, b, block_stride, chunks, acc);
            else if (rows1 > 0) amx_tile<true, false>(a, kp, b, block_stride, chunks, acc);
            else if (two_b) amx_tile<false, true>(a, kp, b, block_stride, chunks, acc);
            else amx_tile<false, false>(a, kp, b, block_stride, chunks, acc);
            rescale(acc, rows0 + rows1, two_b ? 2 : 1, comp + col0, wscale + col0, ascale + r0, out + r0 * n + col0, n, n - col0);
        }
    }
    _tile_release();
}

// One VNNI product's operands, as int8_linear prepared them: quantised rows [m, kp], their scales,
// the packed weight and y [m, n].
struct VnniProduct {
    const uint8_t* qa;
    const float* ascale;
    int64_t m, kp, k4, blocks, n;
    const int8_t* packed;
    const int32_t* comp;
    const float* wscale;
    float* y;
};

int64_t blocks_per_task(const VnniProduct& g) { return int8_detail::blocks_per_task(g.m, g.kp); }

// Up to kStreamMaxRows rows: every row at once, block by block (block_stream).
void vnni_block_streams(const VnniProduct& g) {
    static const std::array<TileFn, kStreamMaxRows> kernels = {block_stream<1>, block_stream<2>, block_stream<3>,
                                                               block_stream<4>};
    const TileFn kernel = kernels[g.m - 1];
    const int64_t chunk = claim_size(g.blocks, g.k4 * 64);
    parallel_claimed(g.blocks, chunk, blocks_per_task(g), [&](int64_t begin, int64_t end) {
        for (int64_t block = begin; block < end; ++block) {
            const int64_t col0 = block * kLanes;
            kernel(g.qa, g.kp, g.packed + block * g.k4 * 64, g.k4, g.comp + col0, g.wscale + col0, g.ascale, g.y + col0, g.n,
                   g.n - col0);
        }
    });
}

// More rows: 4-row x 4-block register tiles, so that each weight vector loaded serves 4 rows.
// A tile's row groups after the first prefetch the task's next tile, so that its weights come
// from memory while this tile computes from cache: without it only the first row group streamed
// (t5s_int8_bench --stream base: the step's GEMMs 1.27x faster with it at 8 rows, 1.29x at 16).
void vnni_tiles(const VnniProduct& g) {
    const auto& table = tile_table();
    const int64_t tiles = (g.blocks + kMaxBlocks - 1) / kMaxBlocks;
    const int64_t grain = std::max<int64_t>(1, blocks_per_task(g) / kMaxBlocks);
    const int64_t groups = (g.m + kMaxRows - 1) / kMaxRows, tile_bytes = kMaxBlocks * g.k4 * 64;
    // Claimed chunks (claimed_chunks.h): a thread that the VM slows leaves its last chunks to the
    // other. A thread takes its share front to back, so its next tile is almost always its own.
    parallel_claimed(tiles, even_claim_size(tiles), grain, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t block0 = t * kMaxBlocks;
            const int nb = static_cast<int>(std::min<int64_t>(kMaxBlocks, g.blocks - block0));
            const int64_t col0 = block0 * kLanes;
            const int8_t* b = g.packed + block0 * g.k4 * 64;
            const int8_t* next = t + 1 < tiles ? b + tile_bytes : nullptr;
            const int64_t next_bytes = std::min<int64_t>(kMaxBlocks, g.blocks - block0 - kMaxBlocks) * g.k4 * 64;
            // Rows inside: the tile's weights (K x 64 bytes) stay in cache for every row.
            for (int64_t r0 = 0; r0 < g.m; r0 += kMaxRows) {
                const int rows = static_cast<int>(std::min<int64_t>(kMaxRows, g.m - r0));
                table[rows - 1][nb - 1](g.qa + r0 * g.kp, g.kp, b, g.k4, g.comp + col0, g.wscale + col0, g.ascale + r0,
                                        g.y + r0 * g.n + col0, g.n, g.n - col0,
                                        int8_detail::next_panel_share(next, next_bytes, r0 / kMaxRows, groups, g.k4));
            }
        }
    });
}

// Per-row int8 on the CPU: plain loops the compiler vectorises (ATen's amin along rows took 11%
// of an int8 load).
__attribute__((target_clones("avx512f", "avx2", "default"))) float row_abs_max(const float* x, int64_t n) {
    // 16 independent lanes: vectorises without reassociating a single running maximum.
    float lane[16] = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int j = 0; j < 16; ++j) {
            const float a = std::fabs(x[i + j]);
            lane[j] = a > lane[j] ? a : lane[j];
        }
    }
    float m = 0.0f;
    for (; i < n; ++i) m = std::fabs(x[i]) > m ? std::fabs(x[i]) : m;
    for (float l : lane) m = l > m ? l : m;
    return m;
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void round_row_int8(const float* x, int64_t n, float scale,
                                                                                 int8_t* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
}
// 128 x each row's sum in int32, what the +128 shift of the u8 activations adds to every product.
// A loop, because at::sum with an int32 result converts the whole weight to int32 first: a
// temporary 4x the int8 weight (measured: a 256 MB int8 tensor raised peak RSS by 1 GB; so the
// t5-small head's 16 MB would take 66 MB).
at::Tensor shifted_row_sums(const at::Tensor& q) {
    const int64_t n = q.size(0), k = q.size(1);
    at::Tensor sums = at::empty({n}, q.options().dtype(at::kInt));
    const int8_t* rows = q.data_ptr<int8_t>();
    int32_t* out = sums.data_ptr<int32_t>();
    at::parallel_for(0, n, 256, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            int32_t sum = 0;
            for (int64_t i = 0; i < k; ++i) sum += rows[r * k + i];
            out[r] = sum * 128;
        }
    });
    return sums;
}

bool cpu_rows(const at::Tensor& w) { return w.is_cpu() && w.scalar_type() == at::kFloat && w.dim() == 2 && w.is_contiguous(); }

}  // namespace

Int8Rows quantize_int8_rows(const at::Tensor& w) {
    Int8Rows r;
    r.q = at::empty(w.sizes(), w.options().dtype(at::kChar));
    if (cpu_rows(w)) {
        // Scale and round each row while it is in cache: one pass over the weight.
        r.scale = at::empty({w.size(0), 1}, w.options());
        const float* x = w.data_ptr<float>();
        float* s = r.scale.data_ptr<float>();
        int8_t* q = r.q.data_ptr<int8_t>();
        const int64_t k = w.size(1);
        at::parallel_for(0, w.size(0), 64, [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
                s[row] = std::max(row_abs_max(x + row * k, k) / 127.0f, 1e-8f);
                round_row_int8(x + row * k, k, s[row], q + row * k);
            }
        });
        return r;
    }
    // max(max x, -min x): no |w| temporary; rounding in row blocks, so the temporaries stay small
    // (whole-table ones put t5-small's int8 load peak 200 MB higher).
    r.scale = (at::maximum(w.amax({1}, true), -w.amin({1}, true)) / 127.0).clamp_min(1e-8);
    constexpr int64_t kRows = 1024;
    for (int64_t row = 0; row < w.size(0); row += kRows) {
        const int64_t n = std::min(kRows, w.size(0) - row);
        r.q.narrow(0, row, n).copy_(at::round(w.narrow(0, row, n) / r.scale.narrow(0, row, n)).clamp_(-127, 127));
    }
    return r;
}

int64_t Int8Weight::bytes() const {
    if (!defined()) return 0;
    return packed.numel() + scale.numel() * 4 + comp.numel() * 4;
}

Int8Weight pack_int8_weight(const at::Tensor& q, const at::Tensor& scale) {
    if (q.dim() != 2 || q.scalar_type() != at::kChar || !q.is_cpu()) {
        throw Error(ErrorCode::Internal, "pack_int8_weight: expected a 2-D int8 CPU tensor");
    }
    Int8Weight w;
    w.n = q.size(0), w.k = q.size(1);
    const int64_t np = round_up(w.n, kLanes), kp = round_up(w.k, kKChunk);
    // No copy when the shape needs no padding (T5's layers: multiples of 64 and 16).
    const at::Tensor padded =
        (kp == w.k && np == w.n) ? q.contiguous() : at::constant_pad_nd(q.contiguous(), {0, kp - w.k, 0, np - w.n}, 0);
    // [np/16, 16, kp/4, 4] -> [np/16, kp/4, 16, 4]: one 64-byte vector per (block, 4 inputs).
    w.packed = padded.view({np / kLanes, kLanes, kp / 4, 4}).permute({0, 2, 1, 3}).contiguous();
    w.comp = shifted_row_sums(padded);
    w.scale = at::constant_pad_nd(scale.reshape({-1}).to(at::kFloat), {0, np - w.n}, 0).contiguous();
    return w;
}

namespace {

// The policy was checked against the CPU; a hand-made one must still not reach an illegal instruction.
// FBGEMM and the rows path have their own forms.
void require_packed_kernel(Int8Kernel kernel) {
    if (!multiplies_packed_int8(kernel) || !cpu_runs_int8_kernel(kernel, detect_cpu_features())) {
        throw Error(ErrorCode::Internal, "int8_linear: this CPU cannot run the int8 kernel asked for");
    }
}

void multiply_int8(const float* x, int64_t m, const Int8Weight& w, Int8Kernel kernel, float* out) {
    if (m == 0) return;
    if (kernel == Int8Kernel::Avx2) {
        int8_linear_avx2(x, m, w, out);
        return;
    }
    const int64_t k4 = w.packed.size(1), kp = k4 * 4;
    // The calling thread's buffers, as plain pointers for the lambdas (a worker thread has its own).
    uint8_t* const qrows = int8_detail::thread_buffer<uint8_t>(m * kp);
    float* const qscale = int8_detail::thread_buffer<float>(m);
    at::parallel_for(0, m, int8_detail::quantize_rows_per_task(w.k), [&](int64_t begin, int64_t end) {
        quantize_rows(x + begin * w.k, end - begin, w.k, kp, qrows + begin * kp, qscale + begin);
    });

    const int64_t blocks = w.packed.size(0);
    const int8_t* packed = w.packed.data_ptr<int8_t>();
    const int32_t* comp = w.comp.data_ptr<int32_t>();
    const float* wscale = w.scale.data_ptr<float>();
    if (m >= kAmxMinRows && kernel == Int8Kernel::Amx) {
        // Column pairs; each task configures the tiles of the thread it runs on.
        const int64_t pairs = (blocks + 1) / 2;
        const int64_t pair_grain = std::max<int64_t>(1, (int64_t{1} << 20) / (m * kp * 2 * kLanes));
        at::parallel_for(0, pairs, pair_grain, [&](int64_t begin, int64_t end) {
            amx_columns(begin, end, blocks, qrows, m, kp, packed, k4, comp, wscale, qscale, out, w.n);
        });
        return;
    }
    const VnniProduct g{qrows, qscale, m, kp, k4, blocks, w.n, packed, comp, wscale, out};
    if (m <= kStreamMaxRows) vnni_block_streams(g);
    else vnni_tiles(g);
}

}  // namespace

at::Tensor int8_linear(const at::Tensor& x, const Int8Weight& w, Int8Kernel kernel) {
    require_packed_kernel(kernel);
    if (!x.is_cpu() || x.scalar_type() != at::kFloat || x.size(-1) != w.k) {
        throw Error(ErrorCode::Internal, "int8_linear: expected fp32 CPU input with " + std::to_string(w.k) + " features");
    }
    // Rows of K in memory, y allocated in its final shape: no reshape/view calls (a decode step
    // makes some 40 of these calls).
    const at::Tensor x2 = x.contiguous();
    std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
    out_shape.back() = w.n;
    at::Tensor y = at::empty(out_shape, x.options());
    multiply_int8(x2.data_ptr<float>(), x2.numel() / w.k, w, kernel, y.data_ptr<float>());
    return y;
}

void int8_linear_into(const float* x, int64_t rows, const Int8Weight& w, Int8Kernel kernel, float* y) {
    require_packed_kernel(kernel);
    multiply_int8(x, rows, w, kernel, y);
}

}  // namespace t5s
