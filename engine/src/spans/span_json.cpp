#include "t5s/span_json.h"

#include <algorithm>

#include "t5s/error.h"
#include "t5s/text_offsets.h"

namespace t5s {
namespace {

int64_t offset_of(const nlohmann::json& v, const std::string& where) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
        throw Error(ErrorCode::InvalidArgument, where + ": span offsets must be integers >= 0 (code points)");
    return v.get<int64_t>();
}

std::string label_of(const nlohmann::json& v, const std::string& where) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return v.dump();
    throw Error(ErrorCode::InvalidArgument, where + ": a span label must be a string");
}

const nlohmann::json* field(const nlohmann::json& o, const char* a, const char* b) {
    if (o.contains(a)) return &o[a];
    if (o.contains(b)) return &o[b];
    return nullptr;
}

}  // namespace

nlohmann::json spans_to_json(const std::vector<Span>& spans) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : spans) out.push_back({s.start, s.end, s.label});
    return out;
}

std::vector<Span> spans_from_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_array()) throw Error(ErrorCode::InvalidArgument, where + ": spans must be a list of [start, end, label]");
    std::vector<Span> out;
    for (const auto& s : j) {
        Span span;
        if (s.is_array() && (s.size() == 2 || s.size() == 3)) {
            span.start = offset_of(s[0], where);
            span.end = offset_of(s[1], where);
            if (s.size() == 3) span.label = label_of(s[2], where);
        } else if (s.is_object() && field(s, "start", "start_offset") && field(s, "end", "end_offset")) {
            span.start = offset_of(*field(s, "start", "start_offset"), where);
            span.end = offset_of(*field(s, "end", "end_offset"), where);
            if (s.contains("label")) span.label = label_of(s["label"], where);
        } else {
            throw Error(ErrorCode::InvalidArgument,
                        where + ": a span must be [start, end, label] or {\"start\", \"end\", \"label\"}");
        }
        if (span.end <= span.start) throw Error(ErrorCode::InvalidArgument, where + ": a span must have end > start");
        out.push_back(std::move(span));
    }
    return out;
}

bool is_span_field(const std::string& name) {
    for (const char* known : kSpanFieldNames)
        if (name == known) return true;
    return false;
}

const nlohmann::json* spans_field(const nlohmann::json& row, const char** name_out) {
    if (!row.is_object()) return nullptr;
    for (const char* name : kSpanFieldNames) {
        const auto it = row.find(name);
        if (it == row.end() || it->is_null()) continue;
        if (name_out) *name_out = name;
        return &*it;
    }
    return nullptr;
}

void check_spans(const std::string& text, const std::vector<Span>& spans, const std::string& where) {
    const int64_t length = code_point_length(text);
    std::vector<Span> sorted = spans;
    std::sort(sorted.begin(), sorted.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    for (size_t i = 0; i < sorted.size(); ++i) {
        const Span& s = sorted[i];
        if (!span_inside(s.start, s.end, length))
            throw Error(ErrorCode::InvalidArgument, where + ": span [" + std::to_string(s.start) + ", " + std::to_string(s.end) +
                                                        "] is not inside the text (" + std::to_string(length) + " code points)");
        if (i > 0 && sorted[i - 1].end > s.start)
            throw Error(ErrorCode::InvalidArgument, where + ": two spans overlap at code point " + std::to_string(s.start));
    }
}

}  // namespace t5s
