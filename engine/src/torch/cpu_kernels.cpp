#include "torch/cpu_kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace t5s {
namespace {

// Built for AVX-512, AVX2 and baseline x86-64; the loader picks one for the running CPU.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define T5S_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define T5S_CLONES
#endif

constexpr int kLanes = 16;  // independent partial sums: vectorisable without reassociation flags

T5S_CLONES float dot(const float* a, const float* b, int64_t n) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
    float s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

T5S_CLONES float sum_squares(const float* a, int64_t n) { return dot(a, a, n); }

T5S_CLONES void scale_rows(const float* x, const float* w, float r, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = w[i] * (x[i] * r);
}

T5S_CLONES void axpy(float alpha, const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

using bf16 = c10::BFloat16;

// bf16 <-> fp32: widening is exact; narrowing rounds to nearest even, as ATen's bf16 ops do.
T5S_CLONES void widen(const bf16* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}
float round_bf16(float x) { return static_cast<float>(bf16(x)); }

}  // namespace

at::Tensor rms_norm_cpu_bf16(const at::Tensor& x_in, const at::Tensor& weight_in, double eps) {
    // transformers, bf16: h = bf16(float(x) * rsqrt(mean(float(x)^2) + eps)); out = bf16(w * h).
    const at::Tensor x = x_in.contiguous(), w = weight_in.contiguous();
    const int64_t d = x.size(-1), rows = x.numel() / d;
    at::Tensor out = at::empty_like(x);
    const bf16* xp = x.data_ptr<bf16>();
    bf16* op = out.data_ptr<bf16>();
    std::vector<float> wf(static_cast<size_t>(d));
    widen(w.data_ptr<bf16>(), wf.data(), d);
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        std::vector<float> xf(static_cast<size_t>(d));
        for (int64_t r = begin; r < end; ++r) {
            widen(xp + r * d, xf.data(), d);
            const float inv = 1.0f / std::sqrt(sum_squares(xf.data(), d) / static_cast<float>(d) + static_cast<float>(eps));
            for (int64_t i = 0; i < d; ++i) op[r * d + i] = bf16(wf[i] * round_bf16(xf[i] * inv));
        }
    });
    return out;
}

at::Tensor single_query_attention_cpu_bf16(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& bias_in) {
    // transformers, bf16: scores = bf16(q.k) then bf16(scores + bias); weights = bf16(softmax in
    // fp32); out = bf16(sum weights * v) with fp32 accumulation.
    const int64_t B = q.size(0), H = q.size(1), L = k.size(2), dk = q.size(3);
    const at::Tensor bias = bias_in.expand({B, H, 1, L});
    at::Tensor out = at::empty({B, 1, H * dk}, q.options());
    const bf16* qp = q.data_ptr<bf16>();
    const bf16* kp = k.data_ptr<bf16>();
    const bf16* vp = v.data_ptr<bf16>();
    const bf16* bp = bias.data_ptr<bf16>();
    bf16* op = out.data_ptr<bf16>();
    const int64_t qs0 = q.stride(0), qs1 = q.stride(1), ks0 = k.stride(0), ks1 = k.stride(1), ks2 = k.stride(2);
    const int64_t vs0 = v.stride(0), vs1 = v.stride(1), vs2 = v.stride(2);
    const int64_t bs0 = bias.stride(0), bs1 = bias.stride(1), bs3 = bias.stride(3);
    at::parallel_for(0, B * H, 8, [&](int64_t begin, int64_t end) {
        std::vector<float> scores(static_cast<size_t>(L)), qf(static_cast<size_t>(dk)), row(static_cast<size_t>(dk)),
            acc(static_cast<size_t>(dk));
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / H, h = i % H;
            widen(qp + b * qs0 + h * qs1, qf.data(), dk);
            const bf16* brow = bp + b * bs0 + h * bs1;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < L; ++j) {
                widen(kp + b * ks0 + h * ks1 + j * ks2, row.data(), dk);
                scores[j] = round_bf16(round_bf16(dot(qf.data(), row.data(), dk)) + static_cast<float>(brow[j * bs3]));
                m = std::max(m, scores[j]);
            }
            float sum = 0;
            for (int64_t j = 0; j < L; ++j) sum += (scores[j] = std::exp(scores[j] - m));
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t j = 0; j < L; ++j) {
                widen(vp + b * vs0 + h * vs1 + j * vs2, row.data(), dk);
                axpy(round_bf16(scores[j] / sum), row.data(), acc.data(), dk);
            }
            bf16* orow = op + b * H * dk + h * dk;
            for (int64_t c = 0; c < dk; ++c) orow[c] = bf16(acc[c]);
        }
    });
    return out;
}

at::Tensor rms_norm_cpu_f32(const at::Tensor& x_in, const at::Tensor& weight_in, double eps) {
    const at::Tensor x = x_in.contiguous(), w = weight_in.contiguous();
    const int64_t d = x.size(-1), rows = x.numel() / d;
    at::Tensor out = at::empty_like(x);
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    float* op = out.data_ptr<float>();
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float variance = sum_squares(xp + r * d, d) / static_cast<float>(d);
            const float inv = 1.0f / std::sqrt(variance + static_cast<float>(eps));
            scale_rows(xp + r * d, wp, inv, op + r * d, d);
        }
    });
    return out;
}

at::Tensor single_query_attention_cpu_f32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          const at::Tensor& bias_in) {
    const int64_t B = q.size(0), H = q.size(1), L = k.size(2), dk = q.size(3);
    const at::Tensor bias = bias_in.expand({B, H, 1, L});
    at::Tensor out = at::empty({B, 1, H * dk}, q.options());
    const float* qp = q.data_ptr<float>();
    const float* kp = k.data_ptr<float>();
    const float* vp = v.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t qs0 = q.stride(0), qs1 = q.stride(1), ks0 = k.stride(0), ks1 = k.stride(1), ks2 = k.stride(2);
    const int64_t vs0 = v.stride(0), vs1 = v.stride(1), vs2 = v.stride(2);
    const int64_t bs0 = bias.stride(0), bs1 = bias.stride(1), bs3 = bias.stride(3);
    at::parallel_for(0, B * H, 8, [&](int64_t begin, int64_t end) {
        std::vector<float> scores(static_cast<size_t>(L));
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / H, h = i % H;
            const float* qrow = qp + b * qs0 + h * qs1;
            const float* brow = bp + b * bs0 + h * bs1;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < L; ++j) {
                scores[j] = dot(qrow, kp + b * ks0 + h * ks1 + j * ks2, dk) + brow[j * bs3];
                m = std::max(m, scores[j]);
            }
            float sum = 0;
            for (int64_t j = 0; j < L; ++j) sum += (scores[j] = std::exp(scores[j] - m));
            float* orow = op + b * H * dk + h * dk;
            std::fill(orow, orow + dk, 0.0f);
            for (int64_t j = 0; j < L; ++j) axpy(scores[j] / sum, vp + b * vs0 + h * vs1 + j * vs2, orow, dk);
        }
    });
    return out;
}

}  // namespace t5s
