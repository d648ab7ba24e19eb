#include "text/text_normalize.h"

#include "text/unicode_space.h"

namespace t5s {

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
        utf8_append(out, cp);
    }
    return out;
}

}  // namespace t5s
