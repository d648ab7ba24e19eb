#include "quality/candidate_filters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "t5s/quality.h"

namespace t5s {
namespace {

// The score a resolved ranking key sorts by (Auto and None sort by nothing: rank_order returns first).
const std::optional<double>& score_named(const Candidate& c, RankBy key) {
    if (key == RankBy::Similarity) return c.scores.similarity;
    if (key == RankBy::BackScore) return c.scores.back_score;
    return c.scores.fluency;
}

}  // namespace

std::optional<DropCause> filter_reason(const Candidate& c, const GenerationOptions& o) {
    // A bound on a score that was not computed drops nothing: the caller refuses such a request
    // (e.g. a similarity bound without an embedder) before generating.
    if (o.min_similarity && c.scores.similarity && *c.scores.similarity < *o.min_similarity)
        return DropCause{DropReason::SimilarityBelow, *o.min_similarity};
    if (o.max_similarity && c.scores.similarity && *c.scores.similarity > *o.max_similarity)
        return DropCause{DropReason::SimilarityAbove, *o.max_similarity};
    if (o.min_change && c.scores.change && *c.scores.change < *o.min_change)
        return DropCause{DropReason::ChangeBelow, *o.min_change};
    if (o.max_change && c.scores.change && *c.scores.change > *o.max_change)
        return DropCause{DropReason::ChangeAbove, *o.max_change};
    if (o.min_back_score && c.scores.back_score && *c.scores.back_score < *o.min_back_score)
        return DropCause{DropReason::BackScoreBelow, *o.min_back_score};
    return std::nullopt;
}

RankBy effective_rank(RankBy rank, bool has_embedder) {
    if (rank == RankBy::Auto) return has_embedder ? RankBy::Similarity : RankBy::BackScore;
    return rank;
}

std::vector<size_t> rank_order(const std::vector<Candidate>& candidates, RankBy key) {
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (key == RankBy::None || key == RankBy::Auto) return order;
    const double lowest = -std::numeric_limits<double>::infinity();
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return score_named(candidates[a], key).value_or(lowest) > score_named(candidates[b], key).value_or(lowest);
    });
    return order;
}

void rank_candidates(std::vector<Candidate>* candidates, RankBy key) {
    if (key == RankBy::None || key == RankBy::Auto) return;
    std::vector<Candidate> ranked;
    ranked.reserve(candidates->size());
    for (size_t i : rank_order(*candidates, key)) ranked.push_back(std::move((*candidates)[i]));
    *candidates = std::move(ranked);
}

CandidateSelection select_candidates(std::vector<Candidate> pool, const GenerationOptions& o, RankBy rank_key, size_t count) {
    CandidateSelection out;
    std::vector<Candidate> passing;
    for (auto& c : pool) {
        const std::optional<DropCause> reason = filter_reason(c, o);
        if (!reason) passing.push_back(std::move(c));
        else out.dropped.push_back({std::move(c), *reason});
    }
    rank_candidates(&passing, rank_key);
    for (auto& c : passing) {
        if (out.kept.size() >= count) break;
        if (o.near_duplicate) {
            double closest = -1.0;
            for (const auto& k : out.kept) closest = std::max(closest, chrf(c.text, k.text));
            if (closest > *o.near_duplicate) {
                out.dropped.push_back({std::move(c), DropCause{DropReason::NearDuplicate, *o.near_duplicate}});
                continue;
            }
        }
        out.kept.push_back(std::move(c));
    }
    return out;
}

double fluency_of(const Candidate& c, const GenerationOptions& o) {
    const double length = static_cast<double>(std::max<size_t>(c.ids.size(), 1));
    const double sum = o.num_beams > 1 ? c.score * std::pow(length, static_cast<double>(o.length_penalty)) : c.score;
    return sum / length;
}

}  // namespace t5s
