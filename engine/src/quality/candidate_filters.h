#pragma once
// The filter, ranking and near-duplicate steps of quality-aware generation (t5s/candidate_scores.h),
// on candidates whose scores are already computed. Torch-free.
#include <cstddef>
#include <string>
#include <vector>

#include "t5s/candidate_scores.h"
#include "t5s/generation_options.h"

namespace t5s {

// filter_reason and rank_order: t5s/candidate_scores.h.

// Stable sort, best first, by an effective_rank key; None keeps the order. A candidate without
// that score goes last (the order of rank_order).
void rank_candidates(std::vector<Candidate>* candidates, RankBy key);

struct CandidateSelection {
    std::vector<Candidate> kept;            // at most `count`, best first
    std::vector<DroppedCandidate> dropped;  // by a score bound or as a near duplicate
};

// Filters `pool` with the bounds of `o`, ranks the rest by `rank_key`, then walks them keeping up to
// `count`, dropping one whose chrF with an already kept one is above o.near_duplicate. Candidates
// beyond `count` that were not dropped are neither kept nor dropped (surplus of extra rounds).
CandidateSelection select_candidates(std::vector<Candidate> pool, const GenerationOptions& o, RankBy rank_key, size_t count);

// Mean log-prob per generated token recovered from the decoding's score: beam scores are
// sum / length^length_penalty, greedy and sampling scores are the sum.
double fluency_of(const Candidate& c, const GenerationOptions& o);

}  // namespace t5s
