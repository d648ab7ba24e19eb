#pragma once
// The workspace's protected-span widgets: the protect block of Generation settings, the
// source with its protected spans highlighted and the marks listed (each removable), and a
// candidate's forced mark. What they show comes from span_view.h; these only draw it.
#include "controller.h"

namespace t5s::ui {

// Detectors on / off, the regex, the label of new marks; hot-swapped like the other settings.
void draw_protect_settings(Controller& ctl);
// The source as the next generation protects it (spans on their label's colour, the label as a
// tag), the marks with an x to remove each, and the error of a bad regex or span.
void draw_source_spans(Controller& ctl);
// "forced N" with its tooltip, on the candidate's line, when the decoder had to force its spans.
void draw_forced_tag(const CandidateVm& c);

}  // namespace t5s::ui
