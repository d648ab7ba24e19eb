#include "trainer/block_cache.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace t5s {
namespace {

// Smaller tensors stay with the allocator the cache replaced: malloc serves them from its heap
// without page faults, and caching them would only add locking to many tiny allocations.
constexpr size_t kMinCachedBytes = 256 * 1024;

// A size class: whole pages, rounded up to a multiple of the largest power of two that is at most
// 1/16 of the size — under 1/16 more than asked (6 % at worst for weights, gradients and AdamW
// state, which never change size), so a batch padded one token longer still finds its blocks.
size_t block_size(size_t n) {
    constexpr size_t kPage = 4096;
    n = (n + kPage - 1) / kPage * kPage;
    size_t step = kPage;
    while (step * 32 <= n) step *= 2;
    return (n + step - 1) / step * step;
}

// Pointers double as their DataPtr's context (as LibTorch's raw_allocate requires: oneDNN takes
// its scratch buffers that way), so a block's size is looked up by address when it is freed.
class BlockCache final : public c10::Allocator {
public:
    static BlockCache& instance() {
        static BlockCache* cache = new BlockCache();  // never destroyed: blocks may be freed at exit
        return *cache;
    }

    c10::DataPtr allocate(size_t n) override {
        c10::Allocator* previous = previous_.load();
        if (!previous) return c10::GetDefaultCPUAllocator()->allocate(n);  // a block's storage resized after the scope
        if (n < kMinCachedBytes) return previous->allocate(n);
        void* block = take(block_size(n));
        return {block, block, &release, c10::Device(c10::kCPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &release; }
    void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

    void install() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (scopes_++ > 0) return;
        c10::Allocator* previous = c10::GetCPUAllocator();
        if (!other_raw_deleter_) other_raw_deleter_ = previous->raw_deleter();
        previous_ = previous;
        c10::SetCPUAllocator(this, kPriority);
    }
    void uninstall() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--scopes_ > 0) return;
        c10::SetCPUAllocator(previous_.load(), kPriority);
        previous_ = nullptr;  // blocks still alive are unmapped when freed
        trim(0);
    }
    CpuBlockCacheStats stats() {
        std::lock_guard<std::mutex> lock(mutex_);
        return stats_;
    }

private:
    static constexpr uint8_t kPriority = 0;  // LibTorch's default allocator is registered at 0 too

    void* take(size_t size) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = free_.find(size);
            if (it != free_.end() && !it->second.empty()) {
                void* block = it->second.back();
                it->second.pop_back();
                stats_.cached_bytes -= static_cast<int64_t>(size);
                ++stats_.hits;
                note_live(block, size);
                return block;
            }
            ++stats_.misses;
            // Mapped bytes stay within 1.25x the most ever live at once, plus this block: the
            // slack lets a step whose blocks overlap a little differently still find its sizes.
            const int64_t limit = stats_.peak_live_bytes + stats_.peak_live_bytes / 4;
            trim(std::max<int64_t>(0, limit - stats_.live_bytes - static_cast<int64_t>(size)));
        }
        void* block = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (block == MAP_FAILED) throw std::bad_alloc();  // LibTorch reports it as out of memory
        std::lock_guard<std::mutex> lock(mutex_);
        note_live(block, size);
        return block;
    }
    // Holds mutex_.
    void note_live(void* block, size_t size) {
        live_[block] = size;
        stats_.live_bytes += static_cast<int64_t>(size);
        stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
    }
    static void release(void* block) {
        BlockCache& cache = instance();
        size_t unmap = 0;
        c10::DeleterFnPtr other = nullptr;
        {
            std::lock_guard<std::mutex> lock(cache.mutex_);
            auto it = cache.live_.find(block);
            if (it == cache.live_.end()) {
                other = cache.other_raw_deleter_;  // raw_allocate of a small size: the previous allocator's
            } else {
                const size_t size = it->second;
                cache.live_.erase(it);
                cache.stats_.live_bytes -= static_cast<int64_t>(size);
                if (cache.previous_.load()) {
                    cache.free_[size].push_back(block);
                    cache.stats_.cached_bytes += static_cast<int64_t>(size);
                } else {
                    unmap = size;
                }
            }
        }
        if (other) other(block);
        if (unmap) munmap(block, unmap);
    }
    // Unmaps cached blocks, largest first, until at most `keep` bytes stay cached. Holds mutex_.
    void trim(int64_t keep) {
        for (auto it = free_.rbegin(); it != free_.rend() && stats_.cached_bytes > keep; ++it) {
            while (!it->second.empty() && stats_.cached_bytes > keep) {
                munmap(it->second.back(), it->first);
                it->second.pop_back();
                stats_.cached_bytes -= static_cast<int64_t>(it->first);
            }
        }
    }

    std::mutex mutex_;
    int scopes_ = 0;
    std::atomic<c10::Allocator*> previous_{nullptr};  // also read by allocate without the lock
    c10::DeleterFnPtr other_raw_deleter_ = nullptr;
    std::unordered_map<void*, size_t> live_;
    std::map<size_t, std::vector<void*>> free_;
    CpuBlockCacheStats stats_;
};

}  // namespace

CpuBlockCacheScope::CpuBlockCacheScope() { BlockCache::instance().install(); }
CpuBlockCacheScope::~CpuBlockCacheScope() { BlockCache::instance().uninstall(); }
CpuBlockCacheStats cpu_block_cache_stats() { return BlockCache::instance().stats(); }

}  // namespace t5s
