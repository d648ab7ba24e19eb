// MinHash over character shingles and an LSH (banding) near-duplicate finder, for corpus-level
// `export --dedupe near`. Every hash is seeded from MinHashOptions::seed, so results are the same
// on every run and machine.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "code_points.h"
#include "t5s/error.h"
#include "t5s/quality.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

// splitmix64's finaliser: a cheap bijective mixer with good avalanche, used both to derive the
// permutation seeds and as the per-permutation hash h_i(x) = mix(x ^ seed_i).
uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hash_code_points(std::u32string_view s) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the code points, then mixed
    for (char32_t c : s) h = (h ^ static_cast<uint64_t>(c)) * 0x100000001b3ULL;
    return mix64(h);
}

void require(bool ok, const std::string& message) {
    if (!ok) throw Error(ErrorCode::InvalidArgument, message);
}

void require_in(std::string_view name, const FieldRange& range, double v) {
    if (!settings_in_range(range, v)) throw Error(ErrorCode::InvalidArgument, range_message(name, range, v));
}

void validate(const MinHashOptions& o) {
    require_in("minhash num_permutations", from_to(1, 4096), o.num_permutations);
    require_in("minhash shingle_size", from_to(1, 64), o.shingle_size);
}

double candidate_probability(double jaccard, int rows, int bands) { return 1.0 - std::pow(1.0 - std::pow(jaccard, rows), bands); }

uint64_t band_key(const std::vector<uint32_t>& sig, size_t begin, size_t rows) {
    uint64_t h = 0;
    for (size_t i = begin; i < begin + rows; ++i) h = mix64(h ^ sig[i]);
    return h;
}

}  // namespace

std::vector<uint64_t> shingle_hashes(std::string_view text, int shingle_size) {
    require_in("shingle_size", at_least(1), shingle_size);
    const std::u32string cps = quality_detail::code_points(text, "minhash text", false);
    const std::u32string_view view(cps);
    const size_t k = static_cast<size_t>(shingle_size);
    std::vector<uint64_t> hashes;
    if (cps.empty()) return hashes;
    if (cps.size() <= k) {
        hashes.push_back(hash_code_points(view));
        return hashes;
    }
    hashes.reserve(cps.size() - k + 1);
    for (size_t i = 0; i + k <= cps.size(); ++i) hashes.push_back(hash_code_points(view.substr(i, k)));
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
    return hashes;
}

double shingle_jaccard(std::string_view a, std::string_view b, int shingle_size) {
    const std::vector<uint64_t> sa = shingle_hashes(a, shingle_size), sb = shingle_hashes(b, shingle_size);
    if (sa.empty() && sb.empty()) return 1.0;
    std::vector<uint64_t> common;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(common));
    const size_t united = sa.size() + sb.size() - common.size();
    return static_cast<double>(common.size()) / static_cast<double>(united);
}

MinHasher::MinHasher(MinHashOptions options) : options_(options) {
    validate(options_);
    permutation_seeds_.resize(static_cast<size_t>(options_.num_permutations));
    uint64_t state = options_.seed;
    for (uint64_t& s : permutation_seeds_) s = state = mix64(state);
}

std::vector<uint32_t> MinHasher::signature(std::string_view text) const {
    // An empty shingle set keeps every slot at the maximum, so two empty texts match exactly.
    std::vector<uint32_t> sig(permutation_seeds_.size(), std::numeric_limits<uint32_t>::max());
    for (uint64_t shingle : shingle_hashes(text, options_.shingle_size)) {
        for (size_t i = 0; i < sig.size(); ++i) {
            const auto h = static_cast<uint32_t>(mix64(shingle ^ permutation_seeds_[i]) >> 32);
            sig[i] = std::min(sig[i], h);
        }
    }
    return sig;
}

double estimate_jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    require(a.size() == b.size() && !a.empty(), "minhash signatures differ in length (" + std::to_string(a.size()) + " vs " +
                                                    std::to_string(b.size()) + ") or are empty");
    size_t equal = 0;
    for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
    return static_cast<double>(equal) / static_cast<double>(a.size());
}

int choose_rows_per_band(int num_permutations, double threshold) {
    int best = 1;
    for (int rows = 1; rows <= num_permutations; ++rows) {
        if (num_permutations % rows != 0) continue;
        if (candidate_probability(threshold, rows, num_permutations / rows) >= 0.995) best = rows;
    }
    return best;
}

NearDuplicateIndex::NearDuplicateIndex(const NearDuplicateOptions& options)
    : threshold_(options.threshold), hasher_(options.minhash) {
    require_in("near-duplicate threshold", above_to(0, 1), options.threshold);
    const int k = options.minhash.num_permutations;
    rows_ = options.rows_per_band == 0 ? choose_rows_per_band(k, options.threshold) : options.rows_per_band;
    require(rows_ >= 1 && k % rows_ == 0, "near-duplicate rows_per_band must divide num_permutations (" + std::to_string(k) +
                                              "), got " + std::to_string(rows_));
    buckets_.resize(static_cast<size_t>(k / rows_));
}

std::optional<NearDuplicate> NearDuplicateIndex::add(std::string_view text) {
    const size_t index = added_++;
    std::vector<uint32_t> sig = hasher_.signature(text);
    const size_t bands = buckets_.size(), rows = static_cast<size_t>(rows_);
    std::vector<uint64_t> keys(bands);
    std::vector<size_t> candidates;
    for (size_t b = 0; b < bands; ++b) {
        keys[b] = band_key(sig, b * rows, rows);
        auto it = buckets_[b].find(keys[b]);
        if (it != buckets_[b].end()) candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (size_t other : candidates) {
        const double estimate = estimate_jaccard(sig, kept_signatures_.at(other));
        if (estimate >= threshold_) return NearDuplicate{index, other, estimate};
    }
    // Only kept texts enter the buckets: a duplicate is reported against the first text of its group.
    for (size_t b = 0; b < bands; ++b) buckets_[b][keys[b]].push_back(index);
    kept_signatures_.emplace(index, std::move(sig));
    return std::nullopt;
}

std::vector<NearDuplicate> find_near_duplicates(const std::vector<std::string>& texts, const NearDuplicateOptions& options) {
    NearDuplicateIndex index(options);
    std::vector<NearDuplicate> dropped;
    for (const auto& text : texts) {
        if (auto d = index.add(text)) dropped.push_back(*d);
    }
    return dropped;
}

}  // namespace t5s
