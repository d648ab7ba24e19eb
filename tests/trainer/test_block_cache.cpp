// The training run's CPU block cache (trainer/block_cache.h): freed large blocks come back for the
// same sizes, mapped bytes stay near the most ever live, and the previous allocator returns with
// the scope's end, also for blocks freed after it.
#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#undef CHECK
#include <catch2/catch.hpp>

#include "trainer/block_cache.h"

using namespace t5s;

TEST_CASE("the CPU block cache reuses freed large blocks and leaves with its scope", "[trainer][memory]") {
    c10::Allocator* before = c10::GetCPUAllocator();
    at::Tensor outlives;
    {
        CpuBlockCacheScope scope;
        CHECK(c10::GetCPUAllocator() != before);
        const CpuBlockCacheStats start = cpu_block_cache_stats();
        for (int step = 0; step < 5; ++step) {  // the same sizes every "step", as training allocates them
            at::Tensor a = at::empty({1024, 1024}), b = at::ones({512, 1024}), small = at::ones({16});
            CHECK(b.sum().item<float>() == 512.0f * 1024.0f);  // a reused block is written before it is read
            CHECK(small.sum().item<float>() == 16.0f);
        }
        const CpuBlockCacheStats end = cpu_block_cache_stats();
        CHECK(end.misses - start.misses == 2);  // a and b once; small tensors stay with malloc
        CHECK(end.hits - start.hits == 8);
        CHECK(end.live_bytes == start.live_bytes);
        CHECK(end.cached_bytes <= end.peak_live_bytes + end.peak_live_bytes / 4);
        {
            CpuBlockCacheScope nested;  // a second scope (another run in the process) changes nothing
            CHECK(at::empty({1024, 1024}).numel() == 1024 * 1024);
        }
        CHECK(c10::GetCPUAllocator() != before);
        // raw_allocate / raw_deallocate (oneDNN's scratch buffers), large and small.
        c10::Allocator* cache = c10::GetCPUAllocator();
        for (size_t bytes : {size_t(1) << 20, size_t(64)}) {
            void* raw = cache->raw_allocate(bytes);
            REQUIRE(raw != nullptr);
            static_cast<char*>(raw)[bytes - 1] = 1;
            cache->raw_deallocate(raw);
        }
        outlives = at::full({300, 1024}, 2.0f);
    }
    CHECK(c10::GetCPUAllocator() == before);
    CHECK(cpu_block_cache_stats().cached_bytes == 0);
    CHECK(outlives.sum().item<float>() == 2.0f * 300 * 1024);
    outlives.resize_({600, 1024});  // its storage grows through the cache's allocate, now uninstalled
    outlives = at::Tensor();        // unmapped, not cached
    CHECK(cpu_block_cache_stats().cached_bytes == 0);
    CHECK(cpu_block_cache_stats().live_bytes == 0);
}

TEST_CASE("a miss unmaps cached blocks of sizes no longer asked for", "[trainer][memory]") {
    CpuBlockCacheScope scope;
    const CpuBlockCacheStats start = cpu_block_cache_stats();
    // 16 sizes from 1 to 2 MiB, each its own size class (classes are 64 KiB apart there), one freed
    // before the next: kept, they would be ~24 MiB cached against a ~2 MiB peak.
    constexpr int kSizes = 16;
    for (int i = 0; i < kSizes; ++i) {
        at::Tensor t = at::ones({256 + 16 * i, 1024});
        const CpuBlockCacheStats s = cpu_block_cache_stats();
        CHECK(s.live_bytes + s.cached_bytes <= s.peak_live_bytes + s.peak_live_bytes / 4 + t.nbytes() + (64 << 10));
    }
    const CpuBlockCacheStats end = cpu_block_cache_stats();
    CHECK(end.misses - start.misses == kSizes);
    CHECK(end.cached_bytes <= end.peak_live_bytes + end.peak_live_bytes / 4);
}
