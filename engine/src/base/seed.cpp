#include "t5s/seed.h"

#include <random>

namespace t5s {

int64_t resolve_seed(int64_t requested) {
    if (requested >= 0) return requested;
    return static_cast<int64_t>(std::random_device{}() & 0x7fffffffu);
}

int64_t derive_seed(int64_t seed, int64_t index) {
    // splitmix64 (Steele et al.): consecutive indices give unrelated streams.
    uint64_t z = static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(index) + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<int64_t>(z & 0x7fffffffull);
}

}  // namespace t5s
