#pragma once
// The CLI's and serve's view of the core's span JSON (t5s/span_json.h).
#include "t5s/span_json.h"

namespace t5s::cli {

using t5s::check_spans;
using t5s::spans_from_json;
using t5s::spans_to_json;

}  // namespace t5s::cli
