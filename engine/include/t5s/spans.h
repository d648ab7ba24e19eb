#pragma once
// Protected spans: parts of an input that a paraphrase must keep exactly — placeholders,
// numbers, URLs, e-mail addresses, a user's regex matches, or spans given with the row (entities).
// Offsets are Unicode code points, [start, end): what Python's str indexing, spaCy's character
// offsets, doccano and Label Studio use (not UTF-8 bytes, not UTF-16 units).
#include <cstdint>
#include <string>
#include <vector>

namespace t5s {

struct Span {
    int64_t start = 0;  // first code point
    int64_t end = 0;    // one past the last code point
    std::string label;  // the row's label, or the detector's name: number, placeholder, url, email, regex
    bool operator==(const Span& o) const { return start == o.start && end == o.end && label == o.label; }
};

// The detector names `protect` accepts (comma-separated): placeholders, numbers, urls, emails.
const std::vector<std::string>& span_detector_names();

}  // namespace t5s
