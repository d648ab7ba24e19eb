#include "torch/vocab_kernels.h"

#include <immintrin.h>

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <vector>

namespace t5s {
namespace {

#define T5S_AVX512 __attribute__((target("avx512f")))

// exp(x) for x <= 0: x = n ln2 + r, |r| <= ln2/2, exp(r) by its degree-6 Taylor polynomial
// (relative error ~1e-7, fp32 rounding level), times 2^n. Its numbers, shared by the AVX-512 and the
// AVX2 kernel so that both compute the same exp: ln2 in two parts (the high one exact in fp32) and
// the polynomial's coefficients, highest degree first (evaluated by Horner's rule).
constexpr float kLog2e = 1.44269504088896341f, kLn2High = 0.693145751953125f, kLn2Low = 1.428606765330187e-06f;
constexpr float kExpTaylor[] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};

// On 16 lanes; 2^n by scalef.
T5S_AVX512 inline __m512 exp_nonpositive(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));  // below: 0 to fp32 precision of the sum
    const __m512 n =
        _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
    __m512 p = _mm512_set1_ps(kExpTaylor[0]);
    for (size_t i = 1; i < std::size(kExpTaylor); ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpTaylor[i]));
    return _mm512_scalef_ps(p, n);
}

// Pass 2 of both: sum of exp(x - m) over a row.
T5S_AVX512 double sum_exp(const float* x, int64_t v, float m) {
    const int64_t full = v - v % 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (v % 16)) - 1);
    const __m512 vm = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += 16) sum = _mm512_add_ps(sum, exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + c), vm)));
    if (tail)
        sum = _mm512_add_ps(sum,
                            _mm512_maskz_mov_ps(tail, exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), vm))));
    return _mm512_reduce_add_ps(sum);
}

// Pass 1 of both: a row's maximum and the index of its first occurrence (strict > per lane keeps
// the first; across lanes the smallest index holding the maximum). False on NaN / +inf / all -inf.
T5S_AVX512 bool scan_row(const float* x, int64_t v, float* max, int64_t* first) {
    const int64_t full = v - v % 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (v % 16)) - 1);
    const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 best = neg_inf;
    __m512i best_at = _mm512_set1_epi32(0);
    __m512i at = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_set1_epi32(16);
    __mmask16 nan = 0;
    for (int64_t c = 0; c < v; c += 16) {
        const __m512 y = c < full ? _mm512_loadu_ps(x + c) : _mm512_mask_loadu_ps(neg_inf, tail, x + c);
        nan |= _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
        const __mmask16 gt = _mm512_cmp_ps_mask(y, best, _CMP_GT_OQ);
        best = _mm512_mask_blend_ps(gt, best, y);
        best_at = _mm512_mask_blend_epi32(gt, best_at, at);
        at = _mm512_add_epi32(at, step);
    }
    const float m = _mm512_reduce_max_ps(best);
    if (nan || std::isinf(m)) return false;
    *max = m;
    *first = _mm512_mask_reduce_min_epi32(_mm512_cmp_ps_mask(best, _mm512_set1_ps(m), _CMP_EQ_OQ), best_at);
    return true;
}

// x - (m + log sum exp(x - m)), in place.
T5S_AVX512 void log_softmax_row(float* x, int64_t v, float m) {
    const int64_t full = v - v % 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (v % 16)) - 1);
    const __m512 shift = _mm512_set1_ps(static_cast<float>(m + std::log(sum_exp(x, v, m))));
    for (int64_t c = 0; c < full; c += 16) _mm512_storeu_ps(x + c, _mm512_sub_ps(_mm512_loadu_ps(x + c), shift));
    if (tail) _mm512_mask_storeu_ps(x + full, tail, _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), shift));
}

#define T5S_AVX2 __attribute__((target("avx2,fma")))

// The same three passes on AVX2 (8 lanes): exp by the same polynomial, 2^n through the exponent bits.
T5S_AVX2 inline __m256 exp_nonpositive_avx2(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
    __m256 p = _mm256_set1_ps(kExpTaylor[0]);
    for (size_t i = 1; i < std::size(kExpTaylor); ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpTaylor[i]));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));  // n >= -126: 2^n is a normal float
}

T5S_AVX2 inline float horizontal_sum(__m256 v) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, v);
    float s = 0;
    for (float l : lanes) s += l;
    return s;
}

T5S_AVX2 double sum_exp_avx2(const float* x, int64_t v, float m) {
    const int64_t full = v - v % 8;
    const __m256 vm = _mm256_set1_ps(m);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t c = 0; c < full; c += 8)
        sum = _mm256_add_ps(sum, exp_nonpositive_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + c), vm)));
    double total = horizontal_sum(sum);
    for (int64_t c = full; c < v; ++c) total += std::exp(static_cast<double>(x[c] - m));
    return total;
}

T5S_AVX2 bool scan_row_avx2(const float* x, int64_t v, float* max, int64_t* first) {
    const int64_t full = v - v % 8;
    __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256i best_at = _mm256_setzero_si256();
    __m256i at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 nan = _mm256_setzero_ps();
    for (int64_t c = 0; c < full; c += 8) {
        const __m256 y = _mm256_loadu_ps(x + c);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
        const __m256 gt = _mm256_cmp_ps(y, best, _CMP_GT_OQ);
        best = _mm256_blendv_ps(best, y, gt);
        best_at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(best_at), _mm256_castsi256_ps(at), gt));
        at = _mm256_add_epi32(at, _mm256_set1_epi32(8));
    }
    if (_mm256_movemask_ps(nan)) return false;
    alignas(32) float lanes[8];
    alignas(32) int32_t lane_at[8];
    _mm256_store_ps(lanes, best);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lane_at), best_at);
    float m = -std::numeric_limits<float>::infinity();
    int64_t where = 0;
    for (int l = 0; l < 8; ++l) {  // the maximum, at its smallest index across lanes
        if (lanes[l] > m || (lanes[l] == m && lane_at[l] < where)) m = lanes[l], where = lane_at[l];
    }
    for (int64_t c = full; c < v; ++c) {  // the tail: later indices, so only a strictly greater value wins
        if (std::isnan(x[c])) return false;
        if (x[c] > m) m = x[c], where = c;
    }
    if (std::isinf(m)) return false;
    *max = m;
    *first = where;
    return true;
}

T5S_AVX2 void log_softmax_row_avx2(float* x, int64_t v, float m) {
    const int64_t full = v - v % 8;
    const float shift = static_cast<float>(m + std::log(sum_exp_avx2(x, v, m)));
    const __m256 vs = _mm256_set1_ps(shift);
    for (int64_t c = 0; c < full; c += 8) _mm256_storeu_ps(x + c, _mm256_sub_ps(_mm256_loadu_ps(x + c), vs));
    for (int64_t c = full; c < v; ++c) x[c] -= shift;
}

bool scan(KernelIsa isa, const float* x, int64_t v, float* max, int64_t* first) {
    return isa == KernelIsa::Avx512 ? scan_row(x, v, max, first) : scan_row_avx2(x, v, max, first);
}
double exp_sum(KernelIsa isa, const float* x, int64_t v, float m) {
    return isa == KernelIsa::Avx512 ? sum_exp(x, v, m) : sum_exp_avx2(x, v, m);
}
void log_softmax_one(KernelIsa isa, float* x, int64_t v, float m) {
    if (isa == KernelIsa::Avx512) return log_softmax_row(x, v, m);
    log_softmax_row_avx2(x, v, m);
}

bool fits(const at::Tensor& logits, KernelIsa isa) {
    const CpuFeatures& cpu = detect_cpu_features();
    const bool runnable = (isa == KernelIsa::Avx2 && cpu.avx2_fma) || (isa == KernelIsa::Avx512 && cpu.avx512);
    return runnable && logits.is_cpu() && logits.scalar_type() == at::kFloat && logits.dim() == 2 && logits.stride(1) == 1 &&
           logits.size(1) > 0 && logits.size(1) <= std::numeric_limits<int32_t>::max();
}

}  // namespace

bool greedy_pick_cpu(const at::Tensor& logits, at::Tensor& next, at::Tensor& logprob, KernelIsa isa) {
    if (!fits(logits, isa)) return false;
    const int64_t rows = logits.size(0), v = logits.size(1);
    at::Tensor idx = at::empty({rows}, logits.options().dtype(at::kLong));
    at::Tensor lp = at::empty({rows}, logits.options());
    const float* x = logits.data_ptr<float>();
    int64_t* pi = idx.data_ptr<int64_t>();
    float* pl = lp.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * logits.stride(0);
        float m = 0;
        if (!scan(isa, row, v, &m, pi + r)) return false;
        pl[r] = static_cast<float>(-std::log(exp_sum(isa, row, v, m)));  // log-probability of the maximum
    }
    next = idx;
    logprob = lp;
    return true;
}

bool log_softmax_inplace_cpu(at::Tensor& logits, KernelIsa isa) {
    if (!fits(logits, isa)) return false;
    const int64_t rows = logits.size(0), v = logits.size(1), stride = logits.stride(0);
    float* x = logits.data_ptr<float>();
    // Every row's maximum first, so that a refusal leaves the tensor untouched.
    std::vector<float> max(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        int64_t unused = 0;
        if (!scan(isa, x + r * stride, v, &max[static_cast<size_t>(r)], &unused)) return false;
    }
    for (int64_t r = 0; r < rows; ++r) log_softmax_one(isa, x + r * stride, v, max[static_cast<size_t>(r)]);
    return true;
}

}  // namespace t5s
