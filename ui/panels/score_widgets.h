#pragma once
// The workspace's quality-score widgets: per-candidate similarity / change bars with the scores in
// a tooltip, the threshold sliders of Generation settings, the sort control and the kept / dropped
// line. What they show comes from score_view.h (pure numbers); these only draw it.
#include "controller.h"

namespace t5s::ui {

// Two small bars (similarity, change) coloured against the thresholds of `o`, the reason when the
// candidate is outside them, and all four scores in a tooltip on hover.
void draw_score_bars(const CandidateVm& c, const GenerationOptions& o);
// min/max similarity, min/max change, min back_score, near_duplicate, each with an off box; the
// similarity pair is off while no embedding model is loaded. True when one moved.
bool draw_threshold_sliders(GenerationOptions& o, bool has_embedder);
// The sort control (GenerationOptions::rank); calls WorkspaceController::set_rank on a change.
void draw_rank_combo(Controller& ctl);
// "4 kept, 2 dropped (change>0.8 2), diversity 0.41" with the dropped candidates in a tooltip.
void draw_kept_line(const CandidateList& list);

}  // namespace t5s::ui
