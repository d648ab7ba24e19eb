// The streaming GEMMs' parallel loop (claimed_chunks.h): every unit runs exactly once, in whole
// chunks, at any thread count and inside a parallel region; a thread that finishes its own share
// takes chunks of a share whose owner is held up. Compiled with -fopenmp like the kernels that
// use it (tests/CMakeLists.txt), so at::parallel_for really runs on a team of threads here.
#include <ATen/Parallel.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "skip.h"
#include "torch/claimed_chunks.h"

using namespace t5s;

namespace {

// Runs parallel_claimed and returns how many times each unit ran; `whole` turns false if a call
// was not one chunk (or the whole range, run serially).
std::vector<int> runs_per_unit(int64_t units, int64_t chunk, int64_t serial_below, bool& whole) {
    std::unique_ptr<std::atomic<int>[]> count(new std::atomic<int>[static_cast<size_t>(units) + 1]);
    for (int64_t u = 0; u <= units; ++u) count[u] = 0;
    std::atomic<bool> ok{true};
    parallel_claimed(units, chunk, serial_below, [&](int64_t begin, int64_t end) {
        const bool chunk_shaped = begin % chunk == 0 && end == std::min(units, begin + chunk);
        if (!chunk_shaped && !(begin == 0 && end == units)) ok = false;
        for (int64_t u = begin; u < end; ++u) count[u]++;
    });
    whole = ok;
    std::vector<int> result;
    for (int64_t u = 0; u < units; ++u) result.push_back(count[u]);
    return result;
}

struct ThreadCount {
    int saved = at::get_num_threads();
    explicit ThreadCount(int n) { at::set_num_threads(n); }
    ~ThreadCount() { at::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("claimed chunks run every unit once, in whole chunks, at any thread count", "[kernels][claimed]") {
    for (int threads : {1, 2, 3, 4, 9}) {
        ThreadCount scope(threads);
        for (int64_t units : {0, 1, 2, 7, 100, 1001}) {
            for (int64_t chunk : {1, 3, 64}) {
                for (int64_t serial_below : {0, 50}) {
                    bool whole = false;
                    const std::vector<int> runs = runs_per_unit(units, chunk, serial_below, whole);
                    INFO("threads " << threads << ", units " << units << ", chunk " << chunk << ", serial below "
                                    << serial_below);
                    CHECK(whole);
                    CHECK(std::count(runs.begin(), runs.end(), 1) == units);
                }
            }
        }
    }
}

TEST_CASE("claimed chunks inside a parallel region run on the calling thread, every unit once", "[kernels][claimed]") {
    ThreadCount scope(2);
    std::atomic<int64_t> covered{0};
    at::parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            bool whole = false;
            const std::vector<int> runs = runs_per_unit(500, 7, 0, whole);
            if (whole && std::count(runs.begin(), runs.end(), 1) == 500) covered += 500;
        }
    });
    CHECK(covered == 1000);
}

TEST_CASE("claimed chunks: a thread done with its share takes chunks of a share held up", "[kernels][claimed][may_skip]") {
    ThreadCount scope(2);
    if (at::get_num_threads() < 2) T5S_SKIP("this LibTorch runs one thread here: nothing to take from");
    constexpr int64_t kChunks = 64;
    std::atomic<int64_t> done{0};
    std::atomic<bool> first{true}, timed_out{false};
    std::vector<std::thread::id> ran_by(kChunks);
    int64_t held = -1;
    std::thread::id holder;
    parallel_claimed(kChunks, 1, 0, [&](int64_t begin, int64_t) {
        ran_by[begin] = std::this_thread::get_id();
        // The first chunk run, whichever thread runs it, holds its thread until every other chunk
        // ran (an event, with a deadline): the rest of its share can only run on the other thread.
        if (first.exchange(false)) {
            held = begin, holder = std::this_thread::get_id();
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (done.load() < kChunks - 1)
                if (std::chrono::steady_clock::now() > deadline) {
                    timed_out = true;
                    break;
                }
        }
        done++;
    });
    REQUIRE_FALSE(timed_out);
    CHECK(done == kChunks);
    int64_t by_others = 0;
    for (int64_t c = 0; c < kChunks; ++c) by_others += c != held && ran_by[c] != holder;
    CHECK(by_others == kChunks - 1);
}
