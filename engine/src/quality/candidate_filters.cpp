#include "quality/candidate_filters.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "t5s/quality.h"

namespace t5s {
namespace {

std::string format_bound(const char* score, const char* op, double bound) {
    char text[64];
    std::snprintf(text, sizeof text, "%s%s%.4g", score, op, bound);
    return text;
}

const std::optional<double>& score_named(const Candidate& c, const std::string& key) {
    if (key == "similarity") return c.similarity;
    if (key == "back_score") return c.back_score;
    return c.fluency;
}

}  // namespace

std::string filter_reason(const Candidate& c, const GenerationOptions& o) {
    // A bound on a score that was not computed drops nothing: the caller refuses such a request
    // (e.g. a similarity bound without an embedder) before generating.
    if (o.min_similarity && c.similarity && *c.similarity < *o.min_similarity)
        return format_bound("similarity", "<", *o.min_similarity);
    if (o.max_similarity && c.similarity && *c.similarity > *o.max_similarity)
        return format_bound("similarity", ">", *o.max_similarity);
    if (o.min_change && c.change && *c.change < *o.min_change) return format_bound("change", "<", *o.min_change);
    if (o.max_change && c.change && *c.change > *o.max_change) return format_bound("change", ">", *o.max_change);
    if (o.min_back_score && c.back_score && *c.back_score < *o.min_back_score)
        return format_bound("back_score", "<", *o.min_back_score);
    return "";
}

std::string effective_rank(const std::string& rank, bool has_embedder) {
    if (rank == "auto") return has_embedder ? "similarity" : "back_score";
    if (rank == "none") return "";
    return rank;
}

std::vector<size_t> rank_order(const std::vector<Candidate>& candidates, const std::string& key) {
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (key.empty()) return order;
    const double lowest = -std::numeric_limits<double>::infinity();
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return score_named(candidates[a], key).value_or(lowest) > score_named(candidates[b], key).value_or(lowest);
    });
    return order;
}

void rank_candidates(std::vector<Candidate>* candidates, const std::string& key) {
    if (key.empty()) return;
    std::vector<Candidate> ranked;
    ranked.reserve(candidates->size());
    for (size_t i : rank_order(*candidates, key)) ranked.push_back(std::move((*candidates)[i]));
    *candidates = std::move(ranked);
}

CandidateSelection select_candidates(std::vector<Candidate> pool, const GenerationOptions& o, const std::string& rank_key,
                                     size_t count) {
    CandidateSelection out;
    std::vector<Candidate> passing;
    for (auto& c : pool) {
        std::string reason = filter_reason(c, o);
        if (reason.empty()) passing.push_back(std::move(c));
        else out.dropped.push_back({std::move(c), std::move(reason)});
    }
    rank_candidates(&passing, rank_key);
    for (auto& c : passing) {
        if (out.kept.size() >= count) break;
        if (o.near_duplicate) {
            double closest = -1.0;
            for (const auto& k : out.kept) closest = std::max(closest, chrf(c.text, k.text));
            if (closest > *o.near_duplicate) {
                out.dropped.push_back({std::move(c), format_bound("near_duplicate", ">", *o.near_duplicate)});
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
