#pragma once
// JSON from HTTP clients, bounded before it is parsed: its size and its nesting depth are checked
// on the raw text (strings skipped), so that nothing built from it (the parsed tree, its dump, its
// destructor) recurses deeper than kMaxJsonDepth. Torch- and httplib-free (a fuzz target calls it).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace t5s::serve {

constexpr size_t kMaxJsonBytes = size_t(1) << 20;  // also the HTTP body limit (RequestLimits)
constexpr int kMaxJsonDepth = 64;                  // arrays and objects inside each other

// Throws t5s::Error(InvalidArgument) naming `what` ("/augment body") and the limit exceeded, or
// "malformed JSON". Any JSON value is returned (callers check that it is an object).
nlohmann::json parse_bounded_json(std::string_view body, std::string_view what);

// The deepest nesting of arrays/objects in `text`, counting no further than `stop_at` (so a
// hostile text costs one pass and no memory). Brackets inside strings do not count.
int json_nesting_depth(std::string_view text, int stop_at);

}  // namespace t5s::serve
