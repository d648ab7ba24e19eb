#pragma once
// Protected spans (t5s/spans.h) as a front end shows them before generating: the spans a request
// would protect, planned exactly as the engine plans them, and (t5s/text_offsets.h) the UTF-8
// byte <-> code point offsets a text field needs. Torch-free (engine/src/spans/span_plan.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "t5s/spans.h"
#include "t5s/text_offsets.h"

namespace t5s {

// The spans a request protects in `text` with these settings: the explicit spans, then the detected
// ones (`protect`, `protect_regex`) that overlap none of them, in text order. Throws
// t5s::Error(InvalidArgument) where a generation would: an explicit span outside the text or
// overlapping another, an unknown detector, a bad regex, more spans than the sentinels.
std::vector<Span> protected_spans(const std::string& text, const std::vector<Span>& explicit_spans, const std::string& protect,
                                  const std::string& protect_regex);

}  // namespace t5s
