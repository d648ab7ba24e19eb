#pragma once
// Restoring protected spans into a decoded candidate, and checking that it kept them. Torch-free.
#include <string>
#include <vector>

#include "spans/span_plan.h"
#include "t5s/spans.h"
#include "t5s/tokenizer.h"

namespace t5s::spans {

struct RestoredText {
    std::string text;
    std::vector<Span> spans;  // at their offsets in `text` (code points), in text order
    bool complete = false;    // every planned span's sentinel was there exactly once, and no other
};

// The candidate's ids (</s> and padding ignored) decoded with each sentinel replaced by its span's
// text. The tokenizer drops the whitespace around sentinels, so a space is put back beside a span
// where the source had one on that side, unless the neighbour is whitespace or punctuation that
// hugs it ("3 kg." stays "3 kg.", "(3 kg)" stays) or is written without spaces (CJK, kana,
// Hangul, full-width forms: an English "in 1996." translated gives "畢業了1996。").
RestoredText restore_spans(const SpanPlan& plan, const std::vector<int>& ids, const Tokenizer& tokenizer);

// True when `candidate` contains the text of every planned span as many times as `source` does
// (non-overlapping occurrences): a span neither lost nor duplicated. Works on any candidate,
// protected or not.
bool keeps_spans(const std::string& source, const std::string& candidate, const std::vector<PlannedSpan>& spans);

}  // namespace t5s::spans
