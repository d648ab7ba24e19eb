#include "torch/cpu_kernels.h"

#include <ATen/Parallel.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "torch/claimed_chunks.h"

namespace t5s {
namespace {

constexpr int kLanes = 16;  // independent partial sums: vectorisable without reassociation flags

using bf16 = c10::BFloat16;

// The vector primitives' bodies, compiled into one copy per instruction set below: inlined into a
// function built for a wider target they vectorise for it.
#define T5S_INLINE inline __attribute__((always_inline))
T5S_INLINE float dot_body(const float* a, const float* b, int64_t n) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
    float s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}
T5S_INLINE void axpy_body(float alpha, const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
// dot_body(a, b_r, n) for 4 rows b_r = b + r * stride at once, n a multiple of kLanes, each row's
// sums in dot_body's order (so its bits): the lane sums of the 4 rows interleave instead of
// waiting on each other, and a is read once for all 4.
T5S_INLINE void dot4_body(const float* a, const float* b, int64_t stride, int64_t n, float* out) {
    float acc0[kLanes] = {}, acc1[kLanes] = {}, acc2[kLanes] = {}, acc3[kLanes] = {};
    const float *b0 = b, *b1 = b + stride, *b2 = b + 2 * stride, *b3 = b + 3 * stride;
    for (int64_t i = 0; i < n; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const float x = a[i + l];
            acc0[l] += x * b0[i + l];
            acc1[l] += x * b1[i + l];
            acc2[l] += x * b2[i + l];
            acc3[l] += x * b3[i + l];
        }
    }
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int l = 0; l < kLanes; ++l) {
        s0 += acc0[l];
        s1 += acc1[l];
        s2 += acc2[l];
        s3 += acc3[l];
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}
// out[c] = sum_j w[j] * v[j * stride + c], j in order from 0: the bits of zeroing out and
// axpy_body(w[j], row j, out) for each row, with each 64 outputs kept in registers over the rows
// (the same per-element expression); the last n % 64 outputs are exactly that, axpy_body row by row.
T5S_INLINE void weighted_rows_body(const float* w, const float* v, int64_t stride, int64_t rows, float* out, int64_t n) {
    constexpr int64_t kChunk = 4 * kLanes;
    int64_t c = 0;
    for (; c + kChunk <= n; c += kChunk) {
        float acc[kChunk] = {};
        for (int64_t j = 0; j < rows; ++j)
            for (int64_t i = 0; i < kChunk; ++i) acc[i] += w[j] * v[j * stride + c + i];
        for (int64_t i = 0; i < kChunk; ++i) out[c + i] = acc[i];
    }
    std::fill(out + c, out + n, 0.0f);
    for (int64_t j = 0; j < rows; ++j) axpy_body(w[j], v + j * stride + c, out + c, n - c);
}
T5S_INLINE void widen_body(const bf16* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

// One set of primitives per instruction set; the kernel policy picks the set (KernelPolicy::step).
struct VecOps {
    float (*dot)(const float*, const float*, int64_t);
    void (*axpy)(float, const float*, float*, int64_t);
    void (*widen)(const bf16*, float*, int64_t);
    void (*dot4)(const float*, const float*, int64_t, int64_t, float*);
    void (*dot16)(const float*, const float*, int64_t, int64_t, float*);
    void (*weighted_rows)(const float*, const float*, int64_t, int64_t, float*, int64_t);
};

#define T5S_VEC_OPS(NAME, TARGET)                                                                                           \
    TARGET float NAME##_dot(const float* a, const float* b, int64_t n) { return dot_body(a, b, n); }                        \
    TARGET void NAME##_axpy(float alpha, const float* x, float* y, int64_t n) { axpy_body(alpha, x, y, n); }                \
    TARGET void NAME##_widen(const bf16* in, float* out, int64_t n) { widen_body(in, out, n); }                             \
    TARGET void NAME##_dot4(const float* a, const float* b, int64_t stride, int64_t n, float* out) {                        \
        dot4_body(a, b, stride, n, out);                                                                                    \
    }                                                                                                                       \
    TARGET void NAME##_weighted_rows(const float* w, const float* v, int64_t stride, int64_t rows, float* out, int64_t n) { \
        weighted_rows_body(w, v, stride, rows, out, n);                                                                     \
    }                                                                                                                       \
    TARGET void NAME##_dot4x4(const float* a, const float* b, int64_t stride, int64_t n, float* out) {                      \
        for (int r = 0; r < 16; r += 4) dot4_body(a, b + r * stride, stride, n, out + r);                                   \
    }

#define T5S_VEC_TABLE(NAME, DOT16) \
    constexpr VecOps k_##NAME = {NAME##_dot, NAME##_axpy, NAME##_widen, NAME##_dot4, DOT16, NAME##_weighted_rows};

T5S_VEC_OPS(portable, )
T5S_VEC_TABLE(portable, portable_dot4x4)
#if defined(__x86_64__) && defined(__GNUC__)
// The targets the earlier target_clones used: results on each CPU class unchanged.
T5S_VEC_OPS(avx2, __attribute__((target("avx2"))))
T5S_VEC_TABLE(avx2, avx2_dot4x4)
T5S_VEC_OPS(avx512, __attribute__((target("avx512f"))))

// dot_body(a, b_r, n) for 16 rows b_r = b + r * stride, n a multiple of 16, each with dot_body's
// bits: row r's 16 lane sums in one register, then the 16 registers transposed so that register l
// holds lane l of every row, and the lanes added in dot_body's order (0 + lane 0 + ... + lane 15)
// for all 16 rows at once. dot4's four serial lane sums per four keys were most of its time.
__attribute__((target("avx512f"))) void transpose16(__m512 (&r)[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {  // per 128-bit lane: rows i, i+1 interleaved
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    __m512 u[16];  // u[4g + c], lane k: rows 4g..4g+3 of column 4k + c
    for (int g = 0; g < 4; ++g) {
        const __m512d lo01 = _mm512_castps_pd(t[4 * g]), hi01 = _mm512_castps_pd(t[4 * g + 1]);
        const __m512d lo23 = _mm512_castps_pd(t[4 * g + 2]), hi23 = _mm512_castps_pd(t[4 * g + 3]);
        u[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo01, lo23));
        u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo01, lo23));
        u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi01, hi23));
        u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi01, hi23));
    }
    for (int c = 0; c < 4; ++c) {  // 4x4 transpose of 128-bit lanes: column 4k + c gets lane g of u[4g + c]
        const __m512 x0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), x1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
        const __m512 x2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44), x3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_f32x4(x0, x2, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(x0, x2, 0xDD);
        r[8 + c] = _mm512_shuffle_f32x4(x1, x3, 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(x1, x3, 0xDD);
    }
}
__attribute__((target("avx512f"))) void avx512_dot16(const float* a, const float* b, int64_t stride, int64_t n, float* out) {
    static_assert(kLanes == 16, "one register per row's lane sums");
    __m512 acc[16];
    for (__m512& x : acc) x = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += kLanes) {
        const __m512 x = _mm512_loadu_ps(a + i);
        for (int r = 0; r < 16; ++r) acc[r] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + r * stride + i), acc[r]);
    }
    transpose16(acc);
    __m512 s = _mm512_setzero_ps();
    for (int l = 0; l < kLanes; ++l) s = _mm512_add_ps(s, acc[l]);
    _mm512_storeu_ps(out, s);
}
T5S_VEC_TABLE(avx512, avx512_dot16)
#endif

const VecOps& ops_for(KernelIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    // A hand-made policy asking for more than the CPU has gets the best it has.
    if (isa == KernelIsa::Avx512 && detect_cpu_features().avx512) return k_avx512;
    if (isa >= KernelIsa::Avx2 && detect_cpu_features().avx2_fma) return k_avx2;
#endif
    return k_portable;
}

// How a kernel reads and writes its element type. fp32: rows are used in place and nothing is
// rounded. bf16: rows are widened to fp32 (exact) and every value transformers' bf16 ops would
// produce is rounded to bf16 (nearest even, as ATen does).
template <typename T>
struct Elem;

template <>
struct Elem<float> {
    static const float* row(const VecOps&, const float* p, float*, int64_t) { return p; }
    static float round(float x) { return x; }
    static float store(float x) { return x; }
};

template <>
struct Elem<bf16> {
    static const float* row(const VecOps& ops, const bf16* p, float* scratch, int64_t n) {
        ops.widen(p, scratch, n);
        return scratch;
    }
    static float round(float x) { return static_cast<float>(bf16(x)); }
    static bf16 store(float x) { return bf16(x); }
};

// transformers: h = x * rsqrt(mean(x^2) + eps) in fp32, rounded to the weight's dtype; out = w * h.
// One row (xf and wf widened to fp32); the one formula both norm kernels use.
template <typename T>
void normalize_row(const VecOps& ops, const float* xf, const float* wf, int64_t d, double eps, T* out) {
    using E = Elem<T>;
    const float inv = 1.0f / std::sqrt(ops.dot(xf, xf, d) / static_cast<float>(d) + static_cast<float>(eps));
    for (int64_t i = 0; i < d; ++i) out[i] = E::store(wf[i] * E::round(xf[i] * inv));
}

template <typename T>
at::Tensor rms_norm(const VecOps& ops, const at::Tensor& x_in, const at::Tensor& weight_in, double eps) {
    using E = Elem<T>;
    const at::Tensor x = x_in.contiguous(), w = weight_in.contiguous();
    const int64_t d = x.size(-1), rows = x.numel() / d;
    at::Tensor out = at::empty_like(x);
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    std::vector<float> w_scratch(static_cast<size_t>(d));
    const float* wf = E::row(ops, w.data_ptr<T>(), w_scratch.data(), d);
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<size_t>(d));
        for (int64_t r = begin; r < end; ++r)
            normalize_row(ops, E::row(ops, xp + r * d, scratch.data(), d), wf, d, eps, op + r * d);
    });
    return out;
}

// sum = h + y (fp32, as at::add rounds it), then rms_norm(sum): a decode step's residual add and
// the norm after it in one pass over the row, no temporary per add. `sum` may be h (in place).
void residual_norm_rows(const VecOps& ops, const float* h, const float* y, float* sum, const float* w, int64_t rows, int64_t d,
                        double eps, float* out) {
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            for (int64_t i = r * d; i < (r + 1) * d; ++i) sum[i] = h[i] + y[i];
            normalize_row(ops, sum + r * d, w, d, eps, out + r * d);
        }
    });
}

at::Tensor residual_rms_norm(const VecOps& ops, const at::Tensor& h_in, const at::Tensor& y_in, at::Tensor& sum,
                             const at::Tensor& weight_in, double eps) {
    const at::Tensor h = h_in.contiguous(), y = y_in.contiguous(), w = weight_in.contiguous();
    TORCH_CHECK(h.sizes() == y.sizes() && h.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat &&
                    w.scalar_type() == at::kFloat && w.numel() == h.size(-1),
                "residual_rms_norm: fp32 h, y of one shape and a weight of their width expected");
    if (!sum.defined() || !sum.is_contiguous() || sum.sizes() != h.sizes()) sum = at::empty_like(h);
    const int64_t d = h.size(-1), rows = h.numel() / d;
    at::Tensor out = at::empty_like(h);
    residual_norm_rows(ops, h.data_ptr<float>(), y.data_ptr<float>(), sum.data_ptr<float>(), w.data_ptr<float>(), rows, d, eps,
                       out.data_ptr<float>());
    return out;
}

// scores[j] = q . k_j for the L rows k_j = k + j * stride, each with dot_body's bits: sixteen,
// then four rows per call, the rest one by one.
void key_dots(const VecOps& ops, const float* q, const float* k, int64_t stride, int64_t L, int64_t dk, float* scores) {
    int64_t j = 0;
    // dot4 and dot16 have no tail: dot_body's tail may be vectorised (products rounded before the
    // adds) or not (fused), so a row with one stays on dot_body. T5's d_kv is 64.
    if (dk % kLanes == 0) {
        for (; j + 16 <= L; j += 16) ops.dot16(q, k + j * stride, stride, dk, scores + j);
        for (; j + 4 <= L; j += 4) ops.dot4(q, k + j * stride, stride, dk, scores + j);
    }
    for (; j < L; ++j) scores[j] = ops.dot(q, k + j * stride, dk);
}

// transformers: scores = q.k (+ bias), softmax in fp32, out = weights . v; in bf16 each of these
// op outputs is rounded (scores twice: after the matmul and after the bias add).
template <typename T>
void single_query_attention(const VecOps& ops, const SingleQuery<T>& a) {
    using E = Elem<T>;
    const int64_t B = a.rows, H = a.heads, L = a.keys, dk = a.d_kv;
    const int64_t bias_share = a.bias_rows == 1 ? B : B / a.bias_rows;
    // Claimed chunks (claimed_chunks.h): at t5-base int8 batch 32 the attention is ~12 % of a step, and
    // fixed shares left one thread waiting whenever the VM slowed the other.
    parallel_claimed(B * H, even_claim_size(B * H), 8, [&](int64_t begin, int64_t end) {
        std::vector<float> scores(static_cast<size_t>(L)), q_scratch(static_cast<size_t>(dk)),
            row_scratch(static_cast<size_t>(dk)), acc(static_cast<size_t>(dk));
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / H, h = i % H, kb = a.kv_row ? a.kv_row[b] : b / a.share;
            const float* qf = E::row(ops, a.q + b * a.q_row + h * a.q_head, q_scratch.data(), dk);
            // kv_row: a bias row per K/V row (or one for all)
            const int64_t bias_row = !a.kv_row ? b / bias_share : a.bias_rows == 1 ? 0 : kb;
            const T* brow = a.bias + bias_row * a.bias_row + h * a.bias_head;
            const T* krows = a.k + kb * a.k_row + h * a.k_head;
            const T* vrows = a.v + kb * a.v_row + h * a.v_head;
            if constexpr (std::is_same_v<T, float>) {
                key_dots(ops, qf, krows, a.k_pos, L, dk, scores.data());
            } else {
                for (int64_t j = 0; j < L; ++j)
                    scores[j] = ops.dot(qf, E::row(ops, krows + j * a.k_pos, row_scratch.data(), dk), dk);
            }
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < L; ++j) {
                scores[j] = E::round(E::round(scores[j]) + static_cast<float>(brow[j * a.bias_pos]));
                m = std::max(m, scores[j]);
            }
            float sum = 0;
            for (int64_t j = 0; j < L; ++j) sum += (scores[j] = std::exp(scores[j] - m));
            for (int64_t j = 0; j < L; ++j) scores[j] = E::round(scores[j] / sum);  // the weights
            T* orow = a.out + b * H * dk + h * dk;
            if constexpr (std::is_same_v<T, float>) {
                ops.weighted_rows(scores.data(), vrows, a.v_pos, L, orow, dk);
            } else {
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int64_t j = 0; j < L; ++j)
                    ops.axpy(scores[j], E::row(ops, vrows + j * a.v_pos, row_scratch.data(), dk), acc.data(), dk);
                for (int64_t c = 0; c < dk; ++c) orow[c] = E::store(acc[c]);
            }
        }
    });
}

// The tensors' pointers and strides. k/v (and bias) may hold one row per group of `share`
// consecutive query rows (the beams or candidates of one input share its cross-attention K/V),
// or kv_rows names each query row's.
template <typename T>
at::Tensor single_query_attention(const VecOps& ops, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& bias_in, const at::Tensor& kv_rows_in) {
    const int64_t B = q.size(0), H = q.size(1), L = k.size(2), dk = q.size(3);
    const at::Tensor kv_rows = kv_rows_in.defined() ? kv_rows_in.to(at::kLong).contiguous() : at::Tensor();
    const int64_t bias_rows = bias_in.size(0);
    const at::Tensor bias = bias_in.expand({bias_rows, H, 1, L});
    at::Tensor out = at::empty({B, 1, H * dk}, q.options());
    SingleQuery<T> a;
    a.q = q.data_ptr<T>(), a.q_row = q.stride(0), a.q_head = q.stride(1);
    a.k = k.data_ptr<T>(), a.k_row = k.stride(0), a.k_head = k.stride(1), a.k_pos = k.stride(2);
    a.v = v.data_ptr<T>(), a.v_row = v.stride(0), a.v_head = v.stride(1), a.v_pos = v.stride(2);
    a.bias = bias.data_ptr<T>(), a.bias_row = bias.stride(0), a.bias_head = bias.stride(1), a.bias_pos = bias.stride(3);
    a.bias_rows = bias_rows;
    a.kv_row = kv_rows.defined() ? kv_rows.data_ptr<int64_t>() : nullptr;
    a.share = a.kv_row ? 1 : B / k.size(0);
    a.rows = B, a.heads = H, a.keys = L, a.d_kv = dk;
    a.out = out.data_ptr<T>();
    single_query_attention(ops, a);
    return out;
}

}  // namespace

at::Tensor rms_norm_cpu_f32(const at::Tensor& x, const at::Tensor& weight, double eps, KernelIsa isa) {
    return rms_norm<float>(ops_for(isa), x, weight, eps);
}
at::Tensor rms_norm_cpu_bf16(const at::Tensor& x, const at::Tensor& weight, double eps, KernelIsa isa) {
    return rms_norm<bf16>(ops_for(isa), x, weight, eps);
}
at::Tensor residual_rms_norm_cpu_f32(const at::Tensor& h, const at::Tensor& y, at::Tensor& sum, const at::Tensor& weight,
                                     double eps, KernelIsa isa) {
    return residual_rms_norm(ops_for(isa), h, y, sum, weight, eps);
}

at::Tensor single_query_attention_cpu_f32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                                          KernelIsa isa, const at::Tensor& kv_rows) {
    return single_query_attention<float>(ops_for(isa), q, k, v, bias, kv_rows);
}
void single_query_attention_f32(const SingleQuery<float>& a, KernelIsa isa) { single_query_attention(ops_for(isa), a); }

void rms_norm_rows_f32(const float* x, const float* weight, int64_t rows, int64_t d, double eps, KernelIsa isa, float* out) {
    const VecOps& ops = ops_for(isa);
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) normalize_row(ops, x + r * d, weight, d, eps, out + r * d);
    });
}

void residual_rms_norm_rows_f32(float* h, const float* y, const float* weight, int64_t rows, int64_t d, double eps, KernelIsa isa,
                                float* out) {
    residual_norm_rows(ops_for(isa), h, y, h, weight, rows, d, eps, out);
}

at::Tensor single_query_attention_cpu_bf16(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                                           KernelIsa isa, const at::Tensor& kv_rows) {
    return single_query_attention<bf16>(ops_for(isa), q, k, v, bias, kv_rows);
}

void write_cache_position(const at::Tensor& cache, int64_t t, const void* src, int64_t row_stride, int64_t head_stride) {
    const int64_t B = cache.size(0), H = cache.size(1), cap = cache.size(2), dk = cache.size(3);
    const size_t elem = cache.element_size(), bytes = static_cast<size_t>(dk) * elem;
    char* dst = static_cast<char*>(cache.data_ptr());
    const char* from = static_cast<const char*>(src);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            std::memcpy(dst + (((b * H + h) * cap + t) * dk) * elem, from + (b * row_stride + h * head_stride) * elem, bytes);
}

}  // namespace t5s
