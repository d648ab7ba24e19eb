// Drop reasons (t5s/drop_reason.h): printing and parsing the contract text, the option of each rule.
#include "t5s/drop_reason.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace t5s {
namespace {

// The option that drops for each reason: one row per rule, in the enum's order.
struct ReasonOption {
    DropReason kind;
    const char* option;
};
constexpr ReasonOption kOptions[] = {
    {DropReason::Copy, "no_copy"},
    {DropReason::Duplicate, "distinct"},
    {DropReason::LostSpan, "protect"},
    {DropReason::SimilarityBelow, "min_similarity"},
    {DropReason::SimilarityAbove, "max_similarity"},
    {DropReason::ChangeBelow, "min_change"},
    {DropReason::ChangeAbove, "max_change"},
    {DropReason::BackScoreBelow, "min_back_score"},
    {DropReason::NearDuplicate, "near_duplicate"},
    {DropReason::InvalidText, "drop_invalid_text"},
};
static_assert(std::size(kOptions) == std::size(EnumNames<DropReason>::kNames), "one option per drop reason");

bool ends_with_comparison(std::string_view name) { return !name.empty() && (name.back() == '<' || name.back() == '>'); }

// A whole finite number (what %.4g printed), else nullopt.
std::optional<double> number_of(std::string_view text) {
    if (text.empty()) return std::nullopt;
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

bool has_threshold(DropReason kind) { return ends_with_comparison(to_string(kind)); }

bool is_score_bound(DropReason kind) { return has_threshold(kind) && kind != DropReason::NearDuplicate; }

const char* option_of(DropReason kind) {
    for (const auto& r : kOptions)
        if (r.kind == kind) return r.option;
    return "?";
}

std::string to_string(const DropCause& cause) {
    std::string text = to_string(cause.kind);
    if (!has_threshold(cause.kind)) return text;
    char bound[32];
    std::snprintf(bound, sizeof bound, "%.4g", cause.threshold);
    return text + bound;
}

std::optional<DropCause> try_parse_drop_cause(std::string_view text) {
    for (const auto& n : EnumNames<DropReason>::kNames) {
        const std::string_view name = n.name;
        if (!ends_with_comparison(name)) {
            if (text == name) return DropCause{n.value, 0.0};
        } else if (text.substr(0, name.size()) == name) {
            // Only the text to_string prints (so a stored reason prints back byte for byte).
            const auto v = number_of(text.substr(name.size()));
            if (v && to_string(DropCause{n.value, *v}) == text) return DropCause{n.value, *v};
        }
    }
    return std::nullopt;
}

DropCause parse_drop_cause(std::string_view text) {
    if (const auto cause = try_parse_drop_cause(text)) return *cause;
    std::vector<std::string> accepted;
    for (std::string name : enum_names<DropReason>()) accepted.push_back(ends_with_comparison(name) ? name + "X" : name);
    detail::throw_unknown_name(EnumNames<DropReason>::kWhat, text, accepted);
}

}  // namespace t5s
