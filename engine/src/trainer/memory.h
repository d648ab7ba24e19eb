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

// Training frees and reallocates hundreds of MiB of activations every step. glibc raises its mmap
// threshold after the first large free (up to 32 MiB); from then on such tensors come from the heap
// and, once freed, mostly stay resident: t5-base training peaked ~800 MiB of RSS above its live
// bytes (lora_bench: full fine-tuning 5088 -> 4246 MiB, LoRA int8 2317 -> 1560 MiB with this). A
// fixed threshold keeps large blocks mmapped, so freeing one returns it to the OS. Process-wide,
// idempotent; a no-op without glibc.
void keep_large_allocations_mmapped();

}  // namespace t5s
