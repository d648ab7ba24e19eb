#pragma once
// Process / device memory numbers for progress events and the memory plan.
#include <cstdint>
#include <string>

#include "t5s/process_memory.h"  // host_available_bytes

namespace t5s {

struct MemorySample {
    int64_t current = 0;  // RSS (CPU) or allocated bytes (CUDA)
    int64_t peak = 0;     // VmHWM (CPU) or peak allocated (CUDA)
};

MemorySample host_memory();

// CUDA (zeros / no-ops unless a GPU is in use: see torch/cuda_backend.h).
MemorySample cuda_memory(int device);
int64_t cuda_free_bytes(int device);
void cuda_reset_peak(int device);
void cuda_empty_cache();

}  // namespace t5s
