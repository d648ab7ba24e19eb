#pragma once
// UTF-8 validation as a test (the throwing form, require_valid_utf8, is in t5s/tokenizer.h).
#include <string_view>

namespace t5s {

// Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), as require_valid_utf8.
bool is_valid_utf8(std::string_view text);

}  // namespace t5s
