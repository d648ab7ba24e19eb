#include "text/precompiled_normalizer.h"

#include <cstring>

#include "text/spiece_validate.h"
#include "text/unicode_space.h"
#include "text/unicode_text.h"

namespace t5s {
namespace {

// darts-clone's unit layout (as in spiece_validate.cpp).
uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }
bool unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
uint32_t unit_value(uint32_t u) { return u & ((1U << 31) - 1); }
uint32_t unit_label(uint32_t u) { return u & ((1U << 31) | 0xFF); }

bool is_control(char32_t cp) {
    if (cp == 0x200C || cp == 0x200D) return false;  // ZWNJ, ZWJ extend
    const auto cls = embed_detail::char_class(cp);
    return cls == embed_detail::kCc || cls == embed_detail::kCf || cp == 0x2028 || cp == 0x2029;
}

bool is_extend(char32_t cp) {
    if (cp == 0x200C || cp == 0x200D || (cp >= 0x1F3FB && cp <= 0x1F3FF)) return true;  // ZWNJ, ZWJ, skin tones
    if (cp == 0x0488 || cp == 0x0489 || cp == 0x1ABE || (cp >= 0x20DD && cp <= 0x20E0) || (cp >= 0x20E2 && cp <= 0x20E4) ||
        (cp >= 0xA670 && cp <= 0xA672)) {
        return true;  // enclosing marks (Me)
    }
    return embed_detail::char_class(cp) == embed_detail::kMn;  // combining marks, variation selectors
}

}  // namespace

size_t grapheme_length(std::string_view text, size_t i) {
    char32_t cp = 0;
    size_t j = i + utf8_decode(text, i, &cp);
    if (cp == U'\r') return j < text.size() && text[j] == '\n' ? 2 : 1;
    if (is_control(cp) || cp == U'\n') return j - i;
    while (j < text.size()) {
        char32_t next = 0;
        const size_t len = utf8_decode(text, j, &next);
        if (!is_extend(next)) break;
        j += len;
    }
    return j - i;
}

PrecompiledNormalizer::PrecompiledNormalizer(std::string_view blob, const std::string& file) {
    validate_precompiled_charsmap(blob, file);
    uint32_t trie_bytes = 0;
    std::memcpy(&trie_bytes, blob.data(), 4);
    units_.resize(trie_bytes / 4);
    std::memcpy(units_.data(), blob.data() + 4, units_.size() * 4);
    replacements_ = std::string(blob.substr(4 + static_cast<size_t>(trie_bytes)));
}

// darts-clone's commonPrefixSearch, first (shortest) result only, as spm_precompiled uses it.
std::optional<std::string_view> PrecompiledNormalizer::transform(std::string_view chunk) const {
    uint32_t node = unit_offset(units_[0]);
    for (char ch : chunk) {
        const auto c = static_cast<unsigned char>(ch);
        node ^= c;
        if (node >= units_.size() || unit_label(units_[node]) != c) return std::nullopt;
        const uint32_t u = units_[node];
        node ^= unit_offset(u);
        if (node >= units_.size()) return std::nullopt;
        if (unit_has_leaf(u)) {
            const size_t value = unit_value(units_[node]);
            if (value >= replacements_.size()) return std::nullopt;
            const size_t end = replacements_.find('\0', value);
            return std::string_view(replacements_).substr(value, end == std::string::npos ? std::string::npos : end - value);
        }
    }
    return std::nullopt;
}

std::string PrecompiledNormalizer::normalize(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const std::string_view cluster = text.substr(i, grapheme_length(text, i));
        i += cluster.size();
        if (cluster.size() < 6) {
            if (auto r = transform(cluster)) {
                out += *r;
                continue;
            }
        }
        for (size_t k = 0; k < cluster.size();) {
            char32_t cp = 0;
            const std::string_view part = cluster.substr(k, utf8_decode(cluster, k, &cp));
            k += part.size();
            const auto r = transform(part);
            out += r ? *r : part;
        }
    }
    return out;
}

}  // namespace t5s
