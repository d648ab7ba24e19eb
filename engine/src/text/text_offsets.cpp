#include "t5s/text_offsets.h"

#include <algorithm>

#include "t5s/error.h"

namespace t5s {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// A lead byte's sequence: how many continuation bytes follow it, the range the first of them
// must lie in (the Unicode standard's table of well-formed sequences, which rules out overlongs,
// surrogates and values past U+10FFFF), and the lead's payload bits. `extra` < 0: no lead byte.
struct Lead {
    int extra;
    unsigned char first_low, first_high;
    char32_t bits;
};

Lead lead_of(unsigned char c) {
    auto lead = [](int extra, int first_low, int first_high, unsigned bits) {
        return Lead{extra, static_cast<unsigned char>(first_low), static_cast<unsigned char>(first_high), char32_t(bits)};
    };
    if (c >= 0xC2 && c <= 0xDF) return lead(1, 0x80, 0xBF, c & 0x1Fu);
    if (c >= 0xE0 && c <= 0xEF) return lead(2, c == 0xE0 ? 0xA0 : 0x80, c == 0xED ? 0x9F : 0xBF, c & 0x0Fu);
    if (c >= 0xF0 && c <= 0xF4) return lead(3, c == 0xF0 ? 0x90 : 0x80, c == 0xF4 ? 0x8F : 0xBF, c & 0x07u);
    return lead(-1, 0, 0, 0);
}

}  // namespace

size_t utf8_decode(std::string_view text, size_t at, char32_t* cp, bool* valid) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    char32_t value = c;
    size_t length = 1;
    bool ok = c < 0x80;
    if (!ok) {
        const Lead lead = lead_of(c);
        value = lead.bits;
        unsigned char low = lead.first_low, high = lead.first_high;
        // The maximal subpart: as many bytes as still begin a well-formed sequence.
        while (static_cast<int>(length) <= lead.extra && at + length < text.size()) {
            const unsigned char next = static_cast<unsigned char>(text[at + length]);
            if (next < low || next > high) break;
            value = (value << 6) | (next & 0x3F);
            low = 0x80, high = 0xBF;
            ++length;
        }
        ok = lead.extra > 0 && static_cast<int>(length) == lead.extra + 1;
    }
    if (cp) *cp = ok ? value : kReplacementCharacter;
    if (valid) *valid = ok;
    return length;
}

void utf8_append(std::string& out, char32_t cp) {
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

std::u32string decode_code_points(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        char32_t cp;
        i += utf8_decode(text, i, &cp);
        out.push_back(cp);
    }
    return out;
}

std::vector<std::string_view> split_code_points(std::string_view text) {
    std::vector<std::string_view> out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t n = utf8_decode(text, i, nullptr);
        out.push_back(text.substr(i, n));
        i += n;
    }
    return out;
}

bool is_valid_utf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        bool valid;
        i += utf8_decode(text, i, nullptr, &valid);
        if (!valid) return false;
    }
    return true;
}

// SentencePiece would otherwise silently map bad bytes to <unk>.
void require_valid_utf8(std::string_view text, const std::string& what) {
    for (size_t i = 0; i < text.size();) {
        bool valid;
        const size_t n = utf8_decode(text, i, nullptr, &valid);
        if (!valid) throw Error(ErrorCode::InvalidArgument, what + ": invalid UTF-8 at byte " + std::to_string(i));
        i += n;
    }
}

// Every byte that is not a continuation byte starts a code point (no sequence takes one in), so
// only a continuation byte can be inside one: that of the nearest lead within three bytes before
// it, when the lead's sequence reaches it.
size_t code_point_start(std::string_view text, size_t byte) {
    if (byte >= text.size() || !is_continuation(static_cast<unsigned char>(text[byte]))) return byte;
    for (size_t back = 1; back <= 3 && back <= byte; ++back) {
        const size_t lead = byte - back;
        if (is_continuation(static_cast<unsigned char>(text[lead]))) continue;
        return lead + utf8_decode(text, lead, nullptr) > byte ? lead : byte;
    }
    return byte;
}

size_t code_point_end(std::string_view text, size_t byte) {
    if (byte >= text.size()) return text.size();
    const size_t start = code_point_start(text, byte);
    return start == byte ? byte : start + utf8_decode(text, start, nullptr);
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    return text.substr(0, code_point_start(text, max_bytes));
}

int64_t code_point_length(std::string_view text) { return code_point_of_byte(text, text.size()); }

int64_t code_point_of_byte(std::string_view text, size_t byte) {
    int64_t n = 0;
    for (size_t i = 0; i < byte && i < text.size(); ++n) i += utf8_decode(text, i, nullptr);
    return n;
}

size_t byte_of_code_point(std::string_view text, int64_t code_point) {
    size_t i = 0;
    for (int64_t n = 0; n < code_point && i < text.size(); ++n) i += utf8_decode(text, i, nullptr);
    return i;
}

std::string_view code_point_slice(std::string_view text, int64_t start, int64_t end) {
    if (start >= end) return {};
    const size_t from = byte_of_code_point(text, start);
    return text.substr(from, byte_of_code_point(text.substr(from), end - std::max<int64_t>(start, 0)));
}

bool span_inside(int64_t start, int64_t end, int64_t length) { return 0 <= start && start <= end && end <= length; }

}  // namespace t5s
