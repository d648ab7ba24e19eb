#include <string>
#include <string_view>

#include "text/utf8.h"

#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s {

// Strict UTF-8 check (no overlongs, no surrogates, max U+10FFFF): SentencePiece would otherwise
// silently map bad bytes to <unk>.
void require_valid_utf8(std::string_view s, const std::string& what) {
    size_t i = 0;
    const size_t n = s.size();
    auto bad = [&](size_t at) {
        throw Error(ErrorCode::InvalidArgument, what + ": invalid UTF-8 at byte " + std::to_string(at));
    };
    while (i < n) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) { ++i; continue; }
        int len;
        unsigned cp;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else bad(i);
        if (i + len > n) bad(i);
        for (int k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) bad(i);
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            bad(i);
        }
        i += len;
    }
}

bool is_valid_utf8(std::string_view s) {
    try {
        require_valid_utf8(s, "");
    } catch (const Error&) {
        return false;
    }
    return true;
}

}  // namespace t5s
