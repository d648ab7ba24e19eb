#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

// A parallel loop for the streaming GEMMs of a decode step: each thread streams its own contiguous
// share front to back, as at::parallel_for's fixed shares do, and a thread that finishes early
// takes chunks from the back of a share not yet done. At batch 1 a product lasts 10-100 us, and
// with fixed shares the slower one (a thread woken late, a busier core) kept the other waiting at
// the join: perf of t5-base int8 greedy batch 1 found the main thread 9.3-9.7 % in libgomp. Claiming
// every chunk from one shared counter instead interleaved the threads' streams and measured 3-5 %
// slower than fixed shares. Each chunk is computed whole by one thread, in the same order inside,
// so results do not depend on which thread ran it. Includers need -fopenmp (engine/CMakeLists.txt).
namespace t5s {

// Units per chunk: about 16 chunks per thread, each at least `min_bytes` and at most `max_bytes`
// of streamed weight (a claim is an atomic operation; the last chunk is what a thread may wait for).
inline int64_t claim_size(int64_t units, int64_t unit_bytes, int64_t min_bytes = int64_t{64} << 10,
                          int64_t max_bytes = int64_t{256} << 10) {
    const int64_t threads = std::max<int64_t>(1, at::get_num_threads());
    const int64_t lo = std::max<int64_t>(1, min_bytes / std::max<int64_t>(1, unit_bytes));
    const int64_t hi = std::max(lo, max_bytes / std::max<int64_t>(1, unit_bytes));
    return std::clamp<int64_t>(units / (threads * 16), lo, hi);
}

// Units per chunk for work that is not a weight stream (register tiles, attention heads): about 8
// chunks per thread, so that a thread the machine slows leaves its last ones to the others.
inline int64_t even_claim_size(int64_t units) {
    return std::max<int64_t>(1, units / (std::max<int64_t>(1, at::get_num_threads()) * 8));
}

namespace claimed_detail {

// A share of chunks [front, back) in one word, so that its owner (from the front) and a thief
// (from the back) never both take the same chunk. One cache line each.
struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
    static uint64_t pack(uint32_t front, uint32_t back) { return (uint64_t{back} << 32) | front; }
    // The front chunk (owner) or the back one (thief); -1 when the share is empty.
    int64_t take(bool from_front) {
        uint64_t r = range.load(std::memory_order_relaxed);
        for (;;) {
            const uint32_t front = static_cast<uint32_t>(r), back = static_cast<uint32_t>(r >> 32);
            if (front >= back) return -1;
            const uint64_t next = from_front ? pack(front + 1, back) : pack(front, back - 1);
            if (range.compare_exchange_weak(r, next, std::memory_order_relaxed)) return from_front ? front : back - 1;
        }
    }
};

}  // namespace claimed_detail

// fn(begin, end) over [0, units) in chunks of `chunk`, run in parallel only where there are more
// than `serial_below` units (the caller's measure of a product worth waking a thread for).
template <class F>
void parallel_claimed(int64_t units, int64_t chunk, int64_t serial_below, const F& fn) {
    chunk = std::max<int64_t>(1, chunk);
    const int64_t chunks = (units + chunk - 1) / chunk;
    const int64_t threads = std::min<int64_t>(at::get_num_threads(), chunks);
    if (units <= serial_below || threads < 2 || at::in_parallel_region() || chunks > UINT32_MAX) {
        if (units > 0) fn(int64_t{0}, units);
        return;
    }
    // The shares live on the stack up to 8 threads: this runs some 80 times a decode step.
    constexpr int64_t kLocal = 8;
    claimed_detail::Share local[kLocal];
    std::unique_ptr<claimed_detail::Share[]> heap;
    if (threads > kLocal) heap.reset(new claimed_detail::Share[threads]);
    claimed_detail::Share* const shares = heap ? heap.get() : local;
    for (int64_t t = 0; t < threads; ++t)
        shares[t].range.store(claimed_detail::Share::pack(static_cast<uint32_t>(chunks * t / threads),
                                                          static_cast<uint32_t>(chunks * (t + 1) / threads)));
    auto run = [&](int64_t c) { fn(c * chunk, std::min(units, (c + 1) * chunk)); };
    // One task per share. A task whose thread the runtime did not start (a smaller team runs the
    // tasks in turn) still finds its share: the shares of tasks run later, or stolen.
    at::parallel_for(0, threads, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            for (int64_t c = shares[t].take(true); c >= 0; c = shares[t].take(true)) run(c);
            for (int64_t o = 1; o < threads; ++o) {
                claimed_detail::Share& other = shares[(t + o) % threads];
                for (int64_t c = other.take(false); c >= 0; c = other.take(false)) run(c);
            }
        }
    });
}

}  // namespace t5s
