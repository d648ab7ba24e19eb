#include "spans/span_restore.h"

#include <map>
#include <string_view>

#include "spans/sentinel_guard.h"
#include "t5s/text_offsets.h"
#include "text/unicode_space.h"

namespace t5s::spans {
namespace {

// Scripts written without spaces between words (CJK ideographs, kana, Hangul, full-width forms):
// a span next to them gets no space, even when its source (say English) had one.
bool unspaced_script(char32_t c) {
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

bool ends_with_space(const std::string& s) {
    if (s.empty()) return true;
    char32_t cp;
    utf8_decode(s, code_point_start(s, s.size() - 1), &cp);
    return is_python_space(cp) || unspaced_script(cp) || std::string_view("([{\"'/").find(s.back()) != std::string_view::npos;
}

bool starts_hugging(const std::string& s) {
    if (s.empty()) return true;
    char32_t cp;
    utf8_decode(s, 0, &cp);
    return is_python_space(cp) || unspaced_script(cp) ||
           std::string_view(".,;:!?)]}\"'/").find(s.front()) != std::string_view::npos;
}

size_t count_occurrences(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

}  // namespace

RestoredText restore_spans(const SpanPlan& plan, const std::vector<int>& ids, const Tokenizer& tok) {
    const SentinelRange range = sentinel_range(tok);
    std::map<int, const PlannedSpan*> by_id;
    for (const auto& s : plan.spans) by_id[sentinel_id(tok, s.sentinel)] = &s;
    std::map<int, int> seen;
    RestoredText out;
    out.complete = true;
    std::vector<int> segment;
    const PlannedSpan* previous = nullptr;  // the span right before the pending segment
    auto flush = [&] {
        std::string piece = tok.decode(segment, true);
        segment.clear();
        if (piece.empty()) return;
        if (previous && previous->space_after && !out.text.empty() && !starts_hugging(piece)) out.text += ' ';
        out.text += piece;
        previous = nullptr;
    };
    for (int id : ids) {
        if (id == tok.eos_id() || id == tok.pad_id()) continue;
        if (!range.contains(id)) {
            segment.push_back(id);
            continue;
        }
        flush();
        auto it = by_id.find(id);
        if (it == by_id.end() || seen[id]++ > 0) {  // a sentinel the input lacks, or a repeat: not restored
            out.complete = false;
            continue;
        }
        const PlannedSpan& s = *it->second;
        if ((s.space_before || (previous && previous->space_after)) && !out.text.empty() && !ends_with_space(out.text))
            out.text += ' ';
        const int64_t start = code_point_length(out.text);
        out.text += s.text;
        out.spans.push_back(Span{start, start + code_point_length(s.text), s.label});
        previous = &s;
    }
    flush();
    for (const auto& s : plan.spans) {
        if (seen[sentinel_id(tok, s.sentinel)] != 1) out.complete = false;
    }
    return out;
}

bool keeps_spans(const std::string& source, const std::string& candidate, const std::vector<PlannedSpan>& spans) {
    for (const auto& s : spans) {
        if (count_occurrences(candidate, s.text) != count_occurrences(source, s.text)) return false;
    }
    return true;
}

}  // namespace t5s::spans
