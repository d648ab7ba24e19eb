// The fused fp32 decode-step kernels against the op-by-op formulas transformers uses, on every
// instruction set this CPU has (the kernel policy picks one; here all run in one process).
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "skip.h"
#include "torch/cpu_kernels.h"
#include "torch/vocab_kernels.h"

using namespace t5s;

namespace {
std::vector<KernelIsa> step_isas() {
    std::vector<KernelIsa> isas{KernelIsa::Portable};
    if (detect_cpu_features().avx2_fma) isas.push_back(KernelIsa::Avx2);
    if (detect_cpu_features().avx512) isas.push_back(KernelIsa::Avx512);
    return isas;
}
// The vocabulary kernel the policy picks here (T5S_VOCAB_KERNEL steers it in the ctest entries).
KernelIsa vocab() { return default_kernel_policy().vocab; }

double max_rel_diff(const at::Tensor& got, const at::Tensor& want) {
    return (got - want).abs().max().item<double>() / std::max(1.0, want.abs().max().item<double>());
}
}  // namespace

TEST_CASE("fused RMS norm equals T5's pow-mean-rsqrt-scale", "[kernels]") {
    for (KernelIsa isa : step_isas()) {
        INFO("isa " << static_cast<int>(isa));
        for (int64_t d : {7, 64, 512, 515}) {
            at::Tensor x = at::randn({3, 2, d}) * 4, w = at::rand({d}) + 0.5;
            const double eps = 1e-6;
            at::Tensor want = w * (x * at::rsqrt(x.pow(2).mean(-1, true) + eps));
            at::Tensor got = rms_norm_cpu_f32(x, w, eps, isa);
            REQUIRE(got.sizes() == want.sizes());
            CHECK(max_rel_diff(got, want) < 1e-6);
        }
        // A non-contiguous input is read correctly.
        at::Tensor x = at::randn({64, 6}).t(), w = at::rand({64});
        CHECK(max_rel_diff(rms_norm_cpu_f32(x, w, 1e-6, isa), w * (x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-6))) < 1e-6);
    }
}

TEST_CASE("residual add + RMS norm gives the bits of at::add then the fused norm, in place or not", "[kernels]") {
    for (KernelIsa isa : step_isas()) {
        INFO("isa " << static_cast<int>(isa));
        for (int64_t d : {7, 512, 515}) {
            const at::Tensor h = at::randn({3, 1, d}) * 4, y = at::randn({3, 1, d}), w = at::rand({d}) + 0.5;
            const at::Tensor sum_want = h + y;
            const at::Tensor want = rms_norm_cpu_f32(sum_want, w, 1e-6, isa);
            at::Tensor sum;  // undefined: allocated by the kernel, h untouched
            const at::Tensor h_before = h.clone();
            CHECK(at::equal(residual_rms_norm_cpu_f32(h, y, sum, w, 1e-6, isa), want));
            CHECK(at::equal(sum, sum_want));
            CHECK(at::equal(h, h_before));
            at::Tensor in_place = h.clone();  // sum is h: the add overwrites it
            CHECK(at::equal(residual_rms_norm_cpu_f32(in_place, y, in_place, w, 1e-6, isa), want));
            CHECK(at::equal(in_place, sum_want));
        }
    }
}

TEST_CASE("fused single-query attention equals matmul-softmax-matmul and merges heads", "[kernels]") {
    const int64_t B = 3, H = 4, capacity = 40;
    // dk 20: one key at a time; 64 (T5's d_kv): sixteen and four keys per call and the outputs in
    // registers, with len 9, 21 and 37 leaving keys over.
    for (int64_t dk : {20, 64})
        for (KernelIsa isa : step_isas())
            for (int64_t len : {1, 5, 9, 16, 21, 37}) {
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
                    at::Tensor got = single_query_attention_cpu_f32(q, k, v, bias, isa);
                    INFO("isa " << static_cast<int>(isa));
                    REQUIRE(got.sizes() == want.sizes());
                    CHECK(max_rel_diff(got, want) < 1e-5);
                }
            }
}

TEST_CASE("a key's score has the same bits in the sixteen-key call, the four-key call and alone", "[kernels]") {
    // Keys 0-15 go through dot16 (AVX-512; four dot4 calls elsewhere), keys 16-19 through dot4 and
    // key 20 through dot. With key b = key a and v_b = -v_a (powers of two, so w * v is exact) and
    // the other values 0, the output is exactly 0 iff their weights, hence their scores, are
    // bit-identical; a last-bit difference leaves (w_a - w_b) * v_a. Every position of the
    // sixteen-key call is paired with a key from another call.
    const int64_t H = 2, dk = 64, len = 21;
    for (KernelIsa isa : step_isas())
        for (int64_t a = 0; a < 16; ++a)
            for (int64_t b : {int64_t{20}, 16 + a % 4}) {
                INFO("isa " << static_cast<int>(isa) << ", key " << a << " against key " << b);
                at::Tensor q = at::randn({1, H, 1, dk}), k = at::randn({1, H, len, dk}), v = at::zeros({1, H, len, dk});
                k.select(2, b).copy_(k.select(2, a));
                const at::Tensor powers = at::pow(2.0, at::randint(-3, 4, {1, H, dk}).to(at::kFloat));
                v.select(2, a).copy_(powers);
                v.select(2, b).copy_(-powers);
                const at::Tensor out = single_query_attention_cpu_f32(q, k, v, at::zeros({1, H, 1, len}), isa);
                CHECK(at::equal(out, at::zeros_like(out)));
            }
}

TEST_CASE("bf16 kernels round where transformers' bf16 ops round", "[kernels]") {
    for (KernelIsa isa : step_isas()) {
        INFO("isa " << static_cast<int>(isa));
        // Op-by-op bf16 references, as modeling_t5 runs them on bf16 tensors.
        const at::Tensor x = (at::randn({4, 1, 512}) * 3).to(at::kBFloat16), w = (at::rand({512}) + 0.5).to(at::kBFloat16);
        const double eps = 1e-6;
        at::Tensor h = (x * at::rsqrt(x.to(at::kFloat).pow(2).mean(-1, true) + eps)).to(at::kBFloat16);
        at::Tensor want = w * h;
        at::Tensor got = rms_norm_cpu_bf16(x, w, eps, isa);
        REQUIRE(got.scalar_type() == at::kBFloat16);
        // Summation order may move a value across one bf16 rounding boundary: at most one bf16 step.
        CHECK(max_rel_diff(got.to(at::kFloat), want.to(at::kFloat)) <= 1.0 / 128);
        const double same = (got == want).to(at::kFloat).mean().item<double>();
        CHECK(same > 0.95);

        const int64_t B = 2, H = 4, dk = 64, L = 7;
        at::Tensor q = at::randn({B, H, 1, dk}).to(at::kBFloat16), k = at::randn({B, H, L, dk}).to(at::kBFloat16);
        at::Tensor v = at::randn({B, H, L, dk}).to(at::kBFloat16), bias = at::randn({1, H, 1, L}).to(at::kBFloat16);
        at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) + bias;
        at::Tensor weights = at::softmax(scores.to(at::kFloat), -1).to(at::kBFloat16);
        at::Tensor ref = at::matmul(weights, v).transpose(1, 2).reshape({B, 1, H * dk});
        at::Tensor out = single_query_attention_cpu_bf16(q, k, v, bias, isa);
        REQUIRE(out.scalar_type() == at::kBFloat16);
        CHECK(max_rel_diff(out.to(at::kFloat), ref.to(at::kFloat)) <= 2.0 / 128);
    }
}

TEST_CASE("greedy pick equals max(dim) and log_softmax's value at it", "[kernels][may_skip][vocab]") {
    const float inf = std::numeric_limits<float>::infinity();
    at::Tensor probe_next, probe_logprob;
    if (!greedy_pick_cpu(at::zeros({1, 16}), probe_next, probe_logprob, vocab())) {
        T5S_SKIP(
            "no AVX2 / AVX-512 here, or not the one T5S_VOCAB_KERNEL asks for, or T5S_FUSED_KERNELS=0: greedy decoding keeps "
            "ATen's pick");
    }
    for (int64_t v : {1, 7, 8, 15, 16, 37, 32128}) {
        at::Tensor logits = at::randn({5, v}) * 6;
        if (v > 20) {
            logits[1].fill_(0.25f);                          // all tied: the first index wins
            logits[2].narrow(0, 3, 10).fill_(-inf);          // masked tokens, as processors leave them
            logits[3][v - 1] = 40.0f;                        // the maximum in the tail lanes
            logits[4][7] = 30.0f, logits[4][v - 2] = 30.0f;  // a tie across lanes
        }
        at::Tensor next, logprob;
        REQUIRE(greedy_pick_cpu(logits, next, logprob, vocab()));
        const at::Tensor want_next = std::get<1>(logits.max(-1));
        const at::Tensor want_lp = at::log_softmax(logits, -1).gather(1, want_next.unsqueeze(1)).squeeze(1);
        INFO("vocab " << v);
        CHECK(at::equal(next, want_next));
        CHECK((logprob - want_lp).abs().max().item<double>() < 1e-5);
    }
    // Cases ATen defines and the kernel leaves to it: NaN, +inf, a row of only -inf.
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), inf}) {
        at::Tensor logits = at::randn({2, 100});
        logits[1][50] = bad;
        at::Tensor next, logprob;
        CHECK(!greedy_pick_cpu(logits, next, logprob, vocab()));
        CHECK(!next.defined());
    }
    at::Tensor masked = at::full({1, 40}, -inf);
    at::Tensor next, logprob;
    CHECK(!greedy_pick_cpu(masked, next, logprob, vocab()));
}

TEST_CASE("in-place log-softmax equals at::log_softmax and refuses rows ATen must handle", "[kernels][may_skip][vocab]") {
    const float inf = std::numeric_limits<float>::infinity();
    at::Tensor probe = at::zeros({1, 16});
    if (!log_softmax_inplace_cpu(probe, vocab()))
        T5S_SKIP(
            "no AVX2 / AVX-512 here, or not the one T5S_VOCAB_KERNEL asks for, or T5S_FUSED_KERNELS=0: beam search keeps "
            "at::log_softmax");
    for (int64_t v : {1, 7, 8, 15, 16, 37, 32128}) {
        at::Tensor logits = at::randn({4, v}) * 6;
        if (v > 20) logits[2].narrow(0, 3, 10).fill_(-inf);  // masked tokens stay -inf
        const at::Tensor want = at::log_softmax(logits, -1);
        at::Tensor got = logits.clone();
        REQUIRE(log_softmax_inplace_cpu(got, vocab()));
        INFO("vocab " << v);
        const at::Tensor finite = at::isfinite(want);
        CHECK(at::equal(finite, at::isfinite(got)));
        CHECK((got - want).masked_fill(~finite, 0).abs().max().item<double>() < 1e-5);
    }
    at::Tensor logits = at::randn({3, 50});
    logits[2][10] = std::numeric_limits<float>::quiet_NaN();
    const at::Tensor before = logits.clone();
    CHECK(!log_softmax_inplace_cpu(logits, vocab()));
    CHECK(at::equal(logits.isnan(), before.isnan()));
    CHECK(at::equal(logits.nan_to_num(0), before.nan_to_num(0)));  // untouched, first rows included
}
