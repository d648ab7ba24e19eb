#pragma once
// Torch-free surface-similarity scores for paraphrase candidates:
//  - chrF exactly as sacrebleu's sentence-level `CHRF()` defaults compute it (character n-grams
//    1..6, no word n-grams, beta 2, whitespace removed, effective-order averaging), on Unicode
//    code points so Chinese, Japanese and emoji count one character each;
//  - `change` and `diversity`, built on chrF;
//  - MinHash over character 5-gram shingles with an LSH near-duplicate finder (for
//    `export --dedupe near`).
// Inputs are UTF-8; invalid UTF-8 throws t5s::Error(InvalidArgument) naming the argument.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace t5s {

// sacrebleu's sentence_score(hypothesis, [reference]).score / 100, in [0, 1]. Asymmetric: the
// hypothesis supplies precision, the reference recall, and recall weighs beta^2 = 4 times more.
// As in sacrebleu, a pair with no n-gram on one side (empty or whitespace-only) scores 0, even
// two empty strings.
double chrf(std::string_view hypothesis, std::string_view reference);

// Surface change of a candidate from its source: 1 - chrF(candidate, source), the candidate being
// the hypothesis (as sacrebleu scores a system output against its reference).
double change_score(std::string_view candidate, std::string_view source);

// Mean of 1 - chrF(c_i, c_j) over all ordered pairs i != j. Both directions of each pair are
// averaged because chrF is asymmetric and the candidates have no natural order: the result then
// does not depend on how the candidates are ranked. Empty (JSON null) for fewer than 2 candidates.
std::optional<double> diversity_score(const std::vector<std::string>& candidates);

// ---- MinHash --------------------------------------------------------------------------------

struct MinHashOptions {
    int num_permutations = 128;                // more = a tighter Jaccard estimate (std. error sqrt(J(1-J)/k))
    int shingle_size = 5;                      // characters (code points) per shingle
    uint64_t seed = 0x5eed'7505'd1a0'0001ULL;  // fixed: the same text always gets the same signature
};

// Shingles are taken from the text with Unicode whitespace runs collapsed to one space and the
// ends trimmed; a non-empty text shorter than a shingle is one shingle. Returned as 64-bit hashes,
// sorted and unique (the set the Jaccard similarity is defined on).
std::vector<uint64_t> shingle_hashes(std::string_view text, int shingle_size = 5);

// Exact Jaccard similarity of the two texts' shingle sets (1 when both are empty).
double shingle_jaccard(std::string_view a, std::string_view b, int shingle_size = 5);

class MinHasher {
public:
    explicit MinHasher(MinHashOptions options = {});  // throws InvalidArgument on bad options
    const MinHashOptions& options() const { return options_; }
    // One value per permutation: the minimum of that permutation's hash over the shingle set.
    std::vector<uint32_t> signature(std::string_view text) const;

private:
    MinHashOptions options_;
    std::vector<uint64_t> permutation_seeds_;
};

// Fraction of equal positions: an unbiased estimate of the Jaccard similarity.
double estimate_jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

struct NearDuplicateOptions {
    double threshold = 0.9;  // estimated Jaccard at or above which a text is a near duplicate
    MinHashOptions minhash;
    // LSH rows per band; 0 picks the largest divisor of num_permutations that still makes a pair
    // at the threshold a candidate with probability >= 0.995.
    int rows_per_band = 0;
};

struct NearDuplicate {
    size_t index;              // the text that would be dropped
    size_t duplicate_of;       // the earliest kept text it matches
    double estimated_jaccard;  // MinHash estimate for the pair
};

// Scans texts in order, keeping the first of every group of near duplicates; returns the dropped
// ones in increasing index order. Deterministic for fixed options.
std::vector<NearDuplicate> find_near_duplicates(const std::vector<std::string>& texts, const NearDuplicateOptions& options = {});

// The same scan, one text at a time (export streams its rows through one): add() returns the
// match when the text is a near duplicate of an earlier kept one (then it is not kept), else empty.
// Memory: one signature (4 * num_permutations bytes) per kept text.
class NearDuplicateIndex {
public:
    explicit NearDuplicateIndex(const NearDuplicateOptions& options = {});  // throws InvalidArgument on bad options
    std::optional<NearDuplicate> add(std::string_view text);

private:
    double threshold_;
    MinHasher hasher_;
    int rows_ = 1;
    size_t added_ = 0;
    std::vector<std::unordered_map<uint64_t, std::vector<size_t>>> buckets_;
    std::unordered_map<size_t, std::vector<uint32_t>> kept_signatures_;
};

// The rows-per-band choice find_near_duplicates makes when rows_per_band is 0.
int choose_rows_per_band(int num_permutations, double threshold);

}  // namespace t5s
