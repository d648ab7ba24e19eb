// Sentence-encoder tokenizers from tokenizer.json (transformers' fast tokenizers): WordPiece with
// BertNormalizer + BertPreTokenizer, or XLM-R's Unigram.
#include "t5s/error.h"
#include "text/embed_tokenizers.h"
#include "text/tokenizer_json.h"

namespace t5s::embed_detail {
namespace {

WordPieceSpec wordpiece_spec_from_json(TokenizerJson tj, const std::filesystem::path& config_path) {
    WordPieceSpec spec;
    spec.source = tj.file;
    spec.tokens = std::move(tj.vocab);
    spec.clean_text = tj.clean_text;
    spec.chinese_chars = tj.handle_chinese_chars;
    spec.lower = tj.lowercase;
    spec.strip_accents = tj.strip_accents.value_or(tj.lowercase);
    spec.nfc = false;
    spec.unk = tj.unk_token;
    spec.subword_prefix = tj.subword_prefix;
    spec.max_input_chars_per_word = tj.max_input_chars_per_word;
    if (tj.prefix_tokens.size() != 1 || tj.suffix_tokens.size() != 1) {
        throw Error(ErrorCode::Unsupported, tj.file + ": a post_processor other than BERT's \"[CLS] $A [SEP]\"");
    }
    spec.cls = tj.prefix_tokens[0];
    spec.sep = tj.suffix_tokens[0];
    const TokenizerConfig cfg = read_tokenizer_config(config_path);
    spec.pad = cfg.pad_token.value_or("[PAD]");
    spec.model_max_length = cfg.model_max_length;
    for (const auto& a : tj.added_tokens) spec.specials.push_back({a.content, a.id, a.lstrip, a.rstrip});
    return spec;
}

}  // namespace

std::unique_ptr<EmbedTokenizer> make_tokenizer_from_json(const std::filesystem::path& tokenizer_json,
                                                         const std::filesystem::path& tokenizer_config) {
    TokenizerJson tj = read_tokenizer_json(tokenizer_json);
    if (tj.model == TokenizerJson::Model::WordPiece) {
        return make_wordpiece_tokenizer(wordpiece_spec_from_json(std::move(tj), tokenizer_config));
    }
    return make_xlmr_tokenizer(tj, tokenizer_config);
}

}  // namespace t5s::embed_detail
