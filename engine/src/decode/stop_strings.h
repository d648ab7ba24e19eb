#pragma once
// transformers' StopStringCriteria: a row ends once its text ends with one of the stop strings,
// the string overlapping the row's last token (a string inside earlier tokens only does not count).
// Tokens are read as transformers' slow T5Tokenizer writes them after a prefix (its "clean"
// vocabulary: "▁" a space, byte pieces their character, special tokens literally, trailing
// whitespace stripped), and lengths are in code points, as in Python. Torch-free.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace t5s {

class Tokenizer;

// Every token's text as StopStringCriteria.clean_tokenizer_vocab computes it, indexed by id.
using TokenTexts = std::vector<std::u32string>;
TokenTexts stop_string_token_texts(const Tokenizer& tokenizer);

class StopStrings {
public:
    // Throws InvalidArgument (as transformers' ValueError) when no token can end any of the strings.
    StopStrings(std::shared_ptr<const TokenTexts> texts, const std::vector<std::string>& stop_strings);
    // transformers' verdict on a row of `length` ids (the decoder start token first): only the last
    // (longest stop string) tokens are read; ids outside the tokenizer never match.
    bool ends(const int64_t* ids, int64_t length) const;

private:
    bool ends_with(const std::u32string& stop, const int64_t* ids, int64_t window) const;
    const std::u32string* text(int64_t id) const;

    std::shared_ptr<const TokenTexts> texts_;
    std::vector<std::u32string> stops_;
    int64_t window_ = 0;  // transformers' maximum_token_len: the longest stop string, in code points
};

// transformers' stopping criteria beyond the length and </s>, for one search: StopStringCriteria
// (per row) and MaxTimeCriteria (every row at once, once the time has passed).
struct StopCriteria {
    std::shared_ptr<const StopStrings> strings;                     // null: no stop strings
    std::optional<std::chrono::steady_clock::time_point> deadline;  // none: no max_time
    bool time_up() const { return deadline && std::chrono::steady_clock::now() > *deadline; }
    // Per row of `ids` (rows x length, row-major, the start token first): does a stop string end it?
    std::vector<char> rows_ending(const int64_t* ids, int64_t rows, int64_t length) const;
};

}  // namespace t5s
