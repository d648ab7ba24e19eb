#pragma once
// Checks a serialized SentencePiece ModelProto before it is handed to the SentencePiece library,
// which trusts its input: an overlong piece overflows the stack of its (recursive) trie builder
// and a corrupt normalizer character map is read out of bounds. Torch-free.
#include <string>
#include <string_view>

namespace t5s {

// Longest piece accepted, in bytes: far above what any SentencePiece trainer makes
// (max_sentencepiece_length is at most 512 characters) and far below the recursion depth that
// overflows the trie builder's stack.
constexpr size_t kMaxSpiecePieceBytes = 4096;

// Throws t5s::Error(CorruptFile) "<file>: <what is wrong>" unless `model` is a well-formed
// protobuf whose pieces are non-empty, NUL-free UTF-8 of at most kMaxSpiecePieceBytes, whose
// user-defined pieces nest at most 64 deep (the library's prefix-match buffer), and whose
// normalizer/denormalizer precompiled_charsmap is a double-array trie that every lookup stays
// inside, with at most 32 matches on any path and every value pointing at a NUL-terminated
// string of the map.
void validate_spiece_model(std::string_view model, const std::string& file);

// The same checks for one precompiled_charsmap blob (tokenizer.json's Precompiled normalizer).
void validate_precompiled_charsmap(std::string_view blob, const std::string& file);

}  // namespace t5s
