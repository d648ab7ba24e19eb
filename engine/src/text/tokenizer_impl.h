#pragma once
// t5s::Tokenizer's state, shared by tokenizer.cpp (spiece.model, transformers' slow T5Tokenizer)
// and tokenizer_from_json.cpp (tokenizer.json, transformers' fast T5TokenizerFast).
#include <sentencepiece_processor.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "t5s/tokenizer.h"
#include "text/embed_common.h"
#include "text/json_unigram.h"

namespace t5s {

struct Tokenizer::Impl {
    sentencepiece::SentencePieceProcessor sp;
    std::filesystem::path path;
    int sp_size = 0;
    int extra_ids = 100;
    bool byte_fallback = false;

    // From tokenizer.json only (fast == true): the added tokens split the text (with their own
    // lstrip/rstrip), </s> is always appended, and each piece of text between them goes through
    // the `tokenizers` normalizer and Metaspace rule (json_unigram.h; sp is its prefixed model).
    bool fast = false;
    std::vector<embed_detail::SpecialToken> added;
    std::unique_ptr<JsonUnigram> json;
};

// Ids of `text` as the fast tokenizer gives them (impl.fast); no </s>.
std::vector<int> encode_fast(const Tokenizer::Impl& impl, std::string_view text);

}  // namespace t5s
