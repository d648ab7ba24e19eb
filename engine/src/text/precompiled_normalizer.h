#pragma once
// The `Precompiled` normalizer of the Hugging Face `tokenizers` library (its spm_precompiled
// crate), which reads SentencePiece's precompiled_charsmap differently from SentencePiece: the
// text is taken one grapheme cluster at a time; a cluster under 6 bytes is replaced by the rule of
// its SHORTEST matching prefix when there is one (what follows that prefix in the cluster is
// dropped: "a\u0308\u0304" gives "ä", "\r\n" gives " "), otherwise each code point is replaced
// by its own rule or kept. SentencePiece instead takes the longest match at every position.
// Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace t5s {

class PrecompiledNormalizer {
public:
    // `blob`: uint32 trie size, darts-clone trie units, NUL-terminated replacements. Validated
    // here (validate_precompiled_charsmap); throws t5s::Error(CorruptFile) naming `file`.
    PrecompiledNormalizer(std::string_view blob, const std::string& file);
    // `text` must be valid UTF-8.
    std::string normalize(std::string_view text) const;

private:
    std::optional<std::string_view> transform(std::string_view chunk) const;
    std::vector<uint32_t> units_;
    std::string replacements_;
};

// Byte length of the grapheme cluster that starts at text[i] (an approximation of Unicode's
// extended grapheme clusters that is exact for the clusters under 6 bytes that matter here:
// CR LF, and a base followed by combining marks, ZWJ/ZWNJ or variation selectors).
size_t grapheme_length(std::string_view text, size_t i);

}  // namespace t5s
