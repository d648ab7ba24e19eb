// The one text-offset module (t5s/text_offsets.h) against the copies it replaced, kept here as
// they were (namespace old_copies) so the comparison outlives them: on valid UTF-8 (empty, ASCII,
// 2-, 3- and 4-byte characters, combining marks) every copy and the module agree at every offset;
// on malformed bytes the copies disagreed with each other, and the module follows one rule (the
// Unicode standard's maximal subparts, as Python's bytes.decode("utf-8", "replace")): the cases
// where a copy's answer changed are pinned one by one below.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "t5s/error.h"
#include "t5s/text_offsets.h"

using namespace t5s;

namespace old_copies {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// engine/src/text/unicode_space.h utf8_decode: lenient (the length from the lead byte alone).
size_t lenient_decode(std::string_view s, size_t i, char32_t* out) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
        *out = c;
        return 1;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if (i + len > s.size()) {
        *out = c;
        return 1;
    }
    char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    *out = cp;
    return len;
}

// engine/src/spans/span_plan.cpp byte_offset / code_point_offset (behind span_preview.h).
size_t span_byte_offset(const std::string& text, int64_t code_point) {
    size_t i = 0;
    char32_t cp;
    for (int64_t n = 0; n < code_point && i < text.size(); ++n) i += lenient_decode(text, i, &cp);
    return i;
}
int64_t span_code_point_offset(const std::string& text, size_t byte) {
    int64_t n = 0;
    char32_t cp;
    for (size_t i = 0; i < byte && i < text.size(); ++n) i += lenient_decode(text, i, &cp);
    return n;
}

// engine/src/spans/span_json.cpp check_spans: the length in code points.
int64_t span_json_length(const std::string& text) {
    int64_t length = 0;
    for (unsigned char c : text) length += (c & 0xC0) != 0x80;
    return length;
}

// engine/src/input/labelstudio_source.cpp code_point_slice.
std::string input_slice(const std::string& s, int64_t start, int64_t end) {
    size_t from = s.size(), to = s.size();
    int64_t cp = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i < s.size() && continuation(s[i])) continue;
        if (cp == start) from = i;
        if (cp == end) to = i;
        ++cp;
    }
    return from <= to ? s.substr(from, to - from) : std::string();
}

// app/cli/labelled_output.cpp code_points.
std::string cli_slice(const std::string& s, int64_t start, int64_t end) {
    size_t i = 0, from = 0;
    int64_t cp = 0;
    for (; i < s.size() && cp < end; ++i) {
        if (continuation(s[i])) continue;
        if (cp++ == start) from = i;
    }
    while (i < s.size() && continuation(s[i])) ++i;
    return s.substr(from, i - from);
}

// engine/src/history/hf_dataset_card.cpp cell, engine/src/input/row_fields.cpp shown_name and
// engine/src/options/python_call_text.cpp shortened: cut at most max bytes, back off continuations.
std::string cut(const std::string& text, size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    size_t at = max_bytes;
    while (at > 0 && continuation(text[at])) --at;
    return text.substr(0, at);
}

// engine/src/spans/span_detect.cpp find_all: a match widened to whole code points.
std::pair<size_t, size_t> widen(const std::string& s, size_t b, size_t e) {
    while (b > 0 && continuation(s[b])) --b;
    while (e < s.size() && continuation(s[e])) ++e;
    return {b, e};
}

// engine/src/text/unicode_space.h utf8_prev, also written out in span_plan.cpp space_at and
// span_restore.cpp ends_with_space.
size_t prev_start(const std::string& s, size_t end) {
    size_t i = end - 1;
    while (i > 0 && continuation(s[i])) --i;
    return i;
}

// engine/src/decode/stop_strings.cpp code_points: a byte that starts no sequence becomes U+FFFD.
std::u32string stop_code_points(const std::string& s) {
    std::u32string out;
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
        char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
        bool ok = extra >= 0 && i + static_cast<size_t>(extra) < s.size();
        for (int k = 1; ok && k <= extra; ++k) {
            const unsigned char n = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
            ok = (n & 0xC0) == 0x80;
            cp = (cp << 6) | (n & 0x3F);
        }
        out.push_back(ok ? cp : U'\uFFFD');
        i += ok ? static_cast<size_t>(extra) + 1 : 1;
    }
    return out;
}

// ui/text_diff.cpp split_code_points: invalid bytes become single-byte pieces.
std::vector<std::string_view> ui_split(std::string_view s) {
    std::vector<std::string_view> out;
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        if (i + n > s.size()) n = 1;
        for (size_t k = 1; k < n; ++k)
            if (!continuation(s[i + k])) {
                n = 1;
                break;
            }
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

// engine/src/text/utf8.cpp require_valid_utf8: the byte it names, or npos for valid text.
size_t first_invalid(std::string_view s) {
    const size_t n = s.size();
    for (size_t i = 0; i < n;) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        int len;
        unsigned cp;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else return i;
        if (i + len > n) return i;
        for (int k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += len;
    }
    return std::string_view::npos;
}

}  // namespace old_copies

namespace {

const std::vector<std::string> kValid = {"",
                                         "a",
                                         "plain ASCII text",
                                         "Zürich",
                                         "Zu\u0308rich",
                                         "日本語のテキスト",
                                         "a\U0001F600b",
                                         "\U0001F600\U0001F469\u200D\U0001F4BB",
                                         "mixed: é 日 \U00010348 end",
                                         "\u00A0\u3000 spaces",
                                         "\U0010FFFF\uFFFD\u0800\u0080\u007F"};

// Malformed bytes: stray continuations, truncated sequences, overlongs, surrogates, values past
// U+10FFFF, bytes that are never UTF-8.
const std::vector<std::string> kMalformed = {"\x80",
                                             "a\x80"
                                             "b",
                                             "\x80\x80\x80\x80\x80",
                                             "\xE6\x97",
                                             "\xE6\x97"
                                             "a",
                                             "\xC0\x80",
                                             "\xED\xA0\x80",
                                             "\xF4\x90\x80\x80",
                                             "\xF0\x9F\x98",
                                             "x\xF0\x9F\x98",
                                             "\xFF\xFE",
                                             "\xC2",
                                             "\xE0\x80\x80",
                                             "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"};

std::vector<std::string> all_texts() {
    std::vector<std::string> out = kValid;
    out.insert(out.end(), kMalformed.begin(), kMalformed.end());
    return out;
}

std::string str(std::string_view v) { return std::string(v); }

std::vector<std::string> strings(const std::vector<std::string_view>& pieces) {
    return std::vector<std::string>(pieces.begin(), pieces.end());
}

}  // namespace

TEST_CASE("text offsets: valid UTF-8 gives what every old copy gave, at every offset", "[text_offsets]") {
    for (const std::string& text : kValid) {
        INFO("text: " << text);
        const int64_t length = code_point_length(text);
        CHECK(length == old_copies::span_json_length(text));
        CHECK(length == old_copies::span_code_point_offset(text, text.size()));
        CHECK(is_valid_utf8(text));
        CHECK(old_copies::first_invalid(text) == std::string_view::npos);
        CHECK(strings(split_code_points(text)) == strings(old_copies::ui_split(text)));
        CHECK(decode_code_points(text) == old_copies::stop_code_points(text));
        for (size_t i = 0; i < text.size();) {
            char32_t want, got;
            const size_t n = old_copies::lenient_decode(text, i, &want);
            CHECK(utf8_decode(text, i, &got) == n);
            CHECK(got == want);
            std::string encoded;
            utf8_append(encoded, got);
            CHECK(encoded == text.substr(i, n));
            i += n;
        }
        for (size_t byte = 0; byte <= text.size() + 2; ++byte) {
            INFO("byte " << byte);
            CHECK(code_point_of_byte(text, byte) == old_copies::span_code_point_offset(text, byte));
            CHECK(str(utf8_prefix(text, byte)) == old_copies::cut(text, byte));
            if (byte < text.size()) {
                const auto widened = old_copies::widen(text, byte, byte);
                CHECK(code_point_start(text, byte) == widened.first);
                CHECK(code_point_end(text, byte) == widened.second);
            }
            if (byte > 0 && byte <= text.size()) CHECK(code_point_start(text, byte - 1) == old_copies::prev_start(text, byte));
        }
        for (int64_t start = 0; start <= length; ++start) {
            CHECK(byte_of_code_point(text, start) == old_copies::span_byte_offset(text, start));
            for (int64_t end = start; end <= length; ++end) {
                INFO("[" << start << ", " << end << ")");
                CHECK(str(code_point_slice(text, start, end)) == old_copies::input_slice(text, start, end));
                if (start < end) CHECK(str(code_point_slice(text, start, end)) == old_copies::cli_slice(text, start, end));
                CHECK(span_inside(start, end, length));
            }
        }
    }
}

TEST_CASE("text offsets: past the ends", "[text_offsets]") {
    const std::string text = "a\U0001F600b";  // 6 bytes, 3 code points
    CHECK(byte_of_code_point(text, -1) == 0);
    CHECK(byte_of_code_point(text, 99) == text.size());
    CHECK(code_point_of_byte(text, 99) == 3);
    CHECK(code_point_of_byte(text, 2) == 2);  // inside the emoji: rounds up past it
    // Slices follow Python's text[start:end] for offsets >= 0: the end is clamped to the length.
    CHECK(str(code_point_slice(text, 1, 99)) == "\U0001F600b");
    CHECK(old_copies::input_slice(text, 1, 99) == "\U0001F600b");
    CHECK(str(code_point_slice(text, 3, 9)).empty());
    CHECK(str(code_point_slice(text, 2, 1)).empty());
    // Changed: the CLI's copy gave the whole text for a start at or past the end, and from the
    // start on for an empty range.
    CHECK(old_copies::cli_slice(text, 3, 4) == text);
    CHECK(str(code_point_slice(text, 3, 4)).empty());
    CHECK(old_copies::cli_slice(text, 1, 1) == "a");
    CHECK(str(code_point_slice(text, 1, 1)).empty());
    // Changed: the input reader's copy gave "" for a negative start; now it is clamped to 0.
    CHECK(old_copies::input_slice(text, -1, 1).empty());
    CHECK(str(code_point_slice(text, -1, 1)) == "a");
    CHECK(str(code_point_slice("", 0, 0)).empty());
    CHECK(span_inside(0, 0, 0));
    CHECK_FALSE(span_inside(-1, 1, 3));
    CHECK_FALSE(span_inside(2, 1, 3));
    CHECK_FALSE(span_inside(0, 4, 3));
}

TEST_CASE("text offsets: malformed bytes count as Python's decode with errors='replace'", "[text_offsets]") {
    // The Unicode standard's own example of maximal subparts (chapter 3.9, U+FFFD substitution):
    // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a, 3 x U+FFFD, b, U+FFFD, c, 2 x U+FFFD, d.
    const std::string example = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
    CHECK(decode_code_points(example) == U"a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd");
    CHECK(strings(split_code_points(example)) ==
          std::vector<std::string>{"a", "\xF1\x80\x80", "\xE1\x80", "\xC2", "b", "\x80", "c", "\x80", "\xBF", "d"});
    CHECK(code_point_length(example) == 10);
    // Every function agrees with the one split, on every malformed text and offset.
    for (const std::string& text : all_texts()) {
        INFO("text bytes: " << text.size());
        const auto pieces = split_code_points(text);
        CHECK(code_point_length(text) == static_cast<int64_t>(pieces.size()));
        size_t at = 0;
        for (size_t k = 0; k < pieces.size(); ++k) {
            CHECK(byte_of_code_point(text, static_cast<int64_t>(k)) == at);
            CHECK(code_point_of_byte(text, at) == static_cast<int64_t>(k));
            CHECK(str(code_point_slice(text, static_cast<int64_t>(k), static_cast<int64_t>(k) + 1)) == str(pieces[k]));
            for (size_t inside = at + 1; inside < at + pieces[k].size(); ++inside) {
                CHECK(code_point_start(text, inside) == at);
                CHECK(code_point_end(text, inside) == at + pieces[k].size());
                CHECK(code_point_of_byte(text, inside) == static_cast<int64_t>(k) + 1);
            }
            CHECK(code_point_start(text, at) == at);
            at += pieces[k].size();
        }
    }
}

TEST_CASE("text offsets: validation names the same byte as before", "[text_offsets]") {
    for (const std::string& text : all_texts()) {
        const size_t bad = old_copies::first_invalid(text);
        CHECK(is_valid_utf8(text) == (bad == std::string_view::npos));
        if (bad == std::string_view::npos) {
            CHECK_NOTHROW(require_valid_utf8(text, "text"));
        } else {
            CHECK_THROWS_WITH(require_valid_utf8(text, "text"), "text: invalid UTF-8 at byte " + std::to_string(bad));
        }
    }
}

TEST_CASE("text offsets: where the old copies read malformed bytes differently (pinned changes)", "[text_offsets]") {
    // A stray continuation byte: span_plan's decoder took it for a 4-byte lead and swallowed
    // three more bytes; span_json's count and the slicers merged it into the code point before.
    const std::string stray =
        "\x80"
        "abc";
    CHECK(old_copies::span_code_point_offset(stray, stray.size()) == 1);
    CHECK(code_point_length(stray) == 4);
    const std::string inner =
        "a\x80"
        "b";
    CHECK(old_copies::span_json_length(inner) == 2);
    CHECK(old_copies::input_slice(inner, 0, 1) == "a\x80");
    CHECK(code_point_length(inner) == 3);
    CHECK(str(code_point_slice(inner, 0, 1)) == "a");
    // Cutting before a stray continuation byte backed off to the character before it.
    CHECK(old_copies::cut("ab\x80\x80"
                          "c",
                          3) == "a");
    CHECK(str(utf8_prefix("ab\x80\x80"
                          "c",
                          3)) == "ab\x80");
    // A truncated sequence followed by ASCII: the UI and stop strings made one piece per byte;
    // now the truncated prefix is one code point, as Python decodes it.
    const std::string truncated =
        "\xE6\x97"
        "a";
    CHECK(old_copies::ui_split(truncated).size() == 3);
    CHECK(old_copies::stop_code_points(truncated) == U"\uFFFD\uFFFDa");
    CHECK(split_code_points(truncated).size() == 2);
    CHECK(decode_code_points(truncated) == U"\uFFFDa");
    // An overlong NUL and a surrogate: the UI and stop strings decoded them to U+0000 and U+D800
    // (a NUL once emptied the UI's glyph ranges); now they are not characters but U+FFFD per byte.
    CHECK(old_copies::stop_code_points("\xC0\x80") == std::u32string(1, U'\0'));
    CHECK(old_copies::ui_split("\xC0\x80").size() == 1);
    CHECK(decode_code_points("\xC0\x80") == U"\uFFFD\uFFFD");
    CHECK(old_copies::stop_code_points("\xED\xA0\x80") == std::u32string(1, char32_t(0xD800)));
    CHECK(decode_code_points("\xED\xA0\x80") == U"\uFFFD\uFFFD\uFFFD");
    // Unchanged: bytes that are never UTF-8 are one piece each.
    CHECK(strings(split_code_points("\xFF\xFE")) == strings(old_copies::ui_split("\xFF\xFE")));
}
