// The fused fp32 decode-step kernels against the op-by-op formulas transformers uses.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <limits>

#include "torch/cpu_kernels.h"

using namespace t5s;

namespace {
double max_rel_diff(const at::Tensor& got, const at::Tensor& want) {
    return (got - want).abs().max().item<double>() / std::max(1.0, want.abs().max().item<double>());
}
}  // namespace

TEST_CASE("fused RMS norm equals T5's pow-mean-rsqrt-scale", "[kernels]") {
    for (int64_t d : {7, 64, 512, 515}) {
        at::Tensor x = at::randn({3, 2, d}) * 4, w = at::rand({d}) + 0.5;
        const double eps = 1e-6;
        at::Tensor want = w * (x * at::rsqrt(x.pow(2).mean(-1, true) + eps));
        at::Tensor got = rms_norm_cpu_f32(x, w, eps);
        REQUIRE(got.sizes() == want.sizes());
        CHECK(max_rel_diff(got, want) < 1e-6);
    }
    // A non-contiguous input is read correctly.
    at::Tensor x = at::randn({64, 6}).t(), w = at::rand({64});
    CHECK(max_rel_diff(rms_norm_cpu_f32(x, w, 1e-6), w * (x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-6))) < 1e-6);
}

TEST_CASE("fused single-query attention equals matmul-softmax-matmul and merges heads", "[kernels]") {
    const int64_t B = 3, H = 4, dk = 20, capacity = 9;
    for (int64_t len : {1, 5, 9}) {
        // q as a decode step makes it (a view of a fused projection), k/v as narrowed cache views.
        at::Tensor qkv = at::randn({B, 1, 3 * H * dk});
        at::Tensor q = qkv.narrow(-1, 0, H * dk).view({B, 1, H, dk}).transpose(1, 2);
        at::Tensor kc = at::randn({B, H, capacity, dk}), vc = at::randn({B, H, capacity, dk});
        at::Tensor k = kc.narrow(2, 0, len), v = vc.narrow(2, 0, len);
        for (int variant = 0; variant < 2; ++variant) {
            at::Tensor bias;
            if (variant == 0) {
                bias = at::randn({1, H, 1, len});  // self-attention position bias, shared by rows
            } else {
                // cross-attention padding mask per row: the last key of row 1 masked out
                bias = at::zeros({B, 1, 1, len});
                if (len > 1) bias[1][0][0][len - 1] = std::numeric_limits<float>::lowest();
            }
            at::Tensor weights = at::softmax(at::matmul(q, k.transpose(-1, -2)) + bias, -1);
            at::Tensor want = at::matmul(weights, v).transpose(1, 2).reshape({B, 1, H * dk});
            at::Tensor got = single_query_attention_cpu_f32(q, k, v, bias);
            REQUIRE(got.sizes() == want.sizes());
            CHECK(max_rel_diff(got, want) < 1e-5);
        }
    }
}
