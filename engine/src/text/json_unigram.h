#pragma once
// What the `tokenizers` pipeline does around a Unigram model (tokenizer.json), for one piece of
// text between added tokens: the Precompiled normalizer (its own per-grapheme rule,
// precompiled_normalizer.h), then the Metaspace choice between a SentencePiece run with the "▁"
// prefix and one without (MetaspaceRule). The SentencePiece models it runs hold no char map:
// the text reaches them normalised. Shared by the T5 and XLM-R tokenizers. Torch-free.
#include <sentencepiece_processor.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/precompiled_normalizer.h"
#include "text/tokenizer_json.h"

namespace t5s {

class JsonUnigram {
public:
    // Pieces [0, count) of `tj`. The model with the prefix is handed out once by take_with_prefix_model() for
    // the owner to load (it keeps it for decoding too); the one without is loaded here.
    JsonUnigram(const TokenizerJson& tj, size_t count);
    std::string take_with_prefix_model() { return std::move(with_prefix_); }

    // Appends the ids of `chunk` (`at_start`: it begins the input) using `with_prefix`, the
    // owner's processor loaded from that model.
    void encode(const sentencepiece::SentencePieceProcessor& with_prefix, std::string_view chunk, bool at_start,
                std::vector<int>& ids) const;

private:
    std::string with_prefix_;
    std::unique_ptr<sentencepiece::SentencePieceProcessor> bare_;  // null when never needed
    MetaspaceRule rule_;
    std::optional<PrecompiledNormalizer> normalizer_;
};

}  // namespace t5s
