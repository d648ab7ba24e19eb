#pragma once
// How the quality scores of candidates are shown (pure numbers, no ImGui): the similarity and
// change bars coloured against the active thresholds, the tooltip text, the sort choices, and
// dropped candidates counted by reason. The filters themselves are the engine's
// (t5s::filter_reason, t5s::rank_order): the UI only reads them, so a threshold moved after a
// generation recolours the candidates already shown at once, exactly as the next generation
// would filter them.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "candidate_list.h"

namespace t5s::ui {

// A bar's colour: no score (greyed: similarity without an embedding model), no threshold on it,
// inside the thresholds' window, or outside it.
enum class BarTone { Absent, Neutral, Inside, Outside };

struct ScoreBar {
    BarTone tone = BarTone::Absent;
    float fill = 0.0f;               // 0..1 of the bar's width
    std::optional<float> low, high;  // threshold marks, 0..1 of the width
};

// similarity in [-1, 1] is drawn over [0, 1] (a negative cosine is an empty bar); change is in [0, 1].
ScoreBar similarity_bar(const CandidateVm& c, const GenerationOptions& o);
ScoreBar change_bar(const CandidateVm& c, const GenerationOptions& o);

// The engine's reason for dropping this candidate under the thresholds of `o`, printed
// ("similarity<0.8", ...), or "" when it is inside all of them.
std::string outside_reason(const CandidateVm& c, const GenerationOptions& o);

// All four scores, one per line, "n/a" and why for a missing one; plus the outside reason.
std::string score_tooltip(const CandidateVm& c, const GenerationOptions& o);
// "similarity 0.83  back_score -1.20  change 0.41  fluency -0.87" (t5s/score_names.h order; missing scores left out).
std::string score_line(const CandidateScores& s);

// The score `rank` sorts the shown candidates by (None = the generation's order): auto is similarity
// when every shown candidate has one (an embedding model scored them), else back_score.
RankBy display_rank_key(RankBy rank, const CandidateList& list);

// Dropped candidates counted by their reason (rule and threshold: "change>0.8", "copy", ...).
using ReasonCounts = std::map<DropCause, int64_t>;
void count_reasons(const std::vector<DroppedCandidate>& dropped, ReasonCounts* counts);
int64_t total(const ReasonCounts& counts);
// "change>0.8 3, copy 1" (most frequent first, then in the rules' order); "" when nothing was dropped.
std::string reason_summary(const ReasonCounts& counts);

}  // namespace t5s::ui
