// Drop reasons (t5s/drop_reason.h): the printed text is a contract (generate's and serve's JSON,
// the history), so every rule prints as the filters printed it before the enum, and parses back;
// each rule names the option that drops for it (the server's metric label) from one table.
#include <catch2/catch.hpp>
#include <cstdio>
#include <iterator>
#include <set>
#include <string>

#include "t5s/drop_reason.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"

using namespace t5s;

namespace {

constexpr DropReason kAll[] = {DropReason::Copy,
                               DropReason::Duplicate,
                               DropReason::LostSpan,
                               DropReason::SimilarityBelow,
                               DropReason::SimilarityAbove,
                               DropReason::ChangeBelow,
                               DropReason::ChangeAbove,
                               DropReason::BackScoreBelow,
                               DropReason::NearDuplicate,
                               DropReason::InvalidText};

// The text the filters wrote before DropReason existed: the literal of a decoding filter, else
// snprintf("%s%s%.4g", score, op, bound) (candidate_filters.cpp's format_bound).
std::string printed_before(DropReason kind, double bound) {
    const char* score = nullptr;
    const char* op = nullptr;
    switch (kind) {
        case DropReason::Copy: return "copy";
        case DropReason::Duplicate: return "duplicate";
        case DropReason::LostSpan: return "lost_span";
        case DropReason::InvalidText:  // added later, a decoding filter: its name alone
            return "invalid_text";
        case DropReason::SimilarityBelow: score = "similarity", op = "<"; break;
        case DropReason::SimilarityAbove: score = "similarity", op = ">"; break;
        case DropReason::ChangeBelow: score = "change", op = "<"; break;
        case DropReason::ChangeAbove: score = "change", op = ">"; break;
        case DropReason::BackScoreBelow: score = "back_score", op = "<"; break;
        case DropReason::NearDuplicate: score = "near_duplicate", op = ">"; break;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%s%s%.4g", score, op, bound);
    return text;
}

}  // namespace

TEST_CASE("drop reasons: every rule prints as before and parses back", "[enum_names][drop_reason]") {
    CHECK(std::size(kAll) == enum_names<DropReason>().size());
    // Bounds as the settings hold them: short decimals, negatives, tiny and long ones (%.4g rounds).
    const double bounds[] = {0.8, 0.95, 0.1, 1.0, 0.0, -4.5, -12.25, 1e-05, 0.123456789, -0.333333, 0.7, 1e-300};
    for (const DropReason kind : kAll) {
        for (const double bound : bounds) {
            const DropCause cause{kind, has_threshold(kind) ? bound : 0.0};
            const std::string text = to_string(cause);
            INFO(text);
            CHECK(text == printed_before(kind, bound));
            const std::optional<DropCause> back = try_parse_drop_cause(text);
            REQUIRE(back);
            CHECK(back->kind == kind);
            CHECK(to_string(*back) == text);  // the text survives the history's round trip byte for byte
        }
    }
    // A bound of at most 4 significant digits (every slider step) comes back exactly.
    CHECK(parse_drop_cause("similarity<0.8") == DropCause{DropReason::SimilarityBelow, 0.8});
    CHECK(parse_drop_cause("back_score<-4.5") == DropCause{DropReason::BackScoreBelow, -4.5});
    CHECK(parse_drop_cause("near_duplicate>0.7") == DropCause{DropReason::NearDuplicate, 0.7});
    CHECK(parse_drop_cause("lost_span") == DropCause{DropReason::LostSpan, 0.0});
}

TEST_CASE("drop reasons: only printed reasons parse, in the enum tables' wording", "[enum_names][drop_reason]") {
    for (const char* bad : {"", "Copy", "copy ", "similarity", "similarity<", "similarity<x", "similarity<0.8x", "change=0.5",
                            "near_duplicate<0.7", "back_score>-1", "change<inf", "change<nan", "copy<0.5", "similarity< 0.8",
                            "similarity<0.80", "similarity<+0.8", "change<0x1p-3", "change<1e-5"}) {
        INFO(bad);
        CHECK_FALSE(try_parse_drop_cause(bad));
    }
    CHECK_THROWS_WITH(parse_drop_cause("loud"),
                      "unknown drop reason 'loud' (expected copy, duplicate, lost_span, similarity<X, similarity>X, change<X, "
                      "change>X, back_score<X, near_duplicate>X or invalid_text)");
    try {
        parse_drop_cause("x");
        FAIL("parse_drop_cause accepted 'x'");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
    }
}

TEST_CASE("drop reasons: each rule names the option that drops for it", "[enum_names][drop_reason][options]") {
    // The server's metric labels (t5studio_candidates_dropped_total{reason=...}): a contract.
    CHECK(std::string(option_of(DropReason::Copy)) == "no_copy");
    CHECK(std::string(option_of(DropReason::Duplicate)) == "distinct");
    CHECK(std::string(option_of(DropReason::LostSpan)) == "protect");
    CHECK(std::string(option_of(DropReason::SimilarityBelow)) == "min_similarity");
    CHECK(std::string(option_of(DropReason::SimilarityAbove)) == "max_similarity");
    CHECK(std::string(option_of(DropReason::ChangeBelow)) == "min_change");
    CHECK(std::string(option_of(DropReason::ChangeAbove)) == "max_change");
    CHECK(std::string(option_of(DropReason::BackScoreBelow)) == "min_back_score");
    CHECK(std::string(option_of(DropReason::NearDuplicate)) == "near_duplicate");
    CHECK(std::string(option_of(DropReason::InvalidText)) == "drop_invalid_text");
    std::set<std::string> options;
    for (const DropReason kind : kAll) {
        INFO(to_string(kind));
        CHECK(find_generation_field(option_of(kind)) != nullptr);  // a real option, by its JSON name
        CHECK(options.insert(option_of(kind)).second);             // one rule per option
        // A score bound is a bounded rule on the candidate's own scores; near_duplicate compares
        // with another candidate; the decoding filters carry no bound.
        CHECK(is_score_bound(kind) == (has_threshold(kind) && kind != DropReason::NearDuplicate));
    }
    CHECK_FALSE(has_threshold(DropReason::Copy));
    CHECK(has_threshold(DropReason::NearDuplicate));
    CHECK(is_score_bound(DropReason::ChangeAbove));
}
