#pragma once
// Why a candidate was dropped (t5s::DroppedCandidate): the rule, an enum with one name table, and
// for a rule with a bound the bound it missed. The printed reason is the rule's name followed, for
// a bounded rule, by its bound as %.4g: "copy", "lost_span", "similarity<0.8", "near_duplicate>0.7".
// It is a contract: generate's and serve's JSON, the history's dropped_candidates.reason and the
// app print it, so the names below are never renamed. Torch-free.
#include <optional>
#include <string>
#include <string_view>

#include "t5s/enum_names.h"

namespace t5s {

enum class DropReason {
    Copy,             // no_copy: the same text as the source (whitespace and width normalised)
    Duplicate,        // distinct: the same text as an earlier candidate
    LostSpan,         // protect: a protected span not kept exactly once
    SimilarityBelow,  // min_similarity
    SimilarityAbove,  // max_similarity
    ChangeBelow,      // min_change
    ChangeAbove,      // max_change
    BackScoreBelow,   // min_back_score
    NearDuplicate,    // near_duplicate: chrF with a better-ranked kept candidate above the bound
    InvalidText,      // drop_invalid_text: U+FFFD or invalid UTF-8 in the decoded text (a broken byte fallback)
};
// A bounded rule's name ends with its comparison ('<' or '>'); the bound follows it when printed.
template <>
struct EnumNames<DropReason> {
    static constexpr const char* kWhat = "drop reason";
    static constexpr EnumName<DropReason> kNames[] = {
        {DropReason::Copy, "copy"},
        {DropReason::Duplicate, "duplicate"},
        {DropReason::LostSpan, "lost_span"},
        {DropReason::SimilarityBelow, "similarity<"},
        {DropReason::SimilarityAbove, "similarity>"},
        {DropReason::ChangeBelow, "change<"},
        {DropReason::ChangeAbove, "change>"},
        {DropReason::BackScoreBelow, "back_score<"},
        {DropReason::NearDuplicate, "near_duplicate>"},
        {DropReason::InvalidText, "invalid_text"},
    };
};

// One dropped candidate's reason: its rule and, for a bounded rule, the bound of the settings that
// dropped it (exactly the option's value, so the printed reason is the one printed before).
struct DropCause {
    DropReason kind = DropReason::Copy;
    double threshold = 0.0;  // bounded rules only; 0 for the others

    friend bool operator==(const DropCause& a, const DropCause& b) { return a.kind == b.kind && a.threshold == b.threshold; }
    friend bool operator!=(const DropCause& a, const DropCause& b) { return !(a == b); }
    friend bool operator<(const DropCause& a, const DropCause& b) {  // for counting by reason
        return a.kind != b.kind ? a.kind < b.kind : a.threshold < b.threshold;
    }
};

// Whether the rule compares a score with a bound (its reason carries the threshold).
bool has_threshold(DropReason kind);
// Whether the rule is a bound on the candidate's own scores (min/max similarity, change,
// back_score): a candidate it dropped lies outside the thresholds of its settings.
bool is_score_bound(DropReason kind);
// The GenerationOptions field (its JSON name) whose setting drops for this reason: "no_copy",
// "distinct", "protect", "min_similarity", ..., "near_duplicate", "drop_invalid_text". The server's
// metric label.
const char* option_of(DropReason kind);

// The printed reason: "copy", "similarity<0.8".
std::string to_string(const DropCause& cause);
// A printed reason back (history records of every version); nullopt when `text` is not exactly
// what to_string prints (" 0.8", "0.80" or "+0.8" for a bound are not), so what parses prints back
// byte for byte.
std::optional<DropCause> try_parse_drop_cause(std::string_view text);
// The same, refusing anything else with InvalidArgument in enum_names.h's wording:
// "unknown drop reason 'x' (expected copy, duplicate, lost_span, similarity<X, ... or near_duplicate>X)".
DropCause parse_drop_cause(std::string_view text);

}  // namespace t5s
