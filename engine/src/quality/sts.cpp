#include "t5s/sts.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "t5s/error.h"

namespace t5s {

std::vector<StsPair> read_sts_pairs(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw Error(ErrorCode::FileNotFound, file.string() + ": cannot open");
    std::vector<StsPair> pairs;
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = file.string() + ":" + std::to_string(n);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception&) {
            throw Error(ErrorCode::CorruptFile, where + ": not a JSON object");
        }
        if (!j.is_object()) throw Error(ErrorCode::CorruptFile, where + ": not a JSON object");
        for (const char* key : {"sentence1", "sentence2"}) {
            if (!j.contains(key) || !j[key].is_string())
                throw Error(ErrorCode::CorruptFile, where + ": '" + key + "' must be a string");
        }
        if (!j.contains("label") || !j["label"].is_number())
            throw Error(ErrorCode::CorruptFile, where + ": 'label' must be a number");
        pairs.push_back({j["sentence1"].get<std::string>(), j["sentence2"].get<std::string>(), j["label"].get<double>()});
    }
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
