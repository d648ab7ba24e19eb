#pragma once
// The candidate scores, declared once: their names (JSON keys, export columns, the values of --rank
// and the app's labels) and the one order every listing shows them in. A new score is a member of
// each struct that holds scores (t5s::Candidate, CandidateScores, the app's CandidateVm) and a line
// here; the JSON of generate and serve, the history's exports, the app's tooltips and score lines
// follow.
#include <cstddef>
#include <optional>
#include <vector>

namespace t5s {

// Calls visit(name, value) for each score of `scored` (anything with the four optional<double>
// members), in the listing order. `value` is a reference: a visitor may read or set it.
template <class Scored, class Visit>
void for_each_score(Scored& scored, Visit&& visit) {
    visit("similarity", scored.similarity);
    visit("back_score", scored.back_score);
    visit("change", scored.change);
    visit("fluency", scored.fluency);
}

// Copies every score of `from` into `to`: two of the structs that hold the four.
template <class From, class To>
void copy_scores(const From& from, To& to) {
    std::vector<std::optional<double>> values;
    for_each_score(from, [&](const char*, const std::optional<double>& value) { values.push_back(value); });
    size_t k = 0;
    for_each_score(to, [&](const char*, std::optional<double>& value) { value = values[k++]; });
}

// The names alone, in the listing order (export headers, help texts).
inline std::vector<const char*> score_names() {
    struct {
        std::optional<double> similarity, back_score, change, fluency;
    } any;
    std::vector<const char*> names;
    for_each_score(any, [&](const char* name, const std::optional<double>&) { names.push_back(name); });
    return names;
}

}  // namespace t5s
