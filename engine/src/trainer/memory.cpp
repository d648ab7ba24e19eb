#include "trainer/memory.h"

#include "torch/cuda_backend.h"
#include "torch/runtime.h"

namespace t5s {

MemorySample host_memory() { return {process_rss_bytes(), process_peak_rss_bytes()}; }

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
