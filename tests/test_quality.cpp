// Quality scores (foundation): chrF against sacrebleu goldens
// (tests/make_quality_goldens.py), change / diversity definitions, and MinHash against exact
// Jaccard similarity on small sets.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "t5s/error.h"
#include "t5s/quality.h"

using namespace t5s;

namespace {
nlohmann::json load_chrf_goldens() {
    const std::string path = std::string(T5S_TEST_DATA) + "/goldens/chrf.json";
    std::ifstream in(path);
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
}
}  // namespace

TEST_CASE("chrF matches sacrebleu on every golden pair", "[quality][chrf]") {
    const nlohmann::json goldens = load_chrf_goldens();
    REQUIRE(goldens.at("pairs").size() >= 90);
    for (const auto& pair : goldens.at("pairs")) {
        const std::string hyp = pair.at("hypothesis"), ref = pair.at("reference");
        INFO("hypothesis: " << hyp << "\nreference: " << ref);
        const double expected = pair.at("chrf");
        CHECK(std::abs(chrf(hyp, ref) - expected) <= 1e-6);
        CHECK(std::abs(change_score(hyp, ref) - (1.0 - expected)) <= 1e-6);
    }
}

TEST_CASE("diversity matches the ordered-pair mean computed with sacrebleu", "[quality][chrf]") {
    const nlohmann::json goldens = load_chrf_goldens();
    for (const auto& set : goldens.at("diversity")) {
        const std::vector<std::string> candidates = set.at("candidates");
        INFO("candidates: " << set.at("candidates").dump());
        const std::optional<double> got = diversity_score(candidates);
        if (set.at("diversity").is_null()) {
            CHECK_FALSE(got.has_value());
        } else {
            REQUIRE(got.has_value());
            CHECK(std::abs(*got - set.at("diversity").get<double>()) <= 1e-6);
        }
    }
}

TEST_CASE("diversity does not depend on candidate order; chrF itself is asymmetric", "[quality][chrf]") {
    const std::vector<std::string> a{"The cat sat on the mat.", "A cat sat.", "On the mat, a cat."};
    const std::vector<std::string> b{a[2], a[0], a[1]};
    CHECK(*diversity_score(a) == Approx(*diversity_score(b)).epsilon(1e-12));
    CHECK(chrf(a[0], a[1]) != Approx(chrf(a[1], a[0])));
}

TEST_CASE("quality scores reject invalid UTF-8 with the argument named", "[quality][errors]") {
    const std::string bad = "ok \xC3\x28";
    auto message = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::InvalidArgument);
            return e.what();
        }
        return "";
    };
    CHECK(message([&] { chrf(bad, "ok"); }).find("chrF hypothesis: invalid UTF-8 at byte 3") != std::string::npos);
    CHECK(message([&] { chrf("ok", bad); }).find("chrF reference") != std::string::npos);
    CHECK(message([&] { shingle_hashes(bad); }).find("minhash text") != std::string::npos);
    CHECK(message([&] { MinHasher(MinHashOptions{0, 5, 1}); }) == "minhash num_permutations must be in [1, 4096] (got 0)");
    CHECK(message([&] { shingle_hashes("ok", 0); }) == "shingle_size must be >= 1 (got 0)");
    NearDuplicateOptions o;
    o.threshold = 0.0;
    CHECK(message([&] { find_near_duplicates({"a"}, o); }) == "near-duplicate threshold must be in (0, 1] (got 0)");
    o = {};
    o.rows_per_band = 7;
    CHECK(message([&] { find_near_duplicates({"a"}, o); }).find("rows_per_band must divide") != std::string::npos);
}

TEST_CASE("shingles are code-point 5-grams of whitespace-normalised text", "[quality][minhash]") {
    CHECK(shingle_hashes("").empty());
    CHECK(shingle_hashes(" \t\u3000").empty());
    CHECK(shingle_hashes("abc").size() == 1);             // shorter than a shingle: one shingle
    CHECK(shingle_hashes("abcdefg").size() == 3);         // abcde bcdef cdefg
    CHECK(shingle_hashes("東京都庁舎です").size() == 3);  // 7 code points, not 21 bytes
    CHECK(shingle_hashes("  a  b\n c ") == shingle_hashes("a b c"));
    CHECK(shingle_hashes("aaaaaaaa").size() == 1);  // a set: repeats count once
    CHECK(shingle_jaccard("", "") == 1.0);
    CHECK(shingle_jaccard("", "abcdef") == 0.0);
    CHECK(shingle_jaccard("abcdefg", "abcdefg") == 1.0);
    CHECK(shingle_jaccard("abcdefg", "abcdefh") == Approx(2.0 / 4.0));  // {abcde,bcdef} shared of 4
}

TEST_CASE("MinHash estimates exact Jaccard within its standard-error bound", "[quality][minhash]") {
    // Pairs of sentences with a spread of overlaps, from identical to unrelated.
    const std::string base = "The quick brown fox jumps over the lazy dog near the quiet river bank at dawn.";
    const std::vector<std::string> others{
        base,
        "The quick brown fox jumps over the lazy dog near the quiet river bank at dusk.",
        "The quick brown fox leaps over the lazy dog near the quiet river bank at dawn.",
        "A quick brown fox jumps over a lazy dog by the quiet river at dawn.",
        "The quick brown fox jumps over the lazy dog.",
        "Near the quiet river bank at dawn, the lazy dog sleeps.",
        "Completely unrelated words about spreadsheets and tax forms.",
        "東京の静かな川のほとりで、朝早く茶色い狐が怠け者の犬を飛び越える。",
    };
    for (int k : {64, 256}) {
        const MinHasher hasher(MinHashOptions{k, 5, 12345});
        const std::vector<uint32_t> base_sig = hasher.signature(base);
        double total_abs_error = 0.0;
        for (const std::string& other : others) {
            const double exact = shingle_jaccard(base, other);
            const double estimate = estimate_jaccard(base_sig, hasher.signature(other));
            // Each slot matches with probability J: the estimate's std. error is sqrt(J(1-J)/k).
            // 4.5 sigma (plus one slot's worth, for J near 0 or 1) fails by chance ~1e-5 per pair.
            const double bound = 4.5 * std::sqrt(exact * (1.0 - exact) / k) + 1.0 / k;
            INFO("k=" << k << " other: " << other << " exact " << exact << " estimate " << estimate);
            CHECK(std::abs(estimate - exact) <= bound);
            total_abs_error += std::abs(estimate - exact);
        }
        // The mean error shrinks like 1/sqrt(k): at most 0.5/sqrt(k) on average here (J(1-J) <= 1/4).
        CHECK(total_abs_error / others.size() <= 0.5 / std::sqrt(k));
    }
}

TEST_CASE("MinHash signatures are deterministic and seed-dependent", "[quality][minhash]") {
    const MinHasher a, b;
    const MinHasher other_seed(MinHashOptions{128, 5, 99});
    const std::string text = "Deterministic signatures make exports reproducible.";
    CHECK(a.signature(text) == b.signature(text));
    CHECK(a.signature(text) != other_seed.signature(text));
    CHECK(a.signature(text).size() == 128);
    CHECK(estimate_jaccard(a.signature(""), a.signature("")) == 1.0);
    CHECK(estimate_jaccard(a.signature(""), a.signature(text)) == 0.0);
}

TEST_CASE("LSH rows per band make a pair at the threshold a candidate almost surely", "[quality][minhash]") {
    CHECK(choose_rows_per_band(128, 0.9) == 8);  // 16 bands: P(candidate | J=0.9) = 0.9999
    CHECK(choose_rows_per_band(128, 0.5) == 2);  // 4 rows x 32 bands would give only 0.87
    CHECK(choose_rows_per_band(1, 0.9) == 1);
}

TEST_CASE("near-duplicate finder agrees with brute-force exact Jaccard", "[quality][minhash]") {
    std::vector<std::string> corpus;
    const std::vector<std::string> sentences{
        "Please send the quarterly report to the finance team before Friday noon.",
        "The museum opens at nine in the morning and closes at six in the evening.",
        "She planted tomatoes, basil and peppers in the small garden behind the house.",
        "新しい駅は来年の春に開業する予定で、工事は順調に進んでいます。",
        "我们明天早上八点在图书馆门口见面，然后一起去博物馆参观。",
        "He fixed the bicycle chain with a borrowed wrench and a bit of oil.",
    };
    for (const std::string& s : sentences) corpus.push_back(s);
    corpus.push_back(sentences[0]);                                                                    // exact copy
    corpus.push_back("  Please send the quarterly report to the  finance team before Friday noon. ");  // spacing only
    corpus.push_back("Please send the quarterly report to the finance team before Friday noon!");      // one char
    corpus.push_back("The museum opens at ten in the morning and closes at five in the evening.");     // real edit
    corpus.push_back("新しい駅は来年の春に開業する予定で、工事は順調に進んでいます！");
    corpus.push_back("He fixed the bicycle chain.");

    const std::vector<NearDuplicate> found = find_near_duplicates(corpus);
    std::vector<size_t> dropped;
    for (const NearDuplicate& d : found) {
        dropped.push_back(d.index);
        CHECK(d.duplicate_of < d.index);
        CHECK(d.estimated_jaccard >= 0.9);
        CHECK(shingle_jaccard(corpus[d.index], corpus[d.duplicate_of]) >= 0.8);
    }
    // Brute force: a text is clearly a duplicate at exact J >= 0.95 with an earlier one, and clearly
    // not one below 0.8 with all earlier ones; the finder must agree on both sides.
    for (size_t i = 0; i < corpus.size(); ++i) {
        double best = 0.0;
        for (size_t j = 0; j < i; ++j) best = std::max(best, shingle_jaccard(corpus[i], corpus[j]));
        const bool is_dropped = std::find(dropped.begin(), dropped.end(), i) != dropped.end();
        INFO("text " << i << " best exact Jaccard with an earlier text " << best);
        if (best >= 0.95) CHECK(is_dropped);
        if (best < 0.8) CHECK_FALSE(is_dropped);
    }
    CHECK(std::find(dropped.begin(), dropped.end(), 6) != dropped.end());
    CHECK(std::find(dropped.begin(), dropped.end(), 7) != dropped.end());
    CHECK(std::find(dropped.begin(), dropped.end(), 9) == dropped.end());
    CHECK(find_near_duplicates(corpus).size() == found.size());  // deterministic
}
