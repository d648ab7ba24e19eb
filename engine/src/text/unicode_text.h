#pragma once
// Code-point text operations the BERT BasicTokenizer needs, matching Python's unicodedata and
// str.lower() (tables generated from Python; see gen_unicode_tables.py for what they cover).
#include <string>
#include <string_view>

#include "text/unicode_tables.h"

namespace t5s::embed_detail {

CharClass char_class(char32_t cp);
std::u32string to_lower(const std::u32string& text);  // str.lower() without the final-sigma rule
std::u32string nfd(const std::u32string& text);       // unicodedata.normalize("NFD", ...)
std::u32string nfc(const std::u32string& text);       // unicodedata.normalize("NFC", ...)

// Code points back to UTF-8 (UTF-8 to code points: t5s::decode_code_points, t5s/text_offsets.h).
std::string u32_to_utf8(std::u32string_view text);

}  // namespace t5s::embed_detail
