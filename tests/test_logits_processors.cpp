// Each logits processor / sampler on synthetic logits with hand-computed results (no model),
// plus relative-position buckets against hand-computed values.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <cmath>

#include "decode/logits_processors.h"
#include "torch/t5_network.h"

using namespace t5s;

namespace {
at::Tensor row(std::vector<float> v) { return at::tensor(v).unsqueeze(0); }
at::Tensor seq(std::vector<int64_t> v) { return at::tensor(v, at::kLong).unsqueeze(0); }
std::vector<float> values(const at::Tensor& t) {
    at::Tensor c = t.contiguous().view(-1);
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
const float kInf = INFINITY;
}  // namespace

TEST_CASE("repetition penalty divides positive and multiplies negative seen scores", "[processors]") {
    at::Tensor s = row({2.0f, -1.0f, 0.5f, 3.0f});
    apply_repetition_penalty(s, seq({0, 1, 1}), 2.0f);
    CHECK(values(s) == std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f});
    at::Tensor same = row({2.0f, -1.0f});
    apply_repetition_penalty(same, seq({0}), 1.0f);
    CHECK(values(same) == std::vector<float>{2.0f, -1.0f});
}

TEST_CASE("no-repeat n-gram bans the token that would repeat an n-gram", "[processors]") {
    at::Tensor s = row({0.f, 0.f, 0.f, 0.f, 0.f, 0.f});
    apply_no_repeat_ngram(s, seq({5, 1, 2, 1}), 2);  // bigram (1,2) seen; last token 1 -> ban 2
    CHECK(values(s) == std::vector<float>{0.f, 0.f, -kInf, 0.f, 0.f, 0.f});
    at::Tensor t = row({0.f, 0.f, 0.f, 0.f});
    apply_no_repeat_ngram(t, seq({1, 2, 3, 1, 2}), 3);  // trigram (1,2,3) seen; suffix (1,2) -> ban 3
    CHECK(values(t) == std::vector<float>{0.f, 0.f, 0.f, -kInf});
    at::Tensor short_seq = row({0.f, 0.f});
    apply_no_repeat_ngram(short_seq, seq({1}), 3);  // too short for any trigram
    CHECK(values(short_seq) == std::vector<float>{0.f, 0.f});
}

TEST_CASE("min_new_tokens forbids </s> until enough tokens exist", "[processors]") {
    at::Tensor s = row({1.f, 2.f, 3.f});
    apply_min_new_tokens(s, 2, 3, 1);
    CHECK(values(s) == std::vector<float>{1.f, -kInf, 3.f});
    at::Tensor t = row({1.f, 2.f, 3.f});
    apply_min_new_tokens(t, 3, 3, 1);
    CHECK(values(t) == std::vector<float>{1.f, 2.f, 3.f});
}

TEST_CASE("temperature, top-k and top-p warp as transformers does", "[processors]") {
    at::Tensor s = row({2.f, 4.f});
    apply_temperature(s, 2.0f);
    CHECK(values(s) == std::vector<float>{1.f, 2.f});

    at::Tensor k = row({1.f, 3.f, 2.f, 0.f});
    apply_top_k(k, 2);
    CHECK(values(k) == std::vector<float>{-kInf, 3.f, 2.f, -kInf});
    at::Tensor k_big = row({1.f, 3.f});
    apply_top_k(k_big, 10);  // k larger than the vocabulary keeps everything
    CHECK(values(k_big) == std::vector<float>{1.f, 3.f});

    // probabilities 0.5, 0.3, 0.15, 0.05: with top_p 0.75 the 0.15 and 0.05 tail is removed.
    at::Tensor p = at::log(row({0.5f, 0.3f, 0.15f, 0.05f}));
    const auto before = values(p);
    apply_top_p(p, 0.75f);
    const auto after = values(p);
    CHECK(after[0] == before[0]);
    CHECK(after[1] == before[1]);
    CHECK(after[2] == -kInf);
    CHECK(after[3] == -kInf);
    at::Tensor one = at::log(row({0.9f, 0.1f}));
    apply_top_p(one, 0.01f);  // always keeps the most likely token
    CHECK(values(one)[0] > -kInf);
    CHECK(values(one)[1] == -kInf);
}

TEST_CASE("seeded multinomial sampling is reproducible", "[processors]") {
    at::Tensor probs = at::softmax(row({1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f}), -1).expand({64, 8});
    at::Generator a = at::detail::createCPUGenerator(7), b = at::detail::createCPUGenerator(7),
                  c = at::detail::createCPUGenerator(8);
    at::Tensor xa = at::multinomial(probs, 1, false, a), xb = at::multinomial(probs, 1, false, b),
               xc = at::multinomial(probs, 1, false, c);
    CHECK(at::equal(xa, xb));
    CHECK_FALSE(at::equal(xa, xc));
}

TEST_CASE("relative position buckets equal hand-computed values", "[buckets]") {
    // Encoder (bidirectional), 32 buckets, max distance 128: 16 per direction, exact below 8,
    // then log-spaced: 8 + floor(log(|r|/8) / log(16) * 8), capped at 15.
    at::Tensor rel = at::tensor(std::vector<int64_t>{0, -1, 1, -7, -8, -20, 20, -100, -200, 200}, at::kLong);
    at::Tensor b = T5Network::relative_position_bucket(rel, true, 32, 128);
    std::vector<int64_t> got(b.data_ptr<int64_t>(), b.data_ptr<int64_t>() + b.numel());
    CHECK(got == std::vector<int64_t>{0, 1, 17, 7, 8, 10, 26, 15, 15, 31});
    // Decoder (causal): positive distances map to 0; exact below 16; 16 + floor(log(|r|/16)/log(8)*16), cap 31.
    at::Tensor rel_d = at::tensor(std::vector<int64_t>{3, 0, -5, -15, -20, -127, -1000}, at::kLong);
    at::Tensor d = T5Network::relative_position_bucket(rel_d, false, 32, 128);
    std::vector<int64_t> got_d(d.data_ptr<int64_t>(), d.data_ptr<int64_t>() + d.numel());
    CHECK(got_d == std::vector<int64_t>{0, 0, 5, 15, 17, 31, 31});
}
