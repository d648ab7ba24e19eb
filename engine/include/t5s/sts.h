#pragma once
// Semantic textual similarity checks of a scorer: labelled sentence pairs (JSTS's JSONL format:
// "sentence1", "sentence2", "label"), and the Pearson and Spearman correlation of a score with the
// labels. Torch-free; the embedder's similarities come through the t5s::Embedder interface.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "t5s/embedder.h"

namespace t5s {

struct StsPair {
    std::string sentence1, sentence2;
    double label = 0;
};

// One JSON object per line; blank lines skipped. Throws t5s::Error naming file:line and the field.
std::vector<StsPair> read_sts_pairs(const std::filesystem::path& file);

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
