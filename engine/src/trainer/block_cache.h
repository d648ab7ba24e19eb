#pragma once
// A training step frees and allocates the same large CPU tensors every step (activations, their
// gradients, the logits). glibc serves such sizes with fresh mmaps (or, above its dynamic
// threshold, from a heap that keeps them resident: ~800 MiB over the live bytes for t5-base), and
// every fresh page is zeroed by the kernel: t5-small's step spent ~20 % of its time in page faults.
// While a scope lives, LibTorch's CPU allocator keeps freed large blocks and hands them out again
// (CUDA's caching allocator does the same for device memory). Mapped bytes never exceed the most
// that was live at once plus the block asked for: a miss first unmaps cached blocks (sizes a
// varying batch no longer asks for).
#include <cstdint>

namespace t5s {

class CpuBlockCacheScope {
public:
    CpuBlockCacheScope();   // installs the caching allocator (scopes nest: the first installs it)
    ~CpuBlockCacheScope();  // the last one restores the previous allocator and unmaps the cache
    CpuBlockCacheScope(const CpuBlockCacheScope&) = delete;
    CpuBlockCacheScope& operator=(const CpuBlockCacheScope&) = delete;
};

struct CpuBlockCacheStats {
    int64_t live_bytes = 0;    // large blocks in use
    int64_t cached_bytes = 0;  // freed large blocks kept for reuse
    int64_t peak_live_bytes = 0;
    int64_t hits = 0, misses = 0;
};
CpuBlockCacheStats cpu_block_cache_stats();

}  // namespace t5s
