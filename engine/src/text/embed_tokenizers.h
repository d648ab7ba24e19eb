#pragma once
// Constructors of the concrete embedding tokenizers (each in its own file).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "t5s/embed_tokenizer.h"
#include "text/embed_common.h"

namespace t5s {
struct TokenizerJson;
}

namespace t5s::embed_detail {

// What the WordPiece tokenizer runs on, from vocab.txt + tokenizer_config.json (transformers'
// slow BertTokenizer) or from tokenizer.json (the fast one).
struct WordPieceSpec {
    std::string source;               // the vocabulary's file, for errors
    std::vector<std::string> tokens;  // by id ("" for an id no token has)
    bool clean_text = true, chinese_chars = true, lower = true, strip_accents = true;
    bool nfc = true;                       // the slow BasicTokenizer composes to NFC; the fast one does not
    std::vector<std::string> never_split;  // slow only
    std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]", pad = "[PAD]";
    std::vector<SpecialToken> specials;  // matched in the text; id -1: looked up ([UNK] when absent)
    std::string subword_prefix = "##";
    int max_input_chars_per_word = 100;
    int model_max_length = 0;
};

WordPieceSpec wordpiece_spec_from_files(const std::filesystem::path& vocab_txt, const std::filesystem::path& tokenizer_config);
std::unique_ptr<EmbedTokenizer> make_wordpiece_tokenizer(WordPieceSpec spec);
std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const std::filesystem::path& sentencepiece_model,
                                                    const std::filesystem::path& tokenizer_config);
// XLM-R from a Unigram tokenizer.json (its vocabulary has the final ids already).
std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const TokenizerJson& tj, const std::filesystem::path& tokenizer_config);
// WordPiece or XLM-R, by the model type of `tokenizer_json`.
std::unique_ptr<EmbedTokenizer> make_tokenizer_from_json(const std::filesystem::path& tokenizer_json,
                                                         const std::filesystem::path& tokenizer_config);

}  // namespace t5s::embed_detail
