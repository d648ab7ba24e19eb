#pragma once
// Span detectors (t5s/spans.h): placeholders, numbers with units, URLs, e-mail addresses and a
// user's regex, found in UTF-8 text. Offsets here are bytes; span_plan.h converts to code points.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace t5s::spans {

struct ByteSpan {
    size_t begin = 0, end = 0;  // bytes, [begin, end)
    std::string label;
};

// Parses `protect` ("placeholders,numbers,urls,emails"; "" = none) into detector names; throws
// InvalidArgument naming an unknown one.
std::vector<std::string> parse_protect(const std::string& protect);
// Throws InvalidArgument naming protect_regex when `regex` is too long or not valid RE2 syntax
// (RE2 has no backreferences or lookaround; "" is none).
void check_protect_regex(const std::string& regex);

// Every match of the detectors named (parse_protect's names) and of `regex`, in text order by
// start; matches may overlap (merge_spans resolves that). Labels: placeholder, number, url,
// email, regex.
std::vector<ByteSpan> detect_spans(std::string_view text, const std::vector<std::string>& detectors, const std::string& regex);

}  // namespace t5s::spans
