#include "text_normalize.h"

#include "unicode_space.h"

namespace t5s {

static void append_utf8(std::string& out, char32_t cp) {
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

std::string normalize_for_compare(std::string_view text) {
    std::string out;
    bool pending_space = false;
    for (size_t i = 0; i < text.size();) {
        char32_t cp;
        i += utf8_decode(text, i, &cp);
        if (is_python_space(cp)) {
            pending_space = !out.empty();
            continue;
        }
        if (cp >= 0xFF01 && cp <= 0xFF5E) cp -= 0xFEE0;  // full-width ASCII -> ASCII
        if (pending_space) out.push_back(' ');
        pending_space = false;
        append_utf8(out, cp);
    }
    return out;
}

}  // namespace t5s
