// The top-k sampling fast path (warpers and draw over the k candidates only) against the
// full-vocabulary path it replaces: same probability of every token, same draws in distribution.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <cmath>

#include "decode/logits_processors.h"

using namespace t5s;

namespace {
GenerationOptions warpers(float temperature, int top_k, float top_p) {
    GenerationOptions o;
    o.do_sample = true;
    o.temperature = temperature;
    o.top_k = top_k;
    o.top_p = top_p;
    return o;
}

// Probabilities of the full-vocabulary path: mask with the warpers, softmax over V.
at::Tensor full_probs(const at::Tensor& scores, const GenerationOptions& o) {
    at::Tensor s = scores.clone();
    apply_warpers(s, o);
    return at::softmax(s, -1);
}

// Logits [rows, V] with a spread of values, a few banned tokens (-inf) and no exact ties.
at::Tensor test_logits(int64_t rows, int64_t V, uint64_t seed) {
    at::Generator g = at::detail::createCPUGenerator(seed);
    at::Tensor s = at::randn({rows, V}, g, at::kFloat) * 3.0;
    s.select(1, 3).fill_(-INFINITY);
    s.select(1, 17).fill_(-INFINITY);
    return s;
}
}  // namespace

TEST_CASE("top-k candidates give every token the full-vocabulary probability", "[sampling]") {
    const at::Tensor scores = test_logits(6, 32128, 1);  // t5 vocabulary size
    for (const auto& o : {warpers(1.0f, 50, 1.0f), warpers(0.7f, 20, 0.9f), warpers(1.3f, 5, 0.5f), warpers(2.0f, 900, 0.97f),
                          warpers(0.5f, 1, 1.0f)}) {
        CAPTURE(o.temperature, o.top_k, o.top_p);
        at::Tensor ids, warped;
        REQUIRE(warp_top_k_candidates(scores, o, &ids, &warped));
        REQUIRE(ids.sizes() == at::IntArrayRef({6, o.top_k}));
        // In token-id order: a draw's place maps to the same token whatever the ranks of near-ties.
        CHECK(at::equal(ids, std::get<0>(ids.sort(-1))));
        at::Tensor expected = full_probs(scores, o);
        at::Tensor got = at::zeros_like(expected).scatter(1, ids, at::softmax(warped, -1));
        // Same support exactly, same probabilities up to float rounding of the softmax sums.
        CHECK(at::equal(got > 0, expected > 0));
        CHECK(at::allclose(got, expected, 1e-5, 1e-7));
        // The log-probabilities reported as scores agree too (on the kept tokens).
        at::Tensor masked = scores.clone();
        apply_warpers(masked, o);
        at::Tensor kept = expected.gather(1, ids) > 0;
        at::Tensor lp_expected = at::log_softmax(masked, -1).gather(1, ids).masked_select(kept);
        CHECK(at::allclose(at::log_softmax(warped, -1).masked_select(kept), lp_expected, 1e-5, 1e-6));
    }
}

TEST_CASE("top-k candidates defer to the full path when they cannot be exact", "[sampling]") {
    at::Tensor ids, warped;
    const at::Tensor scores = test_logits(2, 100, 2);
    CHECK_FALSE(warp_top_k_candidates(scores, warpers(1.0f, 0, 0.9f), &ids, &warped));    // top-k off
    CHECK_FALSE(warp_top_k_candidates(scores, warpers(1.0f, 100, 1.0f), &ids, &warped));  // k covers V
    CHECK_FALSE(ids.defined());
    // Two banned tokens: with k = 99 the k-th and (k+1)-th are both -inf, a tie.
    CHECK_FALSE(warp_top_k_candidates(scores, warpers(1.0f, 99, 1.0f), &ids, &warped));
    CHECK(warp_top_k_candidates(scores, warpers(1.0f, 97, 1.0f), &ids, &warped));
    // A tie at the k-th score: apply_top_k keeps all three 2.0s, k = 2 candidates cannot.
    at::Tensor tied = at::tensor(std::vector<float>{2.f, 5.f, 2.f, 1.f, 2.f}).unsqueeze(0);
    CHECK_FALSE(warp_top_k_candidates(tied, warpers(1.0f, 2, 1.0f), &ids, &warped));
    CHECK(warp_top_k_candidates(tied, warpers(1.0f, 4, 1.0f), &ids, &warped));  // all 2.0s inside
}

TEST_CASE("sample_tokens draws from the full-vocabulary distribution (chi-square)", "[sampling]") {
    // One row repeated: each row of the batch is an independent draw from the same distribution.
    const int64_t draws = 40000, V = 300;
    const at::Tensor base = test_logits(1, V, 3) / 2.0;
    struct Case {
        GenerationOptions o;
        at::Tensor logits;
    };
    at::Tensor tied = base.clone();
    tied.select(1, 0).fill_(5.0);
    tied.select(1, 1).fill_(5.0);  // top-2 tied with the third: the full path is taken
    tied.select(1, 2).fill_(5.0);
    for (const Case& c :
         {Case{warpers(0.8f, 10, 0.95f), base}, Case{warpers(1.0f, 50, 1.0f), base}, Case{warpers(1.0f, 2, 1.0f), tied}}) {
        CAPTURE(c.o.temperature, c.o.top_k, c.o.top_p);
        at::Tensor probs = full_probs(c.logits, c.o).squeeze(0);
        at::Generator g = at::detail::createCPUGenerator(42);
        at::Tensor scores = c.logits.expand({draws, V}).contiguous(), logprob;
        at::Tensor next = sample_tokens(scores, c.o, g, &logprob);
        REQUIRE(next.sizes() == at::IntArrayRef({draws}));
        at::Tensor counts = at::bincount(next, {}, V).to(at::kDouble);
        // Never a token outside the support; each draw's log-probability is its token's.
        CHECK(counts.masked_select(probs == 0).sum().item<double>() == 0.0);
        CHECK(at::allclose(logprob, at::log(probs).index_select(0, next), 1e-5, 1e-6));
        at::Tensor expected = probs.to(at::kDouble) * draws;
        at::Tensor support = probs > 0;
        const double chi2 = ((counts - expected).pow(2) / expected).masked_select(support).sum().item<double>();
        const int64_t df = support.sum().item<int64_t>() - 1;
        // Chi-square critical value at p = 0.001, Wilson-Hilferty approximation.
        const double z = 3.09, h = 2.0 / (9.0 * df);
        const double critical = df * std::pow(1.0 - h + z * std::sqrt(h), 3);
        CAPTURE(chi2, df, critical);
        CHECK(df >= 1);
        CHECK(chi2 < critical);
    }
}

TEST_CASE("topk_distinct_fast returns at::topk's values and indices", "[sampling]") {
    const at::Tensor scores = test_logits(8, 4 * 32128, 4);  // beam search: [B, beams * V]
    for (int64_t k : {1, 8, 50}) {
        auto [v, i] = topk_distinct_fast(scores, k);
        auto [ev, ei] = at::topk(scores, k);
        CHECK(at::equal(v, ev));
        CHECK(at::equal(i, ei));
    }
    // Ties inside the top k+1: at::topk's own answer, whatever order it gives tied values.
    at::Tensor tied = at::tensor(std::vector<float>{1.f, 4.f, 4.f, 0.f, 3.f, 4.f, -1.f}).unsqueeze(0);
    for (int64_t k : {2, 3, 4}) {
        auto [v, i] = topk_distinct_fast(tied, k);
        auto [ev, ei] = at::topk(tied, k);
        CHECK(at::equal(v, ev));
        CHECK(at::equal(i, ei));
    }
    at::Tensor nan = scores.narrow(0, 0, 2).clone();
    nan[1][7] = NAN;
    auto [v, i] = topk_distinct_fast(nan, 4);
    CHECK(at::equal(i, std::get<1>(at::topk(nan, 4))));
}
