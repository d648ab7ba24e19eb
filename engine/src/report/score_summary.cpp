// summarize_scores: the statistics and histogram of one score.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "t5s/score_report.h"

namespace t5s {

namespace {

double quantile(const std::vector<double>& sorted, double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// numpy.histogram's bin of v: the arithmetic guess, corrected against the edges themselves so that a
// value equal to an edge lands in the bin that edge opens.
size_t bin_of(double v, const std::vector<double>& edges) {
    const size_t bins = edges.size() - 1;
    const double lo = edges.front(), hi = edges.back();
    size_t i = std::min(bins - 1, static_cast<size_t>(std::max(0.0, std::floor((v - lo) / (hi - lo) * bins))));
    if (v < edges[i] && i > 0) --i;
    if (v >= edges[i + 1] && i + 1 < bins) ++i;
    return i;
}

}  // namespace

ScoreSummary summarize_scores(std::string name, const std::vector<std::optional<double>>& values, int bins) {
    ScoreSummary s;
    s.name = std::move(name);
    std::vector<double> sorted;
    for (const auto& v : values) {
        if (v && std::isfinite(*v)) sorted.push_back(*v);
        else ++s.missing;
    }
    s.count = static_cast<int64_t>(sorted.size());
    if (sorted.empty() || bins < 1) return s;
    std::sort(sorted.begin(), sorted.end());
    s.min = sorted.front();
    s.max = sorted.back();
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    s.q1 = quantile(sorted, 0.25);
    s.median = quantile(sorted, 0.5);
    s.q3 = quantile(sorted, 0.75);
    const double lo = s.min == s.max ? s.min - 0.5 : s.min, hi = s.min == s.max ? s.max + 0.5 : s.max;
    for (int i = 0; i <= bins; ++i) s.bin_edges.push_back(i == bins ? hi : lo + (hi - lo) * i / bins);
    s.bin_counts.assign(static_cast<size_t>(bins), 0);
    for (double v : sorted) ++s.bin_counts[bin_of(v, s.bin_edges)];
    return s;
}

}  // namespace t5s
