// The torch-free parts of quality-aware generation: option validation (messages name the field),
// hot-swap of the filters, the filter reasons, ranking and near-duplicate selection.
#include <catch2/catch.hpp>

#include <string>

#include "quality/candidate_filters.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/generation_options.h"
#include "t5s/quality.h"

using namespace t5s;

namespace {

std::string validation_message(const GenerationOptions& o) {
    try {
        validate_generation_options(o);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        return e.what();
    }
    return "";
}

Candidate scored(const std::string& text, double back, double change, std::optional<double> similarity = std::nullopt) {
    Candidate c{text, {}, 0.0};
    c.scores.back_score = back;
    c.scores.change = change;
    c.scores.similarity = similarity;
    c.scores.fluency = -1.0;
    return c;
}

// The printed reason ("" when the candidate passes), as generate's JSON and the history show it.
std::string printed(const std::optional<DropCause>& reason) { return reason ? to_string(*reason) : ""; }

}  // namespace

TEST_CASE("quality filter settings are validated with the field named", "[scores][options]") {
    CHECK(validation_message(GenerationOptions{}).empty());
    struct Case {
        void (*set)(GenerationOptions&);
        const char* field;
    };
    const Case cases[] = {
        {[](GenerationOptions& o) { o.min_similarity = 1.5; }, "min_similarity must be in [-1, 1]"},
        {[](GenerationOptions& o) { o.max_similarity = -2; }, "max_similarity must be in [-1, 1]"},
        {[](GenerationOptions& o) { o.min_change = -0.1; }, "min_change must be in [0, 1]"},
        {[](GenerationOptions& o) { o.max_change = 1.1; }, "max_change must be in [0, 1]"},
        {[](GenerationOptions& o) { o.min_back_score = 0.5; }, "min_back_score must be a finite log-probability <= 0"},
        {[](GenerationOptions& o) { o.near_duplicate = 0.0; }, "near_duplicate must be in (0, 1]"},
        {[](GenerationOptions& o) { o.min_change = 0.6, o.max_change = 0.5; }, "min_change must be <= max_change"},
        {[](GenerationOptions& o) { o.min_similarity = 0.9, o.max_similarity = 0.8; },
         "min_similarity must be <= max_similarity"},
    };
    for (const auto& c : cases) {
        GenerationOptions o;
        c.set(o);
        const std::string message = validation_message(o);
        INFO(message);
        CHECK(message.find(c.field) != std::string::npos);
    }
    GenerationOptions ok;
    ok.min_similarity = 0.8;
    ok.max_similarity = 0.99;
    ok.min_change = 0.0;
    ok.max_change = 1.0;
    ok.min_back_score = -3.0;
    ok.near_duplicate = 1.0;
    ok.rank = RankBy::Fluency;
    CHECK(validation_message(ok).empty());
}

TEST_CASE("filters and rank are hot-swapped with the other live settings", "[scores][options]") {
    GenerationOptions running, live;
    live.min_change = 0.3;
    live.near_duplicate = 0.7;
    live.rank = RankBy::Fluency;
    live.num_beams = 5;  // shape: not swapped
    const GenerationOptions merged = merge_step_settings(running, live);
    CHECK(merged.min_change == 0.3);
    CHECK(merged.near_duplicate == 0.7);
    CHECK(merged.rank == RankBy::Fluency);
    CHECK(merged.num_beams == 1);
}

TEST_CASE("filter reasons name the score and the bound it missed", "[scores]") {
    GenerationOptions o;
    o.min_change = 0.2;
    o.max_change = 0.8;
    o.min_back_score = -2.5;
    o.min_similarity = 0.8;
    CHECK(printed(filter_reason(scored("a", -1.0, 0.1, 0.9), o)) == "change<0.2");
    CHECK(printed(filter_reason(scored("a", -1.0, 0.9, 0.9), o)) == "change>0.8");
    CHECK(printed(filter_reason(scored("a", -3.0, 0.5, 0.9), o)) == "back_score<-2.5");
    CHECK(printed(filter_reason(scored("a", -1.0, 0.5, 0.75), o)) == "similarity<0.8");
    CHECK_FALSE(filter_reason(scored("a", -1.0, 0.5, 0.95), o));
    // Structured: the rule and the bound of the settings, exactly.
    const auto below = filter_reason(scored("a", -3.0, 0.5, 0.9), o);
    REQUIRE(below);
    CHECK(below->kind == DropReason::BackScoreBelow);
    CHECK(below->threshold == -2.5);
    o.max_similarity = 0.9;
    CHECK(filter_reason(scored("a", -1.0, 0.5, 0.95), o) == DropCause{DropReason::SimilarityAbove, 0.9});
}

TEST_CASE("selection ranks, drops near duplicates of better ones and stops at the count", "[scores]") {
    GenerationOptions o;
    o.min_change = 0.1;
    o.near_duplicate = 0.7;
    std::vector<Candidate> pool = {scored("The cat sleeps on the sofa.", -2.0, 0.5),
                                   scored("The cat sleeps on the sofa!", -1.0, 0.5), scored("A dog runs in the park.", -1.5, 0.9),
                                   scored("unchanged", -0.5, 0.05), scored("Birds sing at dawn.", -3.0, 0.8)};
    const CandidateSelection s = select_candidates(pool, o, RankBy::BackScore, 3);
    REQUIRE(s.kept.size() == 3);
    CHECK(s.kept[0].text == "The cat sleeps on the sofa!");  // best back_score
    CHECK(s.kept[1].text == "A dog runs in the park.");
    CHECK(s.kept[2].text == "Birds sing at dawn.");  // after the near duplicate
    REQUIRE(s.dropped.size() == 2);
    CHECK(to_string(s.dropped[0].reason) == "change<0.1");
    CHECK(s.dropped[1].candidate.text == "The cat sleeps on the sofa.");
    CHECK(to_string(s.dropped[1].reason) == "near_duplicate>0.7");
    CHECK(s.dropped[1].reason == DropCause{DropReason::NearDuplicate, 0.7});
    CHECK(chrf("The cat sleeps on the sofa.", "The cat sleeps on the sofa!") > 0.7);
    // With a count of 2 the walk stops before the near duplicate: it is surplus, neither kept nor dropped.
    const CandidateSelection two = select_candidates(pool, o, RankBy::BackScore, 2);
    CHECK(two.kept.size() == 2);
    CHECK(two.dropped.size() == 1);
    const CandidateSelection none = select_candidates(pool, GenerationOptions{}, RankBy::None, 5);
    REQUIRE(none.kept.size() == 5);
    CHECK(none.kept[0].text == pool[0].text);  // no rank: decoding order
}

TEST_CASE("fluency is the mean log-prob per generated token for greedy, sampling and beams", "[scores]") {
    Candidate c{"x", {5, 6, 7, 1}, -2.0};
    GenerationOptions greedy;
    CHECK(fluency_of(c, greedy) == Approx(-0.5));
    GenerationOptions beam;
    beam.num_beams = 4;
    beam.length_penalty = 2.0f;  // beam score = sum / 4^2: sum = -32
    CHECK(fluency_of(c, beam) == Approx(-8.0));
}

TEST_CASE("the incremental near-duplicate index agrees with find_near_duplicates", "[scores][minhash]") {
    const std::vector<std::string> texts = {"The quick brown fox jumps over the lazy dog.",
                                            "The quick brown fox jumps over the lazy dog!", "完全に違う文章です。",
                                            "The quick brown fox jumped over the lazy dog.", "完全に違う文章です!"};
    NearDuplicateOptions options;
    options.threshold = 0.6;
    const auto batch = find_near_duplicates(texts, options);
    NearDuplicateIndex index(options);
    std::vector<size_t> incremental;
    for (const auto& t : texts) {
        if (auto d = index.add(t)) incremental.push_back(d->index);
    }
    std::vector<size_t> from_batch;
    for (const auto& d : batch) from_batch.push_back(d.index);
    CHECK(incremental == from_batch);
    CHECK_FALSE(incremental.empty());
}

TEST_CASE("drop_invalid_text is a generation field: JSON name, --keep-invalid-text turns it off", "[quality][options]") {
    const GenerationField* f = find_generation_field("drop_invalid_text");
    REQUIRE(f != nullptr);
    CHECK(std::string(f->flag) == "keep-invalid-text");
    CHECK_FALSE(f->switch_value);
}
