#pragma once
// The candidate scores, declared once: the struct every holder of scores shares (t5s::Candidate,
// the history's CandidateRecord and StoredCandidate, the app's CandidateVm) and their names, which
// are at once the JSON keys, the export columns, the history's columns, the values of --rank and
// the app's labels, in the one order every listing shows them in.
//
// Adding a score takes two lines here: its member in CandidateScores and its line in
// for_each_score. The JSON of generate and serve, the history's columns (added to an existing
// database when it is opened), its exports, the app's tooltips and score lines follow. Then its
// use: the code that computes it, and where it should rank or filter, its RankBy value or bounds.
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace t5s {

// The quality scores of one candidate; empty = not computed (e.g. similarity without an embedder).
struct CandidateScores {
    std::optional<double> similarity;  // cosine of the sentence embeddings of source and candidate
    std::optional<double> back_score;  // mean log-prob per token of the source given task_prefix + candidate
    std::optional<double> change;      // 1 - chrF(candidate, source)
    std::optional<double> fluency;     // mean log-prob per generated token, as the decoding scored them
};

// Calls visit(name, value) for each score of `scores` (a CandidateScores, const or not), in the
// listing order. `value` is a reference: a visitor may read or set it.
template <class Scores, class Visit>
void for_each_score(Scores& scores, Visit&& visit) {
    static_assert(std::is_same_v<std::remove_const_t<Scores>, CandidateScores>, "for_each_score takes a CandidateScores");
    visit("similarity", scores.similarity);
    visit("back_score", scores.back_score);
    visit("change", scores.change);
    visit("fluency", scores.fluency);
}

// The names alone, in the listing order (export headers, help texts, the history's columns).
inline std::vector<const char*> score_names() {
    const CandidateScores any;
    std::vector<const char*> names;
    for_each_score(any, [&](const char* name, const std::optional<double>&) { names.push_back(name); });
    return names;
}

// The names as one list, each after `prefix`: "similarity, back_score, change, fluency" (help
// texts), "c.similarity, c.back_score, ..." (SQL).
inline std::string score_list(const std::string& prefix = "") {
    std::string list;
    for (const char* name : score_names()) list += (list.empty() ? "" : ", ") + prefix + name;
    return list;
}

}  // namespace t5s
