#pragma once
// Pieces shared by the WordPiece and XLM-R tokenizers: tokenizer_config.json fields and the split
// of input text around special tokens written in it (transformers' added-tokens trie).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace t5s::embed_detail {

struct TokenizerConfig {
    std::optional<bool> do_lower_case, strip_accents, tokenize_chinese_chars;
    std::vector<std::string> never_split;
    std::optional<std::string> unk_token, cls_token, sep_token, pad_token, mask_token;
    int model_max_length = 0;  // 0: not given or "unlimited" (transformers writes ~1e30)
};

// Empty path or missing file: all defaults. Throws CorruptFile naming the file on bad JSON/types.
TokenizerConfig read_tokenizer_config(const std::filesystem::path& path);

struct SpecialToken {
    std::string text;
    int id;
    bool lstrip = false;  // eats the whitespace before it (XLM-R's <mask>)
    bool rstrip = false;  // eats the whitespace after it
};

struct TextChunk {
    std::string_view text;  // plain text when special_id < 0
    int special_id = -1;
};

// Splits at the earliest, longest special token, like transformers' Trie.split.
std::vector<TextChunk> split_special_tokens(std::string_view text, const std::vector<SpecialToken>& specials);

// What both tokenizers' encode_plain do around their own algorithm: validate the UTF-8, emit the
// ids of special tokens written in the text, and pass each plain chunk to `encode_chunk`, which
// appends its ids.
std::vector<int> encode_around_specials(std::string_view text, const std::vector<SpecialToken>& specials,
                                        const std::function<void(std::string_view, std::vector<int>&)>& encode_chunk);

}  // namespace t5s::embed_detail
