#pragma once
// Unicode data for the BERT BasicTokenizer, generated from Python's unicodedata by
// gen_unicode_tables.py (see there for what it covers). All arrays are sorted by code point.
#include <cstddef>
#include <cstdint>

namespace t5s::embed_detail {

// Character classes the tokenizer distinguishes; 0 = anything else.
enum CharClass : uint8_t { kOther = 0, kMn = 1, kPunct = 2, kZs = 3, kCc = 4, kCf = 5 };

struct ClassRun {
    char32_t start;
    uint8_t cls;
};  // class holds until the next run
struct Decomposition {
    char32_t cp, first, second;
};  // second 0 = singleton
struct CombiningClass {
    char32_t cp;
    uint8_t ccc;
};
struct Composition {
    char32_t first, second, composite;
};  // sorted by (first, second)
struct LowerCase {
    char32_t cp;
    char32_t lower[3];
};  // unused slots 0

extern const char* const kUnicodeVersion;
extern const ClassRun kClassRuns[];
extern const size_t kClassRunCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;
extern const CombiningClass kCombiningClasses[];
extern const size_t kCombiningClassCount;
extern const Composition kCompositions[];
extern const size_t kCompositionCount;
extern const LowerCase kLowerCases[];
extern const size_t kLowerCaseCount;

}  // namespace t5s::embed_detail
