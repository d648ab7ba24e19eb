#include "score_view.h"

#include <algorithm>
#include <cstdio>

#include "t5s/candidate_scores.h"
#include "t5s/score_names.h"

namespace t5s::ui {

namespace {

float unit(double v) { return float(std::clamp(v, 0.0, 1.0)); }

ScoreBar bar_of(const std::optional<double>& value, const std::optional<double>& low, const std::optional<double>& high) {
    ScoreBar bar;
    if (low) bar.low = unit(*low);
    if (high) bar.high = unit(*high);
    if (!value) return bar;  // Absent
    bar.fill = unit(*value);
    if (!low && !high) bar.tone = BarTone::Neutral;
    else bar.tone = (low && *value < *low) || (high && *value > *high) ? BarTone::Outside : BarTone::Inside;
    return bar;
}

std::string format_score(const char* name, const std::optional<double>& v, const char* missing) {
    char line[96];
    if (v) std::snprintf(line, sizeof line, "%-10s %.3f", name, *v);
    else std::snprintf(line, sizeof line, "%-10s n/a (%s)", name, missing);
    return line;
}

}  // namespace

ScoreBar similarity_bar(const CandidateVm& c, const GenerationOptions& o) {
    return bar_of(c.scores.similarity, o.min_similarity, o.max_similarity);
}

ScoreBar change_bar(const CandidateVm& c, const GenerationOptions& o) {
    return bar_of(c.scores.change, o.min_change, o.max_change);
}

std::string outside_reason(const CandidateVm& c, const GenerationOptions& o) {
    const std::optional<DropCause> reason = filter_reason(candidate_scores(c), o);
    return reason ? to_string(*reason) : "";
}

std::string score_tooltip(const CandidateVm& c, const GenerationOptions& o) {
    std::string text;
    for_each_score(c.scores, [&](const char* name, const std::optional<double>& value) {
        const bool embedder_score = std::string(name) == "similarity";
        text += (text.empty() ? "" : "\n") + format_score(name, value, embedder_score ? "no embedding model" : "not scored");
    });
    const std::string reason = outside_reason(c, o);
    text += reason.empty() ? "\ninside the thresholds" : "\noutside the thresholds: " + reason;
    return text;
}

std::string score_line(const CandidateScores& s) {
    std::string out;
    auto add = [&](const char* name, const std::optional<double>& v) {
        if (!v) return;
        char part[48];
        std::snprintf(part, sizeof part, "%s%s %.2f", out.empty() ? "" : "  ", name, *v);
        out += part;
    };
    for_each_score(s, add);
    return out;
}

RankBy display_rank_key(RankBy rank, const CandidateList& list) { return effective_rank(rank, list.all_have_similarity()); }

void count_reasons(const std::vector<DroppedCandidate>& dropped, ReasonCounts* counts) {
    for (const auto& d : dropped) ++(*counts)[d.reason];
}

int64_t total(const ReasonCounts& counts) {
    int64_t n = 0;
    for (const auto& [reason, count] : counts) n += count;
    return n;
}

std::string reason_summary(const ReasonCounts& counts) {
    std::vector<std::pair<DropCause, int64_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string out;
    for (const auto& [reason, count] : sorted) out += (out.empty() ? "" : ", ") + to_string(reason) + " " + std::to_string(count);
    return out;
}

}  // namespace t5s::ui
