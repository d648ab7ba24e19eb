#pragma once
// Semantic textual similarity checks of a scorer: labelled sentence pairs (JSTS's JSONL format:
// "sentence1", "sentence2", "label"), and the Pearson and Spearman correlation of a score with the
// labels. Torch-free; the embedder's similarities come through the t5s::Embedder interface.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "t5s/embedder.h"

#include "t5s/input_reader.h"

namespace t5s {

struct StsPair {
    std::string sentence1, sentence2;
    double label = 0;
};

// Pairs with a numeric "label", read by the one input reader and its column rule (t5s/input_reader.h:
// JSONL as JSTS ships it, "sentence1", "sentence2", or CSV/TSV with such columns; `columns` names
// others). Under Fail a bad row throws t5s::Error naming file:line and the field; under Skip on_bad
// hears of it. `limit` > 0: only the first `limit` pairs. Fewer than 2 pairs throws.
std::vector<StsPair> read_sts_pairs(const std::filesystem::path& file, BadRowPolicy policy = BadRowPolicy::Fail,
                                    const std::function<void(const BadRow&)>& on_bad = {}, int64_t limit = 0,
                                    const ColumnChoice& columns = {});

struct StsCorrelation {
    double pearson = 0;
    double spearman = 0;  // Pearson of the ranks, ties sharing their average rank (as scipy)
    size_t pairs = 0;
};

double pearson_correlation(const std::vector<double>& x, const std::vector<double>& y);
double spearman_correlation(const std::vector<double>& x, const std::vector<double>& y);
StsCorrelation sts_correlation(const std::vector<StsPair>& pairs, const std::vector<double>& scores);

// Cosine similarity of each pair's embeddings (both sentences embedded with `options`).
std::vector<double> embedder_similarities(const Embedder& embedder, const std::vector<StsPair>& pairs,
                                          const EmbedOptions& options = {});

}  // namespace t5s
