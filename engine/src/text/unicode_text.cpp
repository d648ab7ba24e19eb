#include "text/unicode_text.h"

#include <algorithm>

#include "text/unicode_space.h"

namespace t5s::embed_detail {
namespace {

// Hangul syllables decompose and compose algorithmically (Unicode 3.12), not through the tables.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

const Decomposition* find_decomposition(char32_t cp) {
    const Decomposition* end = kDecompositions + kDecompositionCount;
    const Decomposition* it =
        std::lower_bound(kDecompositions, end, cp, [](const Decomposition& d, char32_t c) { return d.cp < c; });
    return it != end && it->cp == cp ? it : nullptr;
}

uint8_t combining_class(char32_t cp) {
    const CombiningClass* end = kCombiningClasses + kCombiningClassCount;
    const CombiningClass* it =
        std::lower_bound(kCombiningClasses, end, cp, [](const CombiningClass& c, char32_t v) { return c.cp < v; });
    return it != end && it->cp == cp ? it->ccc : 0;
}

void decompose_into(char32_t cp, std::u32string& out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const char32_t s = cp - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount) out.push_back(kTBase + s % kTCount);
        return;
    }
    const Decomposition* d = find_decomposition(cp);
    if (!d) {
        out.push_back(cp);
        return;
    }
    decompose_into(d->first, out);
    if (d->second) decompose_into(d->second, out);
}

// Returns the primary composite of (first, second) or 0.
char32_t compose_pair(char32_t first, char32_t second) {
    if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
        return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
    }
    if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
        second < kTBase + kTCount) {
        return first + (second - kTBase);
    }
    const Composition* end = kCompositions + kCompositionCount;
    const Composition* it = std::lower_bound(
        kCompositions, end, std::make_pair(first, second),
        [](const Composition& c, const std::pair<char32_t, char32_t>& key) { return std::make_pair(c.first, c.second) < key; });
    return it != end && it->first == first && it->second == second ? it->composite : 0;
}

}  // namespace

CharClass char_class(char32_t cp) {
    const ClassRun* end = kClassRuns + kClassRunCount;
    const ClassRun* it = std::upper_bound(kClassRuns, end, cp, [](char32_t c, const ClassRun& r) { return c < r.start; });
    return it == kClassRuns ? kOther : static_cast<CharClass>((it - 1)->cls);
}

std::u32string to_lower(const std::u32string& text) {
    std::u32string out;
    out.reserve(text.size());
    const LowerCase* end = kLowerCases + kLowerCaseCount;
    for (char32_t cp : text) {
        const LowerCase* it = std::lower_bound(kLowerCases, end, cp, [](const LowerCase& l, char32_t c) { return l.cp < c; });
        if (it == end || it->cp != cp) {
            out.push_back(cp);
            continue;
        }
        for (char32_t l : it->lower) {
            if (l) out.push_back(l);
        }
    }
    return out;
}

std::u32string nfd(const std::u32string& text) {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t cp : text) decompose_into(cp, out);
    // Canonical ordering: stable-sort each run of non-starters by combining class.
    for (size_t i = 0; i < out.size();) {
        if (combining_class(out[i]) == 0) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < out.size() && combining_class(out[j]) != 0) ++j;
        std::stable_sort(out.begin() + i, out.begin() + j,
                         [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
        i = j;
    }
    return out;
}

std::u32string nfc(const std::u32string& text) {
    std::u32string d = nfd(text);
    // Canonical composition (Unicode 3.11): a character combines with the last starter unless a
    // character between them is blocked (same or higher class, or a starter).
    std::u32string out;
    out.reserve(d.size());
    size_t starter = std::u32string::npos;
    int last_class = -1;
    for (char32_t cp : d) {
        const int cls = combining_class(cp);
        if (starter != std::u32string::npos) {
            const bool blocked = last_class != -1 && (last_class == 0 || last_class >= cls);
            if (!blocked) {
                if (char32_t composite = compose_pair(out[starter], cp)) {
                    out[starter] = composite;
                    continue;
                }
            }
        }
        if (cls == 0) {
            starter = out.size();
            last_class = -1;
        } else {
            last_class = cls;
        }
        out.push_back(cp);
    }
    return out;
}

std::string u32_to_utf8(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t cp : text) utf8_append(out, cp);
    return out;
}

}  // namespace t5s::embed_detail
