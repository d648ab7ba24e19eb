// The check of a text to generate from (t5s/source_text.h).
#include "t5s/source_text.h"

#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s {

bool is_empty_text(std::string_view text) { return text.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string empty_text_message(const std::string& where) { return where + ": empty text"; }

void require_source_text(std::string_view text, const std::string& where) {
    if (is_empty_text(text)) throw Error(ErrorCode::InvalidArgument, empty_text_message(where));
    require_valid_utf8(text, where);
}

}  // namespace t5s
