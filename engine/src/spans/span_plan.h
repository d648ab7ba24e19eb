#pragma once
// One input's protected spans, planned: explicit spans (code points, from the row) and detected
// ones merged, each masked to a sentinel <extra_id_N> (N in text order) before encoding; restore
// (span_restore.h) puts them back into each candidate. Torch-free.
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/spans.h"

namespace t5s::spans {

struct PlannedSpan {
    std::string text;  // the span's text in the source
    std::string label;
    int sentinel = 0;           // N of <extra_id_N>
    bool space_before = false;  // the source has whitespace right before the span (at its start: any whitespace)
    bool space_after = false;   // ... right after it (at its end: any whitespace)
    Span source;                // where it is in the source (code points)
};

struct SpanPlan {
    std::string masked;              // the source with each span replaced by its sentinel
    std::vector<PlannedSpan> spans;  // in source order; empty: nothing protected
    bool active() const { return !spans.empty(); }
};

// Explicit spans must lie inside the text and not overlap each other (InvalidArgument naming the
// span otherwise). Detected spans (options.protect, options.protect_regex) that overlap an explicit
// span or an earlier (at equal start: longer) detected span are left out. More spans than
// `max_spans` (the vocabulary's sentinels) is an InvalidArgument error.
SpanPlan plan_spans(const std::string& text, const std::vector<Span>& explicit_spans, const GenerationOptions& options,
                    int max_spans = 100);

}  // namespace t5s::spans
