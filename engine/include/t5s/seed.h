#pragma once
// The one home of the random-seed rule for generation.
#include <cstdint>

namespace t5s {

// A request's seed as used: the given one, or (seed < 0) a fresh random non-negative 31-bit one,
// which results report so that a run can be reproduced.
int64_t resolve_seed(int64_t requested);

// The seed of one unit of work at a global position of a file (a row, or the batch that starts at
// that row): a splitmix64 mix of (seed, index), non-negative 31-bit. Sharded runs use it so the
// union of N shards equals the unsharded run for every N, sampling included.
int64_t derive_seed(int64_t seed, int64_t index);

}  // namespace t5s
