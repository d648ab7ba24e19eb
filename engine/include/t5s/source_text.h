#pragma once
// The one check of a text to generate from, for every front end: `generate --text`, serve's "text"
// and "texts", the app's source box — and the rule the input reader applies to a file row's text.
// Torch-free.
#include <string>
#include <string_view>

namespace t5s {

// Empty or only whitespace (spaces, tabs, CR, LF): nothing to generate from.
bool is_empty_text(std::string_view text);

// The message every front end gives for an empty text, after where it came from:
// "--text: empty text", "'texts[1]': empty text", "file.jsonl:3: empty text".
std::string empty_text_message(const std::string& where);

// Throws t5s::Error(InvalidArgument) with empty_text_message(where) when the text is empty, or
// require_valid_utf8's message when it is not UTF-8.
void require_source_text(std::string_view text, const std::string& where);

}  // namespace t5s
