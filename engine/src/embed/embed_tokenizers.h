#pragma once
// Constructors of the concrete embedding tokenizers (each in its own file).
#include <filesystem>
#include <memory>

#include "t5s/embed_tokenizer.h"

namespace t5s::embed_detail {

std::unique_ptr<EmbedTokenizer> make_wordpiece_tokenizer(const std::filesystem::path& vocab_txt,
                                                         const std::filesystem::path& tokenizer_config);
std::unique_ptr<EmbedTokenizer> make_xlmr_tokenizer(const std::filesystem::path& sentencepiece_model,
                                                    const std::filesystem::path& tokenizer_config);

}  // namespace t5s::embed_detail
