#pragma once
// Protected spans (t5s/spans.h) as a front end shows them before generating: the spans a request
// would protect, planned exactly as the engine plans them, and the UTF-8 byte <-> code point
// offsets a text field needs. Torch-free (engine/src/spans/span_plan.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "t5s/spans.h"

namespace t5s {

// The spans a request protects in `text` with these settings: the explicit spans, then the detected
// ones (`protect`, `protect_regex`) that overlap none of them, in text order. Throws
// t5s::Error(InvalidArgument) where a generation would: an explicit span outside the text or
// overlapping another, an unknown detector, a bad regex, more spans than the sentinels.
std::vector<Span> protected_spans(const std::string& text, const std::vector<Span>& explicit_spans, const std::string& protect,
                                  const std::string& protect_regex);

// UTF-8 byte offset -> code point offset (the code points that start before `byte`; a byte inside
// a code point rounds up), and back (a code point past the end is the end).
int64_t code_point_of_byte(const std::string& text, size_t byte);
size_t byte_of_code_point(const std::string& text, int64_t code_point);

}  // namespace t5s
