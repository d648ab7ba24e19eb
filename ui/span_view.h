#pragma once
// Protected spans in the app, without ImGui: the detectors as switches, a colour per
// label, a diff split at span edges (what the panels draw with a background per span and the label
// as a small tag), explicit spans carried across edits of their text, a selection made a span, the
// forced mark's words and a batch row's span counts. Offsets are code points (t5s/spans.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/span_preview.h"
#include "text_diff.h"

namespace t5s::ui {

// GenerationOptions::protect as switches: whether `detector` (placeholders, numbers, urls, emails)
// is on, and the list with it turned on or off (in span_detector_names() order).
bool protects(const std::string& protect, const std::string& detector);
std::string with_detector(const std::string& protect, const std::string& detector, bool on);

struct SpanColour {
    uint8_t r = 0, g = 0, b = 0;
};
// One colour per detector label (number, placeholder, url, email, regex); other labels (a row's
// entity labels, the user's) get one of a palette by a hash of the label, the same every run.
SpanColour span_colour(const std::string& label);

// A piece of a diff that lies wholly inside one span or outside all of them.
struct MarkedRun {
    DiffOp op = DiffOp::Equal;
    std::string text;       // whole code points
    int span = -1;          // index into the spans; -1: outside every span
    bool span_end = false;  // the last piece of its span: the label tag goes after it
};
// Splits `diff` (source -> text) at the edges of `spans`, which are code points of the text side
// (the Equal and Insert segments); Delete segments are never inside a span. The source alone is
// the diff {Equal, source}.
std::vector<MarkedRun> mark_spans(const std::vector<DiffSegment>& diff, const std::vector<Span>& spans);

// Spans of `before` carried over to `after` (the text was edited): a span whose text is still at its
// offsets stays; else it moves to the nearest place its text appears that overlaps no span kept so
// far; else it is left out. Order as in `spans`.
std::vector<Span> carry_spans(const std::string& before, const std::vector<Span>& spans, const std::string& after);

// The selection between bytes a and b of `text` (either order; a byte inside a code point rounds
// up to the next one), without the whitespace at its ends, as a span labelled `label`; nothing when it is empty.
std::optional<Span> selection_span(const std::string& text, size_t a, size_t b, const std::string& label);
// `spans` with `added` put in its place by start; the spans it overlaps are taken out (a new mark
// over an old one replaces it).
std::vector<Span> add_span(std::vector<Span> spans, const Span& added);

// The forced mark of a candidate: "forced 2" and its tooltip.
std::string forced_tag(int forced);
std::string forced_tooltip(int forced);

// What a finished row's result says about its spans.
struct SpanCounts {
    int spans = 0;   // protected spans of the input (given and detected)
    int lost = 0;    // candidates dropped because a span was not kept exactly once ("lost_span")
    int forced = 0;  // returned candidates whose spans had to be forced
};
SpanCounts span_counts(const GenerationResult& result);
// "3 spans, 1 lost, 2 forced" (the parts that are not zero; "" for a result without spans).
std::string span_counts_text(const SpanCounts& counts);

}  // namespace t5s::ui
