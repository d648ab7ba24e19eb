#include "trainer/memory.h"

#include <fstream>
#include <string>

#include "torch/cuda_backend.h"
#include "torch/runtime.h"

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

// Callers use these on CUDA runs only (the backend is loaded by then); each checks anyway.
MemorySample cuda_memory(int device) {
    if (!cuda_available()) return {};
    const CudaAllocatorStats s = cuda_allocator_stats(device);
    return {s.allocated, s.peak_allocated};
}
int64_t cuda_free_bytes(int device) { return cuda_available() ? cuda_free_and_total(device).first : 0; }
void cuda_reset_peak(int device) {
    if (cuda_available()) cuda_reset_peak_stats(device);
}
void cuda_empty_cache() {
    if (cuda_available()) cuda_release_cached_memory();
}

}  // namespace t5s
