#include "trainer/memory.h"

#include <fstream>
#include <string>

#ifdef T5S_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace t5s {

namespace {
int64_t status_kb(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size())) * 1024;
    }
    return 0;
}
}  // namespace

MemorySample host_memory() { return {status_kb("/proc/self/status", "VmRSS:"), status_kb("/proc/self/status", "VmHWM:")}; }

int64_t host_available_bytes() { return status_kb("/proc/meminfo", "MemAvailable:"); }

#ifdef T5S_WITH_CUDA
MemorySample cuda_memory(int device) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return {stats.allocated_bytes[agg].current, stats.allocated_bytes[agg].peak};
}
int64_t cuda_free_bytes(int device) {
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    cudaSetDevice(prev);
    return static_cast<int64_t>(free);
}
void cuda_reset_peak(int device) { c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device)); }
void cuda_empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }
#else
MemorySample cuda_memory(int) { return {}; }
int64_t cuda_free_bytes(int) { return 0; }
void cuda_reset_peak(int) {}
void cuda_empty_cache() {}
#endif

}  // namespace t5s
