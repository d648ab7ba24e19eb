#include "spans/span_plan.h"

#include <algorithm>

#include "spans/span_detect.h"
#include "t5s/error.h"
#include "t5s/span_preview.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"
#include "text/unicode_space.h"

namespace t5s::spans {
namespace {

bool overlaps(const ByteSpan& a, const ByteSpan& b) { return a.begin < b.end && b.begin < a.end; }

std::string span_name(const Span& s) {
    return "[" + std::to_string(s.start) + ", " + std::to_string(s.end) + ", \"" + s.label + "\"]";
}

// The explicit spans as byte spans, checked; sorted by start.
std::vector<ByteSpan> explicit_byte_spans(const std::string& text, const std::vector<Span>& given) {
    const int64_t length = code_point_length(text);
    std::vector<ByteSpan> out;
    for (const Span& s : given) {
        if (!span_inside(s.start, s.end, length) || s.start == s.end)
            throw Error(ErrorCode::InvalidArgument, "spans: " + span_name(s) + " is not inside the text (0.." +
                                                        std::to_string(length) + " code points) or is empty");
        out.push_back({byte_of_code_point(text, s.start), byte_of_code_point(text, s.end), s.label});
    }
    std::sort(out.begin(), out.end(), [](const ByteSpan& a, const ByteSpan& b) { return a.begin < b.begin; });
    for (size_t i = 1; i < out.size(); ++i) {
        if (overlaps(out[i - 1], out[i]))
            throw Error(ErrorCode::InvalidArgument,
                        "spans: two spans overlap at code point " + std::to_string(code_point_of_byte(text, out[i].begin)));
    }
    return out;
}

// Whitespace next to the span on one side. At the text's start or end: whether the text has any
// whitespace at all (English yes, Chinese or Japanese usually not).
bool space_at(const std::string& text, size_t byte, bool before) {
    if (before ? byte == 0 : byte >= text.size()) {
        for (size_t i = 0; i < text.size();) {
            char32_t cp;
            i += utf8_decode(text, i, &cp);
            if (is_python_space(cp)) return true;
        }
        return false;
    }
    char32_t cp;
    utf8_decode(text, before ? code_point_start(text, byte - 1) : byte, &cp);
    return is_python_space(cp);
}

}  // namespace

SpanPlan plan_spans(const std::string& text, const std::vector<Span>& explicit_spans, const GenerationOptions& options,
                    int max_spans) {
    SpanPlan plan;
    const std::vector<std::string> detectors = parse_protect(options.protect);
    if (explicit_spans.empty() && detectors.empty() && options.protect_regex.empty()) {
        plan.masked = text;
        return plan;
    }
    require_valid_utf8(text, "input");
    std::vector<ByteSpan> chosen = explicit_byte_spans(text, explicit_spans);
    // Detected spans in start order, longer first at equal start; the first that fits wins.
    std::vector<ByteSpan> found = detect_spans(text, detectors, options.protect_regex);
    std::stable_sort(found.begin(), found.end(), [](const ByteSpan& a, const ByteSpan& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end - a.begin > b.end - b.begin;
    });
    for (const ByteSpan& d : found) {
        if (std::none_of(chosen.begin(), chosen.end(), [&](const ByteSpan& c) { return overlaps(c, d); })) chosen.push_back(d);
    }
    std::sort(chosen.begin(), chosen.end(), [](const ByteSpan& a, const ByteSpan& b) { return a.begin < b.begin; });
    if (static_cast<int>(chosen.size()) > max_spans)
        throw Error(ErrorCode::InvalidArgument, "spans: the input has " + std::to_string(chosen.size()) +
                                                    " protected spans; at most " + std::to_string(max_spans) +
                                                    " (the model's sentinels)");
    size_t at = 0;
    for (size_t k = 0; k < chosen.size(); ++k) {
        const ByteSpan& b = chosen[k];
        PlannedSpan p;
        p.text = text.substr(b.begin, b.end - b.begin);
        p.label = b.label;
        p.sentinel = static_cast<int>(k);
        p.space_before = space_at(text, b.begin, true);
        p.space_after = space_at(text, b.end, false);
        p.source = Span{code_point_of_byte(text, b.begin), code_point_of_byte(text, b.end), b.label};
        plan.masked += text.substr(at, b.begin - at) + "<extra_id_" + std::to_string(k) + ">";
        at = b.end;
        plan.spans.push_back(std::move(p));
    }
    plan.masked += text.substr(at);
    return plan;
}

}  // namespace t5s::spans

namespace t5s {

std::vector<Span> protected_spans(const std::string& text, const std::vector<Span>& explicit_spans, const std::string& protect,
                                  const std::string& protect_regex) {
    spans::check_protect_regex(protect_regex);  // a bad pattern: the message a generation gives
    GenerationOptions o;
    o.protect = protect;
    o.protect_regex = protect_regex;
    std::vector<Span> out;
    for (const auto& p : spans::plan_spans(text, explicit_spans, o).spans) out.push_back(p.source);
    return out;
}

}  // namespace t5s
