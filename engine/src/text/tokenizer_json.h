#pragma once
// The one reader of tokenizer.json (the Hugging Face `tokenizers` format), torch-free. It keeps
// what our tokenizers need from the three families we run, and refuses anything else with one
// line naming the type and the file:
//  - Unigram (T5 / mT5, XLM-R): the vocabulary with scores, unk id, byte fallback, the
//    `Precompiled` normalizer's char map (the very blob SentencePiece keeps in
//    normalizer_spec.precompiled_charsmap), the whitespace rules (Strip + Replace " {2,}" or
//    WhitespaceSplit) and the `Metaspace` prepend scheme. unigram_to_spiece_model turns the model
//    into a SentencePiece ModelProto, so the SentencePiece library runs both file kinds; the char
//    map is applied before it (json_unigram.h).
//  - WordPiece (BERT): the vocabulary, `BertNormalizer` options and `BertPreTokenizer`.
// Added tokens and the post-processor's special tokens are kept for both.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t5s {

// The Metaspace pre-tokenizer and the whitespace rules of the normalizer before it, as a choice
// between two SentencePiece runs of one piece of text: with the "▁" prefix or without it.
struct MetaspaceRule {
    enum class Prepend { Always, First, Never };  // Metaspace: where "▁" is put before a text
    Prepend prepend = Prepend::Always;
    bool collapse_spaces = false;   // Strip(right) + Replace(" {2,}"), or WhitespaceSplit
    bool whitespace_split = false;  // WhitespaceSplit: leading whitespace vanishes

    // Whether a run without the prefix is ever needed (else one SentencePiece model does all).
    bool needs_bare() const { return !(prepend == Prepend::Always && collapse_spaces); }
    // Whether `chunk` (text between added tokens; `at_start`: it starts the input) is run with
    // the prefix: SentencePiece then collapses/strips leading spaces and puts one "▁" first.
    bool prefix(std::string_view chunk, bool at_start) const;
};

struct TokenizerJson {
    enum class Model { Unigram, WordPiece };
    struct AddedToken {
        int id = 0;
        std::string content;
        bool special = false, lstrip = false, rstrip = false;
    };

    std::string file;  // what errors name
    Model model = Model::Unigram;
    std::vector<AddedToken> added_tokens;
    std::vector<std::string> prefix_tokens, suffix_tokens;  // post-processor: around one sequence

    // Unigram
    std::vector<std::pair<std::string, double>> pieces;  // by id
    int unk_id = -1;
    bool byte_fallback = false;
    std::string charsmap;  // decoded Precompiled blob; empty: no normalizer
    MetaspaceRule metaspace;

    // WordPiece
    std::vector<std::string> vocab;  // by id ("" for a hole)
    std::string unk_token = "[UNK]", subword_prefix = "##";
    int max_input_chars_per_word = 100;
    bool clean_text = false, handle_chinese_chars = false, lowercase = false;
    std::optional<bool> strip_accents;  // unset: follows lowercase

    // Id of `content` among the added tokens, or -1.
    int added_id(const std::string& content) const;
};

// Throws t5s::Error (FileNotFound, CorruptFile, Unsupported) naming `path`.
TokenizerJson read_tokenizer_json(const std::filesystem::path& path);

// Pieces [0, count) of a Unigram tokenizer.json as a serialized SentencePiece ModelProto with
// an identity normalizer (whitespace rules only: the char map is applied before, json_unigram.h).
// `add_dummy_prefix` is SentencePiece's "▁ before the text" switch (the caller picks per text
// when the prepend scheme is not Always).
std::string unigram_to_spiece_model(const TokenizerJson& tj, size_t count, bool add_dummy_prefix);

}  // namespace t5s
