#include "t5s/device.h"

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <unistd.h>
#include <fstream>
#include <sstream>

#include "t5s/process_memory.h"
#include "torch/cuda_backend.h"
#include "torch/runtime.h"

namespace t5s {
namespace {

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    }
    return "CPU";
}

}  // namespace

DeviceMemory query_device_memory() {
    DeviceMemory m;
    m.process_rss = process_rss_bytes();
    // Telemetry never loads CUDA by itself: only once a model or a run has.
    if (cuda_backend_loaded() && cuda_available()) {
        m.cuda.available = true;
        const CudaAllocatorStats stats = cuda_allocator_stats(0);
        m.cuda.allocated_bytes = stats.allocated;
        m.cuda.reserved_bytes = stats.reserved;
        m.cuda.peak_bytes = stats.peak_allocated;
        const auto [free, total] = cuda_free_and_total(0);
        m.cuda.device_total_bytes = total;
        m.cuda.device_used_bytes = total - free;
    }
    return m;
}

void reset_peak_memory() {
    if (cuda_backend_loaded() && cuda_available()) cuda_reset_peak_stats(0);
}

DeviceProfile recommend_profile(Device requested) {
    DeviceProfile p;
    if (requested != Device::Cpu && cuda_available(requested == Device::Cuda)) {
        const CudaDeviceInfo dev = cuda_device_info(0);
        p.device = Device::Cuda;
        p.name = dev.name.empty() ? "CUDA device 0" : dev.name;
        p.free_bytes = cuda_free_and_total(0).first;
        // T5 v1.1 / mT5 overflow in fp16 (transformers #9295); bf16 keeps fp32's range.
        p.precision = dev.major >= 8 ? Precision::Bf16 : Precision::Fp16;
        p.reason = p.name + " (compute " + std::to_string(dev.major) + "." + std::to_string(dev.minor) +
                   "): " + (dev.major >= 8 ? "bf16 tensor cores" : "no bf16: fp16 with fp32 feed-forward output and clamping");
        return p;
    }
    p.device = Device::Cpu;
    p.name = cpu_model_name();
    p.free_bytes = host_available_bytes();
    p.precision = Precision::Fp32;
    p.reason = "CPU: fp32 is exact; bf16 halves memory, int8 (dynamic quantisation) is usually fastest";
    return p;
}

int measure_max_batch(const Model& model, int input_tokens, int new_tokens, double budget_fraction) {
    const bool cuda = model.info().device.rfind("cuda", 0) == 0;
    auto used = [&]() -> int64_t { return cuda ? query_device_memory().cuda.peak_bytes : process_peak_rss_bytes(); };
    const int64_t free_bytes = cuda ? recommend_profile(Device::Cuda).free_bytes : host_available_bytes();
    GenerationOptions o;
    o.max_new_tokens = new_tokens;
    o.min_new_tokens = new_tokens;
    std::vector<int> row(static_cast<size_t>(input_tokens), 5);
    row.back() = 1;
    int64_t peak[2] = {0, 0};
    const int batches[2] = {1, 4};
    for (int i = 0; i < 2; ++i) {
        reset_peak_memory();
        const int64_t before = used();
        o.batch_size = batches[i];
        model.generate_ids(IdBatch(static_cast<size_t>(batches[i]), row), o);
        peak[i] = std::max<int64_t>(used() - before, 1);
    }
    const int64_t per_row = std::max<int64_t>((peak[1] - peak[0]) / 3, 1);
    const int64_t budget = static_cast<int64_t>(static_cast<double>(free_bytes) * budget_fraction) - peak[0];
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(1024, budget / per_row)));
}

}  // namespace t5s
