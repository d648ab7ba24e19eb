#include "t5s/sts.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "t5s/error.h"

namespace t5s {

std::vector<StsPair> read_sts_pairs(const std::filesystem::path& file, BadRowPolicy policy,
                                    const std::function<void(const BadRow&)>& on_bad, int64_t limit,
                                    const ColumnChoice& columns) {
    InputFields fields = pair_fields(columns);
    fields.numeric_label = true;
    InputReader reader(file.string(), fields, policy, on_bad);
    std::vector<StsPair> pairs;
    InputRecord row;
    while ((limit <= 0 || static_cast<int64_t>(pairs.size()) < limit) && reader.next(&row))
        pairs.push_back({std::move(row.texts[0]), std::move(row.texts[1]), std::stod(row.label_json)});
    if (pairs.size() < 2) throw Error(ErrorCode::CorruptFile, file.string() + ": needs at least 2 labelled pairs");
    return pairs;
}

double pearson_correlation(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size() || x.size() < 2)
        throw Error(ErrorCode::InvalidArgument, "correlation needs two equal-length series of 2+ values");
    const double n = static_cast<double>(x.size());
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx == 0 || syy == 0) return 0;  // a constant series correlates with nothing (scipy: nan)
    return sxy / std::sqrt(sxx * syy);
}

namespace {

std::vector<double> average_ranks(const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> ranks(v.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
        const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
        for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
        i = j + 1;
    }
    return ranks;
}

}  // namespace

double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y) {
    return pearson_correlation(average_ranks(x), average_ranks(y));
}

StsCorrelation sts_correlation(const std::vector<StsPair>& pairs, const std::vector<double>& scores) {
    std::vector<double> labels;
    for (const auto& p : pairs) labels.push_back(p.label);
    return {pearson_correlation(scores, labels), spearman_correlation(scores, labels), pairs.size()};
}

std::vector<double> embedder_similarities(const Embedder& embedder, const std::vector<StsPair>& pairs,
                                          const EmbedOptions& options) {
    std::vector<std::string> texts;
    texts.reserve(pairs.size() * 2);
    for (const auto& p : pairs) {
        texts.push_back(p.sentence1);
        texts.push_back(p.sentence2);
    }
    const auto rows = embedder.embed(texts, options);
    std::vector<double> sims;
    sims.reserve(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) sims.push_back(cosine_similarity(rows[2 * i], rows[2 * i + 1]));
    return sims;
}

}  // namespace t5s
