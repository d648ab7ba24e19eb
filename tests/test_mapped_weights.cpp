// An inference load holds each weight once: safetensors tensors are read-only views of the file
// (copies where the bytes are unaligned), a tied head's inference form is also the embedding
// table, and clean library pages LibTorch's start-up touched can leave the resident set.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <malloc.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "platform/idle_heap.h"
#include "skip.h"
#include "t5s/process_memory.h"
#include "t5s/safetensors.h"
#include "test_support.h"
#include "torch/int8_gemm.h"
#include "torch/linear.h"
#include "torch/mapped_tensor.h"
#include "torch/weight_loader.h"

using namespace t5s;
using namespace t5s::test;

namespace {

int64_t status_kb(const std::string& key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
}

TensorToWrite entry(const std::string& name, DType dtype, const at::Tensor& t) {
    return {name, dtype, t.sizes().vec(), t.data_ptr(), static_cast<size_t>(t.nbytes())};
}

const at::Tensor kIds = at::tensor({0, 36, 5, 16, 17, 5}, at::kLong).view({2, 3});

}  // namespace

TEST_CASE("mapped safetensors weights are views of the file, equal to the copies", "[loading][memory]") {
    TempDir dir("mapped");
    at::manual_seed(7);
    const at::Tensor a = at::randn({64, 1024}), b = at::randn({3}).to(at::kHalf), c = at::randn({5});
    // Written in name order: a (aligned), b (6 bytes), c (after b: 2-byte aligned only -> copied).
    write_safetensors(dir.path() / "model.safetensors",
                      {entry("a", DType::F32, a), entry("b", DType::F16, b), entry("c", DType::F32, c)});
    LoadedWeights mapped = load_checkpoint_tensors(dir.path(), WeightStorage::Mapped);
    LoadedWeights copied = load_checkpoint_tensors(dir.path());
    CHECK(is_mapped_view(mapped.tensors.at("a")));
    CHECK(is_mapped_view(mapped.tensors.at("b")));
    CHECK_FALSE(is_mapped_view(mapped.tensors.at("c")));
    for (const char* name : {"a", "b", "c"}) {
        INFO(name);
        CHECK_FALSE(is_mapped_view(copied.tensors.at(name)));
        CHECK(at::equal(mapped.tensors.at(name), copied.tensors.at(name)));
    }
    CHECK(at::equal(mapped.tensors.at("a"), a));
    CHECK(at::equal(mapped.tensors.at("c"), c));
    // A view keeps the file mapped after everything else let go of it.
    at::Tensor kept = mapped.tensors.at("a");
    mapped.tensors.clear();
    CHECK(at::equal(kept, a));
}

TEST_CASE("a tied head's panels give the embedding rows exactly", "[memory][panels]") {
    at::manual_seed(11);
    const at::Tensor w = at::randn({37, 128});  // 37 rows: a part panel
    KernelPolicy panels = default_kernel_policy();
    panels.fp32_gemm = Fp32Gemm::Panels;
    panels.packing = WeightPacking::All;
    Linear head(w);
    CHECK(at::equal(head.rows(kIds), at::embedding(w, kIds)));  // Plain
    head.pack_for_cpu(panels);
    REQUIRE(std::holds_alternative<Linear::Fp32Panels>(head.form()));
    CHECK(at::equal(head.rows(kIds), at::embedding(w, kIds)));
}

TEST_CASE("a tied head in the VNNI int8 layout gives the int8 embedding rows exactly", "[memory][int8][vnni][may_skip]") {
    if (!detect_cpu_features().avx512_vnni) T5S_SKIP("this CPU has no AVX512-VNNI: its heads use FBGEMM's opaque form");
    at::manual_seed(12);
    const at::Tensor w = at::randn({37, 128});  // 37 rows: a part block of 16
    KernelPolicy vnni = default_kernel_policy();
    vnni.int8 = Int8Kernel::Vnni;
    Linear head(w);
    head.quantize_int8(false, vnni);
    REQUIRE(std::holds_alternative<Linear::CpuInt8>(head.form()));
    const Int8Rows table = quantize_int8_rows(w);  // what a separate int8 embedding table holds
    CHECK(at::equal(head.rows(kIds), at::embedding(table.q, kIds).to(at::kFloat).mul_(at::embedding(table.scale, kIds))));
}

TEST_CASE("clean file pages leave the resident set and the model still computes the same", "[memory]") {
    auto model = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Fp32, 1});
    GenerationOptions o;
    o.max_new_tokens = 8;
    const auto generate = [&] {
        const auto out = model->generate_ids({{5, 6, 7, 1}}, o);
        return std::make_pair(out.at(0).at(0).ids, out.at(0).at(0).score);
    };
    const auto before = generate();
    REQUIRE_FALSE(before.first.empty());
    const int64_t file_kb = status_kb("RssFile:");
    const int64_t released = release_clean_file_pages();
    CHECK(released > 0);
    CHECK(status_kb("RssFile:") < file_kb);
    CHECK(generate() == before);  // code and weights fault back in from their files
}

#ifdef __GLIBC__
TEST_CASE("blocks freed during a load go back to the system, not into the heap", "[memory][loading]") {
    // glibc's heap raises its mmap threshold when a large mapped block is freed; a scope fixes it
    // low, so a large temporary is a mapping of its own (counted in hblkhd) and leaves on free.
    // 16 MB: larger than any free space the tests before this one leave in the heap, which
    // malloc would use first whatever the threshold.
    constexpr size_t kBlock = size_t{16} << 20;
    auto block_is_mapped = [&] {
        const size_t before = mallinfo2().hblkhd;
        void* block = std::malloc(kBlock);
        REQUIRE(block);
        static_cast<volatile char*>(block)[0] = 1;
        const bool mapped = mallinfo2().hblkhd >= before + kBlock;
        std::free(block);
        return mapped;
    };
    std::free(std::malloc(kBlock + (1 << 20)));  // raises the threshold, as a freed load temporary would
    {
        const LoadHeapScope outer;
        {
            const LoadHeapScope inner;  // a second load at the same time
            CHECK(block_is_mapped());
        }
        CHECK(block_is_mapped());  // the outer load still holds the low threshold
    }
    CHECK_FALSE(block_is_mapped());  // after the loads: from the heap, reused step after step
}

TEST_CASE("after the loads, a request's freed buffers stay resident until release_free_heap", "[memory]") {
    { const LoadHeapScope load; }               // the thresholds a process has once its models are loaded
    release_free_heap();                        // what earlier tests freed: reused below, it would not add to the resident set
    constexpr size_t kBlock = size_t{1} << 20;  // under the mmap threshold: from the heap
    constexpr int kBlocks = 160;                // more than glibc's own 64 MB trim threshold
    const int64_t before = process_rss_bytes();
    std::vector<void*> blocks;
    for (int i = 0; i < kBlocks; ++i) {
        blocks.push_back(std::malloc(kBlock));
        REQUIRE(blocks.back());
        std::memset(blocks.back(), 1, kBlock);
    }
    const int64_t grown = process_rss_bytes() - before;
    REQUIRE(grown >= int64_t{kBlocks} * int64_t{kBlock} * 9 / 10);
    for (void* b : blocks) std::free(b);
    CHECK(process_rss_bytes() - before >= grown * 9 / 10);  // kept for the next request: no faults then
    CHECK(release_free_heap() >= grown * 9 / 10);
    CHECK(process_rss_bytes() - before < grown / 10);
}
#endif

TEST_CASE("a thread waiting for work gives the heap back once it has been idle", "[memory]") {
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    int releases = 0;
    auto release = [&] {  // called without the lock held: it can take it
        std::lock_guard<std::mutex> l(m);
        ++releases;
        ready = true;
        cv.notify_all();
    };
    auto is_ready = [&] { return ready; };
    std::unique_lock<std::mutex> lock(m);
    bool heap_to_release = true;  // a request ran; nothing comes within the idle time
    wait_for_work(cv, lock, &heap_to_release, is_ready, std::chrono::milliseconds(1), release);
    CHECK(releases == 1);
    CHECK_FALSE(heap_to_release);
    CHECK(ready);

    ready = false;  // nothing ran since: the wait ends only when work comes, without a release
    std::thread producer([&] {
        // Work comes only after the idle time: at a release (a wait that ignored the flag), or
        // when this deadline passes without one.
        std::unique_lock<std::mutex> l(m);
        cv.wait_for(l, std::chrono::milliseconds(200), [&] { return releases > 1; });
        ready = true;
        cv.notify_all();
    });
    wait_for_work(cv, lock, &heap_to_release, is_ready, std::chrono::milliseconds(1), release);
    lock.unlock();
    producer.join();
    lock.lock();
    CHECK(releases == 1);

    heap_to_release = true;  // work is already there: the heap stays for it
    wait_for_work(cv, lock, &heap_to_release, is_ready, std::chrono::hours(1), release);
    CHECK(releases == 1);
    CHECK(heap_to_release);
}
