// chrF as sacrebleu 2.x computes a sentence score with its defaults (metrics/chrf.py):
// whitespace removed, character n-gram counts for n = 1..6, per order the hypothesis count (0 when
// the reference has no n-gram of that order), reference count and clipped matches; precision and
// recall are averaged over the "effective" orders (both sides non-empty) and combined into
// F-beta with beta = 2. We keep sacrebleu's order of operations so results agree to ~1e-15.
#include <algorithm>
#include <unordered_map>

#include "code_points.h"
#include "t5s/quality.h"

namespace t5s {
namespace {

constexpr int kCharOrder = 6;
constexpr double kBeta = 2.0;

struct OrderStats {
    long hyp = 0, ref = 0, match = 0;
};

using NgramCounts = std::unordered_map<std::u32string_view, long>;

NgramCounts count_ngrams(const std::u32string& text, size_t n) {
    NgramCounts counts;
    if (text.size() < n) return counts;
    const std::u32string_view view(text);
    for (size_t i = 0; i + n <= text.size(); ++i) ++counts[view.substr(i, n)];
    return counts;
}

OrderStats match_statistics(const NgramCounts& hyp, const NgramCounts& ref) {
    OrderStats s;
    for (const auto& [ngram, count] : hyp) {
        s.hyp += count;
        auto it = ref.find(ngram);
        if (it != ref.end()) s.match += std::min(count, it->second);
    }
    if (ref.empty()) s.hyp = 0;  // sacrebleu: "don't count hits if no reference exists"
    for (const auto& entry : ref) s.ref += entry.second;
    return s;
}

double f_score(const OrderStats (&stats)[kCharOrder]) {
    const double factor = kBeta * kBeta;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (const OrderStats& s : stats) {
        if (s.hyp > 0 && s.ref > 0) {
            avg_prec += static_cast<double>(s.match) / static_cast<double>(s.hyp);
            avg_rec += static_cast<double>(s.match) / static_cast<double>(s.ref);
            ++effective_order;
        }
    }
    if (effective_order == 0) return 0.0;
    avg_prec /= effective_order;
    avg_rec /= effective_order;
    if (avg_prec + avg_rec == 0.0) return 0.0;
    return (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec);
}

}  // namespace

double chrf(std::string_view hypothesis, std::string_view reference) {
    const std::u32string hyp = quality_detail::code_points(hypothesis, "chrF hypothesis", true);
    const std::u32string ref = quality_detail::code_points(reference, "chrF reference", true);
    OrderStats stats[kCharOrder];
    for (int n = 1; n <= kCharOrder; ++n) stats[n - 1] = match_statistics(count_ngrams(hyp, n), count_ngrams(ref, n));
    return f_score(stats);
}

double change_score(std::string_view candidate, std::string_view source) { return 1.0 - chrf(candidate, source); }

std::optional<double> diversity_score(const std::vector<std::string>& candidates) {
    const size_t n = candidates.size();
    if (n < 2) return std::nullopt;
    double total = 0.0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            if (i != j) total += 1.0 - chrf(candidates[i], candidates[j]);
    return total / static_cast<double>(n * (n - 1));
}

}  // namespace t5s
