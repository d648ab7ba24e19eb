// Seeded, deterministic batch order (std::mt19937_64 + our own Fisher-Yates, so the order is the
// same with every standard library).
#include <algorithm>

#include "trainer/data_internal.h"

namespace t5s {
namespace {

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
    for (size_t i = v.size(); i > 1; --i) {
        const size_t j = static_cast<size_t>(rng() % i);
        std::swap(v[i - 1], v[j]);
    }
}

}  // namespace

std::vector<std::vector<int64_t>> make_epoch_batches(const std::vector<TokenizedPair>& data, int batch_size, bool group_by_length,
                                                     uint64_t seed, int64_t epoch) {
    std::mt19937_64 rng(seed * 1000003ull + static_cast<uint64_t>(epoch) * 7919ull + 17ull);
    std::vector<int64_t> order(data.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    shuffle(order, rng);
    if (group_by_length) {
        const size_t chunk = static_cast<size_t>(batch_size) * 50;
        for (size_t start = 0; start < order.size(); start += chunk) {
            auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + chunk));
            std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(start), end, [&](int64_t a, int64_t b) {
                return data[a].source.size() + data[a].target.size() > data[b].source.size() + data[b].target.size();
            });
        }
    }
    std::vector<std::vector<int64_t>> batches;
    for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch_size)) {
        batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                             order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + batch_size)));
    }
    if (group_by_length) shuffle(batches, rng);
    return batches;
}

}  // namespace t5s
