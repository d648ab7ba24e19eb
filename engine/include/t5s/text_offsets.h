#pragma once
// UTF-8 text and its offsets, in one place: decoding and encoding one code point, validation,
// code point <-> byte offsets, slicing and counting by code points, span bounds, and cutting
// bytes at character boundaries. Torch-free (engine/src/text/text_offsets.cpp, in t5s_core).
//
// The one rule for bytes that are not UTF-8: a code point is a well-formed UTF-8 sequence (strict:
// no overlongs, surrogates or values past U+10FFFF); where the bytes are ill-formed, each maximal
// subpart of an ill-formed sequence counts as one code point, U+FFFD when decoded. This is the
// Unicode standard's recommended practice (chapter 3.9, "U+FFFD substitution of maximal
// subparts"), which Python's bytes.decode("utf-8", "replace") and WHATWG browsers follow. Why:
// span offsets are Python str offsets (t5s/spans.h), so for malformed bytes they are the offsets
// into the str Python would make of them; every function here counts, splits and slices by that
// one decoder, so a split, a count and a slice of the same bytes always agree. Valid UTF-8 (all
// that the readers and the scheduler accept) counts the same under any rule.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace t5s {

constexpr char32_t kReplacementCharacter = 0xFFFD;

// The code point starting at byte `at` (< text.size()): stores it in *cp (U+FFFD for an ill-formed
// subpart) and whether it was well-formed in *valid (either may be null); returns its length in
// bytes (1..4).
size_t utf8_decode(std::string_view text, size_t at, char32_t* cp, bool* valid = nullptr);
// Appends the UTF-8 encoding of `cp` (a Unicode scalar value).
void utf8_append(std::string& out, char32_t cp);
// The text as code points, U+FFFD for each ill-formed subpart.
std::u32string decode_code_points(std::string_view text);
// The text split into its code points' bytes (an ill-formed subpart is one piece).
std::vector<std::string_view> split_code_points(std::string_view text);

// Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);
// Throws t5s::Error(InvalidArgument) naming `what` and the byte offset if `text` is not UTF-8.
// (Also declared in t5s/tokenizer.h, where its callers found it first.)
void require_valid_utf8(std::string_view text, const std::string& what);

// The start of the code point that holds byte `byte` (`byte` itself when one starts there or it
// is at or past the end).
size_t code_point_start(std::string_view text, size_t byte);
// The first code point boundary at or after `byte` (a byte inside a code point moves to its end;
// at most text.size()).
size_t code_point_end(std::string_view text, size_t byte);
// At most `max_bytes` of `text`, cut at a code point boundary (never inside a character).
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// Length in code points.
int64_t code_point_length(std::string_view text);
// Byte offset -> code point offset: the code points that start before `byte`, so a byte inside a
// code point rounds up to the next one; a byte past the end is the length.
int64_t code_point_of_byte(std::string_view text, size_t byte);
// Code point offset -> byte offset (negative: 0; past the end: text.size()).
size_t byte_of_code_point(std::string_view text, int64_t code_point);
// The code points [start, end) of `text`, as Python's text[start:end] for offsets >= 0: both are
// clamped to [0, length], and start >= end gives "".
std::string_view code_point_slice(std::string_view text, int64_t start, int64_t end);
// Whether [start, end) lies inside a text of `length` code points: 0 <= start <= end <= length.
bool span_inside(int64_t start, int64_t end, int64_t length);

}  // namespace t5s
