#include "torch/int8_gemm_avx2.h"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "torch/claimed_chunks.h"
#include "torch/int8_gemm.h"

namespace t5s {
namespace {

#define T5S_AVX2 __attribute__((target("avx2,fma")))

constexpr int64_t kLanes = 16;  // output features per column block of the packed weight
constexpr int kPairRows = 2;    // rows per register tile: 2 x 4 accumulators + 4 weight vectors

// a = round(x / s) as int16 with s = max|x| / 127 per row: the VNNI kernel's activations before
// its +128 shift (same max, same product, same rounding), so the int32 sums below equal its
// shifted sums minus its compensation. Padding columns get 0.
T5S_AVX2 void quantize_rows(const float* x, int64_t m, int64_t k, int64_t kp, int16_t* out, float* row_scale) {
    const int64_t full = k - k % 8;
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t r = 0; r < m; ++r) {
        const float* xr = x + r * k;
        __m256 vmax = _mm256_setzero_ps();
        for (int64_t c = 0; c < full; c += 8) vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(xr + c), abs_mask));
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, vmax);
        float amax = 0.0f;
        for (float l : lanes) amax = std::max(amax, l);
        for (int64_t c = full; c < k; ++c) amax = std::max(amax, std::fabs(xr[c]));
        const float s = amax > 0 ? amax / 127.0f : 1.0f;
        row_scale[r] = s;
        const float inv = 1.0f / s;
        const __m256 vinv = _mm256_set1_ps(inv);
        int16_t* o = out + r * kp;
        for (int64_t c = 0; c < full; c += 8) {
            const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xr + c), vinv));
            // packs works within 128-bit lanes: q0-3 land in 64-bit chunk 0, q4-7 in chunk 2.
            const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(q, q), 0x08);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(o + c), _mm256_castsi256_si128(packed));
        }
        for (int64_t c = full; c < k; ++c) o[c] = static_cast<int16_t>(std::nearbyint(xr[c] * inv));
        std::fill(o + k, o + kp, int16_t{0});
    }
}

// One row's 16 outputs of a column block: acc[j] holds columns 4j..4j+3 as two partial sums each.
T5S_AVX2 void store_block(const __m256i acc[4], const float* wscale, float ascale, float* y, int64_t n_left) {
    // hadd pairs the partial sums lane by lane (columns 0,1,4,5 | 2,3,6,7); the permute orders them.
    const __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[0], acc[1]), 0xD8);
    const __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[2], acc[3]), 0xD8);
    const __m256 s = _mm256_set1_ps(ascale);
    // (sum * w_scale) * row_scale: the VNNI kernel's order of the two rounded products.
    const __m256 v0 = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(lo), _mm256_loadu_ps(wscale)), s);
    const __m256 v1 = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(hi), _mm256_loadu_ps(wscale + 8)), s);
    if (n_left >= kLanes) {
        _mm256_storeu_ps(y, v0);
        _mm256_storeu_ps(y + 8, v1);
        return;
    }
    alignas(32) float out[kLanes];
    _mm256_store_ps(out, v0);
    _mm256_store_ps(out + 8, v1);
    std::memcpy(y, out, static_cast<size_t>(n_left) * sizeof(float));
}

// ROWS rows x one 16-column block over the whole of K, reading the block front to back (one
// sequential stream, as the VNNI kernel's block_stream). Each 16 weight bytes (4 columns x 4
// inputs) are sign-extended to int16 once for every row; vpmaddwd sums pairs in int32.
template <int ROWS>
T5S_AVX2 void block_stream(const int16_t* a, int64_t lda, const int8_t* b, int64_t k4, const float* wscale, const float* ascale,
                           float* y, int64_t ldy, int64_t n_left, int8_detail::PanelPrefetch pf) {
    __m256i acc[ROWS][4];
    for (int r = 0; r < ROWS; ++r) {
        for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_si256();
    }
    for (int64_t kk = 0; kk < k4; ++kk) {
        pf.at_step(kk);
        const int8_t* bk = b + kk * 64;
        __m256i w[4];
        for (int j = 0; j < 4; ++j) w[j] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bk + 16 * j)));
        for (int r = 0; r < ROWS; ++r) {
            int64_t four;  // the row's 4 int16 inputs of this group, broadcast to every column
            std::memcpy(&four, a + r * lda + kk * 4, sizeof four);
            const __m256i av = _mm256_set1_epi64x(four);
            for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(w[j], av));
        }
    }
    for (int r = 0; r < ROWS; ++r) store_block(acc[r], wscale, ascale[r], y + r * ldy, n_left);
}

}  // namespace

void int8_linear_avx2(const float* x, int64_t m, const Int8Weight& w, float* y) {
    const int64_t k4 = w.packed.size(1), kp = k4 * 4, blocks = w.packed.size(0), n = w.n;
    // The calling thread's buffers, as plain pointers for the lambda (a worker thread has its own).
    int16_t* const qrows = int8_detail::thread_buffer<int16_t>(m * kp);
    float* const qscale = int8_detail::thread_buffer<float>(m);
    at::parallel_for(0, m, int8_detail::quantize_rows_per_task(w.k), [&](int64_t begin, int64_t end) {
        quantize_rows(x + begin * w.k, end - begin, w.k, kp, qrows + begin * kp, qscale + begin);
    });

    const int8_t* packed = w.packed.data_ptr<int8_t>();
    const float* wscale = w.scale.data_ptr<float>();
    const int64_t chunk = claim_size(blocks, k4 * 64);
    parallel_claimed(blocks, chunk, int8_detail::blocks_per_task(m, kp), [&](int64_t begin, int64_t end) {
        const int64_t pairs = (m + kPairRows - 1) / kPairRows;
        for (int64_t block = begin; block < end; ++block) {
            const int64_t col0 = block * kLanes;
            const int8_t* b = packed + block * k4 * 64;
            const int8_t* next = block + 1 < end ? b + k4 * 64 : nullptr;
            // Row pairs inside: the block's K x 16 bytes stay in cache for every pair (and the
            // pairs after the first prefetch the next block meanwhile).
            for (int64_t r0 = 0; r0 < m; r0 += kPairRows) {
                const auto kernel = m - r0 >= kPairRows ? block_stream<2> : block_stream<1>;
                kernel(qrows + r0 * kp, kp, b, k4, wscale + col0, qscale + r0, y + r0 * n + col0, n, n - col0,
                       int8_detail::next_panel_share(next, k4 * 64, r0 / kPairRows, pairs, k4));
            }
        }
    });
}

}  // namespace t5s
