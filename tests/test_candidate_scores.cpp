// Quality-aware generation on a real (tiny) checkpoint: back_score equals minus the score
// command's per-token loss, fluency is the decoding's own log-probability, every returned
// candidate satisfies the active filters, dropped ones carry a reason that holds, and ranking
// follows the chosen score. A small character-bigram embedder stands in for a sentence embedder.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/quality.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

std::unique_ptr<Model> load_tiny() { return Model::load(model_dir("t5v10-tied-relu")); }

// Test double: bag of character bigrams hashed into 64 buckets (a crude surface-similarity embedder).
class BigramEmbedder final : public Embedder {
public:
    BigramEmbedder() {
        info_.architecture = "test-bigram";
        info_.dim = 64;
    }
    const EmbedderInfo& info() const override { return info_; }
    std::vector<std::vector<float>> embed(const std::vector<std::string>& texts, const EmbedOptions&) const override {
        std::vector<std::vector<float>> out;
        for (const auto& t : texts) {
            std::vector<float> v(64, 0.0f);
            for (size_t i = 0; i + 1 < t.size(); ++i)
                v[(static_cast<unsigned char>(t[i]) * 31u + static_cast<unsigned char>(t[i + 1])) % 64] += 1.0f;
            out.push_back(std::move(v));
        }
        return out;
    }
    std::vector<std::vector<int>> token_ids(const std::vector<std::string>& texts, const EmbedOptions&) const override {
        std::vector<std::vector<int>> out;
        for (const auto& t : texts) out.emplace_back(t.begin(), t.end());
        return out;
    }

private:
    EmbedderInfo info_;
};

GenerationOptions sampling(int n) {
    GenerationOptions o;
    o.do_sample = true;
    o.num_return_sequences = n;
    o.max_new_tokens = 10;
    o.seed = 3;
    o.temperature = 1.3f;
    o.rank = RankBy::Auto;
    o.drop_invalid_text = false;  // these check scores; a random model's samples need not form characters
    return o;
}

// The dropped candidate really violates the bound its reason names (the threshold is the
// setting's own value, so the comparison is exact).
void check_reason_holds(const DroppedCandidate& d) {
    const DropCause& r = d.reason;
    const Candidate& c = d.candidate;
    INFO("reason " << to_string(r) << " for '" << c.text << "'");
    switch (r.kind) {
        case DropReason::ChangeBelow: CHECK(*c.scores.change < r.threshold); break;
        case DropReason::ChangeAbove: CHECK(*c.scores.change > r.threshold); break;
        case DropReason::BackScoreBelow: CHECK(*c.scores.back_score < r.threshold); break;
        case DropReason::SimilarityBelow: CHECK(*c.scores.similarity < r.threshold); break;
        case DropReason::SimilarityAbove: CHECK(*c.scores.similarity > r.threshold); break;
        case DropReason::NearDuplicate: break;  // checked against the kept ones by the caller
        case DropReason::Copy:
        case DropReason::Duplicate: break;
        case DropReason::LostSpan: FAIL("no protected spans were asked for"); break;
    }
}

}  // namespace

TEST_CASE("back_score equals minus the score command's per-token loss (candidate -> source)", "[scores]") {
    auto m = load_tiny();
    const Tokenizer& tok = m->tokenizer();
    GenerationOptions o = sampling(4);
    o.task_prefix = "paraphrase: ";
    const std::vector<std::string> sources = {"Tom is a good boy.", "猫が好きです。"};
    const auto results = generate_scored(*m, nullptr, sources, o);
    int checked = 0;
    for (size_t i = 0; i < results.size(); ++i) {
        for (const auto& c : results[i].candidates) {
            REQUIRE(c.scores.back_score.has_value());
            const double loss = m->score({tok.encode("paraphrase: " + c.text)}, {tok.encode(sources[i])}).loss;
            CHECK(std::fabs(*c.scores.back_score + loss) < 1e-5);
            CHECK(*c.scores.change == Approx(1.0 - chrf(c.text, sources[i])).margin(1e-12));
            ++checked;
        }
    }
    CHECK(checked == 8);
    // The batched helper agrees with the per-row base implementation.
    const std::vector<std::string> cands = {"a", "Tom is a boy, a good one.", "猫"};
    const std::vector<std::string> srcs = {"Tom is a good boy.", "x", "猫が好きです。"};
    const auto batched = back_scores(*m, cands, srcs, "paraphrase: ");
    IdBatch in, lab;
    for (size_t k = 0; k < cands.size(); ++k) {
        in.push_back(tok.encode("paraphrase: " + cands[k]));
        lab.push_back(tok.encode(srcs[k]));
    }
    const auto rowwise = m->Model::mean_log_probs(in, lab);
    for (size_t k = 0; k < cands.size(); ++k) CHECK(std::fabs(batched[k] - rowwise[k]) < 1e-5);
}

TEST_CASE("greedy fluency is the model's mean token log-prob of the candidate", "[scores]") {
    auto m = load_tiny();
    GenerationOptions o;
    o.max_new_tokens = 12;
    const auto r = generate_scored(*m, nullptr, {"Tom is a good boy."}, o)[0];
    REQUIRE(r.candidates.size() == 1);
    const Candidate& c = r.candidates[0];
    const double teacher_forced = m->mean_log_probs({m->tokenizer().encode("Tom is a good boy.")}, {c.ids})[0];
    CHECK(std::fabs(*c.scores.fluency - teacher_forced) < 1e-4);
    CHECK_FALSE(c.scores.similarity.has_value());  // no embedder
    CHECK_FALSE(r.diversity.has_value());          // one candidate
}

TEST_CASE("every returned candidate satisfies the active filters; dropped ones say why", "[scores]") {
    auto m = load_tiny();
    BigramEmbedder embedder;
    GenerationOptions o = sampling(4);
    o.min_change = 0.2;
    o.max_change = 0.98;
    o.min_back_score = -9.0;
    o.min_similarity = 0.05;
    o.near_duplicate = 0.6;
    o.max_rounds = 3;
    const std::vector<std::string> sources = {"Tom is a good boy.", "猫が好きです。", "我们走吧。"};
    const auto results = generate_scored(*m, &embedder, sources, o);
    size_t dropped = 0;
    for (const auto& r : results) {
        CHECK(r.candidates.size() <= 4);
        CHECK((r.candidates.size() == 4 || r.rounds == 3));  // short only after every round
        for (size_t k = 0; k < r.candidates.size(); ++k) {
            const Candidate& c = r.candidates[k];
            CHECK(*c.scores.change >= 0.2);
            CHECK(*c.scores.change <= 0.98);
            CHECK(*c.scores.back_score >= -9.0);
            CHECK(*c.scores.similarity >= 0.05);
            if (k > 0) CHECK(*c.scores.similarity <= *r.candidates[k - 1].scores.similarity);  // rank auto = similarity
            for (size_t j = 0; j < k; ++j) CHECK(chrf(c.text, r.candidates[j].text) <= 0.6);
        }
        for (const auto& d : r.dropped) check_reason_holds(d);
        dropped += r.dropped.size();
    }
    CHECK(dropped > 0);  // the bounds above are tight enough for this model to drop some
}

TEST_CASE("rank selects the order; none keeps the decoding order", "[scores]") {
    auto m = load_tiny();
    GenerationOptions o;
    o.num_beams = 4;
    o.num_return_sequences = 4;
    o.max_new_tokens = 8;
    o.rank = RankBy::None;
    const auto beam_order = generate_scored(*m, nullptr, {"Tom is a good boy."}, o)[0].candidates;
    const auto ids = m->generate_ids({m->tokenizer().encode("Tom is a good boy.")}, o)[0];
    REQUIRE(beam_order.size() == ids.size());
    for (size_t k = 0; k < ids.size(); ++k) CHECK(beam_order[k].ids == ids[k].ids);
    for (const RankBy key : {RankBy::BackScore, RankBy::Fluency}) {
        o.rank = key;
        const auto ranked = generate_scored(*m, nullptr, {"Tom is a good boy."}, o)[0].candidates;
        REQUIRE(ranked.size() == 4);
        for (size_t k = 1; k < ranked.size(); ++k) {
            const auto& prev = ranked[k - 1];
            const auto& cur = ranked[k];
            CHECK((key == RankBy::BackScore ? *prev.scores.back_score >= *cur.scores.back_score
                                            : *prev.scores.fluency >= *cur.scores.fluency));
        }
    }
}

TEST_CASE("similarity filters and rank need an embedder", "[scores]") {
    auto m = load_tiny();
    GenerationOptions o;
    o.min_similarity = 0.5;
    try {
        generate_scored(*m, nullptr, {"hi"}, o);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("min_similarity") != std::string::npos);
    }
    o.min_similarity.reset();
    o.rank = RankBy::Similarity;
    CHECK_THROWS_AS(generate_scored(*m, nullptr, {"hi"}, o), Error);
}

TEST_CASE("model_scores off skips back_score and similarity unless a filter or the ranking reads them", "[scores]") {
    auto m = load_tiny();
    const BigramEmbedder embedder;
    GenerationOptions o;
    o.num_beams = 4;
    o.num_return_sequences = 3;
    o.max_new_tokens = 8;
    const auto full = generate_scored(*m, &embedder, {"Tom is a good boy."}, o)[0].candidates;
    o.model_scores = false;
    const auto lean = generate_scored(*m, &embedder, {"Tom is a good boy."}, o)[0].candidates;
    REQUIRE(lean.size() == full.size());
    for (size_t k = 0; k < full.size(); ++k) {
        CHECK(lean[k].ids == full[k].ids);
        CHECK(lean[k].score == full[k].score);
        CHECK(lean[k].scores.fluency == full[k].scores.fluency);  // the cheap scores stay
        CHECK(lean[k].scores.change == full[k].scores.change);
        CHECK_FALSE(lean[k].scores.back_score.has_value());
        CHECK_FALSE(lean[k].scores.similarity.has_value());
    }
    o.min_back_score = -1e9;  // a bound that keeps everything but needs the score
    for (const auto& c : generate_scored(*m, &embedder, {"Tom is a good boy."}, o)[0].candidates) {
        CHECK(c.scores.back_score.has_value());
        CHECK_FALSE(c.scores.similarity.has_value());
    }
    o.min_back_score.reset();
    o.rank = RankBy::Auto;  // with an embedder: similarity
    const auto ranked = generate_scored(*m, &embedder, {"Tom is a good boy."}, o)[0].candidates;
    for (size_t k = 0; k < ranked.size(); ++k) {
        CHECK_FALSE(ranked[k].scores.back_score.has_value());
        REQUIRE(ranked[k].scores.similarity.has_value());
        const auto same = std::find_if(full.begin(), full.end(), [&](const Candidate& c) { return c.ids == ranked[k].ids; });
        REQUIRE(same != full.end());
        CHECK(*ranked[k].scores.similarity == *same->scores.similarity);
        if (k > 0) CHECK(*ranked[k - 1].scores.similarity >= *ranked[k].scores.similarity);
    }
}
