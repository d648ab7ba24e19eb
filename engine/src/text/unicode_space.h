#pragma once
// Python's str.isspace() for one code point: T5Tokenizer strips around sentinels and trims the
// decoded text with Python's str.strip(), so we must agree on what whitespace is.
#include <string>
#include <string_view>

#include "t5s/text_offsets.h"

namespace t5s {

inline bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

inline std::string_view python_lstrip(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        char32_t cp;
        size_t len = utf8_decode(s, i, &cp);
        if (!is_python_space(cp)) break;
        i += len;
    }
    return s.substr(i);
}

inline std::string_view python_rstrip(std::string_view s) {
    size_t end = s.size();
    while (end > 0) {
        size_t start = code_point_start(s, end - 1);
        char32_t cp;
        utf8_decode(s, start, &cp);
        if (!is_python_space(cp)) break;
        end = start;
    }
    return s.substr(0, end);
}

inline std::string_view python_strip(std::string_view s) { return python_rstrip(python_lstrip(s)); }

}  // namespace t5s
