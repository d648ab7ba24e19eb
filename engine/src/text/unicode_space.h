#pragma once
// Python's str.isspace() for one code point: T5Tokenizer strips around sentinels and trims the
// decoded text with Python's str.strip(), so we must agree on what whitespace is.
#include <string>
#include <string_view>

namespace t5s {

inline bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Decodes the code point starting at s[i] (input already validated); returns its length in bytes.
inline size_t utf8_decode(std::string_view s, size_t i, char32_t* out) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { *out = c; return 1; }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if (i + len > s.size()) { *out = c; return 1; }
    char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    *out = cp;
    return len;
}

// Appends the UTF-8 encoding of `cp`.
inline void utf8_append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// Byte offset of the last code point start before `end` (end > 0).
inline size_t utf8_prev(std::string_view s, size_t end) {
    size_t i = end - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    return i;
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
        size_t start = utf8_prev(s, end);
        char32_t cp;
        utf8_decode(s, start, &cp);
        if (!is_python_space(cp)) break;
        end = start;
    }
    return s.substr(0, end);
}

inline std::string_view python_strip(std::string_view s) { return python_rstrip(python_lstrip(s)); }

}  // namespace t5s
