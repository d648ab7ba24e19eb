#pragma once
// The one place that opens SentencePiece model files (T5 spiece.model, XLM-R
// sentencepiece.bpe.model): same checks and one-line errors naming the file for every caller.
#include <sentencepiece_processor.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace t5s {

// Throws t5s::Error(FileNotFound / CorruptFile) naming `path`.
void load_sentencepiece(const std::filesystem::path& path, sentencepiece::SentencePieceProcessor& sp);
// The same from the bytes of a model; `name` is what errors report.
void load_serialized_sentencepiece(std::string_view model, const std::string& name, sentencepiece::SentencePieceProcessor& sp);

}  // namespace t5s
