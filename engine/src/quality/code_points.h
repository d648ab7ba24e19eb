#pragma once
// UTF-8 to code points for the quality scores: sacrebleu works on Python str (code points), so
// chrF and the MinHash shingles must count one CJK character or emoji as one character too.
#include <string>
#include <string_view>

#include "t5s/tokenizer.h"
#include "text/unicode_space.h"

namespace t5s::quality_detail {

// Validates (throws InvalidArgument naming `what`) and decodes; whitespace (Python's
// str.isspace) is dropped when `drop_space`, else every run becomes one U+0020 and the ends are
// trimmed (Python's " ".join(s.split())).
inline std::u32string code_points(std::string_view text, const char* what, bool drop_space) {
    require_valid_utf8(text, what);
    std::u32string out;
    out.reserve(text.size());
    bool pending_space = false;
    for (size_t i = 0; i < text.size();) {
        char32_t cp;
        i += utf8_decode(text, i, &cp);
        if (is_python_space(cp)) {
            pending_space = !drop_space && !out.empty();
            continue;
        }
        if (pending_space) out.push_back(U' ');
        pending_space = false;
        out.push_back(cp);
    }
    return out;
}

}  // namespace t5s::quality_detail
