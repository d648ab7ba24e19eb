#pragma once
// Normalisation used to decide whether two candidates are "the same" for no_copy / distinct:
// full-width ASCII folded to half-width, whitespace runs collapsed to one space, ends trimmed.
#include <string>
#include <string_view>

namespace t5s {

std::string normalize_for_compare(std::string_view text);

}  // namespace t5s
