#include "text/json_unigram.h"

#include "text/sentencepiece_model.h"

namespace t5s {

JsonUnigram::JsonUnigram(const TokenizerJson& tj, size_t count)
    : with_prefix_(unigram_to_spiece_model(tj, count, true)), rule_(tj.metaspace) {
    if (!tj.charsmap.empty()) normalizer_.emplace(tj.charsmap, tj.file);
    if (rule_.needs_bare()) {
        bare_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
        load_serialized_sentencepiece(unigram_to_spiece_model(tj, count, false), tj.file, *bare_);
    }
}

void JsonUnigram::encode(const sentencepiece::SentencePieceProcessor& with_prefix, std::string_view chunk, bool at_start,
                         std::vector<int>& ids) const {
    const std::string text = normalizer_ ? normalizer_->normalize(chunk) : std::string(chunk);
    const bool prefix = !bare_ || rule_.prefix(text, at_start);
    std::vector<int> part;
    (prefix ? with_prefix : *bare_).Encode(text, &part);
    ids.insert(ids.end(), part.begin(), part.end());
}

}  // namespace t5s
