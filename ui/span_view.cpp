#include "span_view.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace t5s::ui {

namespace {

std::vector<std::string> detector_list(const std::string& protect) {
    std::vector<std::string> out;
    std::stringstream in(protect);
    std::string name;
    while (std::getline(in, name, ',')) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (!name.empty()) out.push_back(name);
    }
    return out;
}

std::vector<std::string> code_points(const std::string& text) {
    std::vector<std::string> out;
    for (auto cp : split_code_points(text)) out.emplace_back(cp);
    return out;
}

bool is_space(const std::string& cp) { return cp == " " || cp == "\t" || cp == "\n" || cp == "\r" || cp == "\u3000"; }

bool overlaps(const Span& a, const Span& b) { return a.start < b.end && b.start < a.end; }

}  // namespace

bool protects(const std::string& protect, const std::string& detector) {
    const auto names = detector_list(protect);
    return std::find(names.begin(), names.end(), detector) != names.end();
}

std::string with_detector(const std::string& protect, const std::string& detector, bool on) {
    std::string out;
    for (const auto& name : span_detector_names()) {
        if (name == detector ? !on : !protects(protect, name)) continue;
        out += (out.empty() ? "" : ",") + name;
    }
    return out;
}

SpanColour span_colour(const std::string& label) {
    // Saturated, and apart from the theme's blue, so that a span stands out from a selection.
    if (label == "number") return {196, 118, 18};
    if (label == "placeholder") return {150, 60, 175};
    if (label == "url") return {18, 140, 125};
    if (label == "email") return {175, 80, 40};
    if (label == "regex") return {125, 135, 20};
    static const SpanColour palette[] = {{190, 55, 65}, {45, 150, 70},  {185, 70, 150}, {30, 130, 170},
                                         {205, 95, 30}, {120, 85, 200}, {25, 150, 150}, {165, 120, 30}};
    uint32_t h = 2166136261u;  // FNV-1a: the same colour for a label every run
    for (unsigned char c : label) h = (h ^ c) * 16777619u;
    return palette[h % (sizeof palette / sizeof palette[0])];
}

std::vector<MarkedRun> mark_spans(const std::vector<DiffSegment>& diff, const std::vector<Span>& spans) {
    std::vector<MarkedRun> out;
    auto span_at = [&](int64_t pos) {
        for (size_t k = 0; k < spans.size(); ++k)
            if (spans[k].start <= pos && pos < spans[k].end) return int(k);
        return -1;
    };
    int64_t pos = 0;  // code points of the text side so far
    for (const auto& seg : diff) {
        if (seg.op == DiffOp::Delete) {
            out.push_back({seg.op, seg.text, -1, false});
            continue;
        }
        for (auto cp : split_code_points(seg.text)) {
            const int span = span_at(pos++);
            if (out.empty() || out.back().op != seg.op || out.back().span != span || out.back().span_end)
                out.push_back({seg.op, std::string(), span, false});
            out.back().text += cp;
            out.back().span_end = span >= 0 && pos == spans[size_t(span)].end;
        }
    }
    return out;
}

std::vector<Span> carry_spans(const std::string& before, const std::vector<Span>& spans, const std::string& after) {
    const auto old_cps = code_points(before), new_cps = code_points(after);
    auto same_at = [&](const std::vector<std::string>& piece, int64_t at) {
        if (at < 0 || at + int64_t(piece.size()) > int64_t(new_cps.size())) return false;
        return std::equal(piece.begin(), piece.end(), new_cps.begin() + at);
    };
    std::vector<Span> kept;
    for (const Span& s : spans) {
        if (s.start < 0 || s.end > int64_t(old_cps.size()) || s.start >= s.end) continue;
        const std::vector<std::string> piece(old_cps.begin() + s.start, old_cps.begin() + s.end);
        const int64_t len = int64_t(piece.size());
        auto free_at = [&](int64_t at) {
            const Span moved{at, at + len, s.label};
            return same_at(piece, at) &&
                   std::none_of(kept.begin(), kept.end(), [&](const Span& k) { return overlaps(k, moved); });
        };
        int64_t best = -1;
        if (free_at(s.start)) best = s.start;
        for (int64_t at = 0; best != s.start && at + len <= int64_t(new_cps.size()); ++at)
            if (free_at(at) && (best < 0 || std::llabs(at - s.start) < std::llabs(best - s.start))) best = at;
        if (best >= 0) kept.push_back({best, best + len, s.label});
    }
    return kept;
}

std::optional<Span> selection_span(const std::string& text, size_t a, size_t b, const std::string& label) {
    if (a > b) std::swap(a, b);
    const auto cps = code_points(text);
    int64_t start = code_point_of_byte(text, a), end = code_point_of_byte(text, b);
    end = std::min<int64_t>(end, int64_t(cps.size()));
    while (start < end && is_space(cps[size_t(start)])) ++start;
    while (end > start && is_space(cps[size_t(end - 1)])) --end;
    if (start >= end) return std::nullopt;
    return Span{start, end, label};
}

std::vector<Span> add_span(std::vector<Span> spans, const Span& added) {
    spans.erase(std::remove_if(spans.begin(), spans.end(), [&](const Span& s) { return overlaps(s, added); }), spans.end());
    auto at = std::find_if(spans.begin(), spans.end(), [&](const Span& s) { return s.start > added.start; });
    spans.insert(at, added);
    return spans;
}

std::string forced_tag(int forced) { return "forced " + std::to_string(forced); }

std::string forced_tooltip(int forced) {
    return std::to_string(forced) + (forced == 1 ? " protected span was" : " protected spans were") +
           " not produced by the model on its own: the decoder put it in before the length ran out, so its place in "
           "the sentence may read oddly. Check the words around it (or allow more new tokens).";
}

SpanCounts span_counts(const GenerationResult& r) {
    SpanCounts c;
    c.spans = int(r.spans.size());
    for (const auto& d : r.dropped) c.lost += d.reason.kind == DropReason::LostSpan;  // a span not kept exactly once
    for (const auto& cand : r.candidates) c.forced += cand.forced_spans > 0;
    return c;
}

std::string span_counts_text(const SpanCounts& c) {
    if (c.spans == 0 && c.lost == 0 && c.forced == 0) return "";
    std::string s = std::to_string(c.spans) + (c.spans == 1 ? " span" : " spans");
    if (c.lost) s += ", " + std::to_string(c.lost) + " lost";
    if (c.forced) s += ", " + std::to_string(c.forced) + " forced";
    return s;
}

}  // namespace t5s::ui
