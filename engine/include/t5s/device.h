#pragma once
// What the machine offers, measured, so front ends can pick defaults and draw memory graphs.
// Plain numbers only; LibTorch stays inside the engine.
#include <cstdint>
#include <string>

#include "t5s/model.h"

namespace t5s {

// CUDA memory as the engine sees it. `available` false on CPU-only runs (the fields are 0; the
// UI shows "n/a").
struct CudaMemory {
    bool available = false;
    int64_t allocated_bytes = 0;    // torch caching allocator: held by live tensors
    int64_t reserved_bytes = 0;     // torch caching allocator: reserved
    int64_t peak_bytes = 0;         // peak allocated since start or the last reset_peak_memory()
    int64_t device_used_bytes = 0;  // whole device, all processes (cudaMemGetInfo)
    int64_t device_total_bytes = 0;
};

struct DeviceMemory {
    int64_t process_rss = 0;  // bytes, resident set of this process (t5s/process_memory.h)
    CudaMemory cuda;
};

DeviceMemory query_device_memory();
void reset_peak_memory();

struct DeviceProfile {
    Device device = Device::Cpu;
    std::string name;                       // e.g. "NVIDIA H200" or the CPU model
    Precision precision = Precision::Fp32;  // recommended
    int64_t free_bytes = 0;                 // device memory free now (CUDA) or MemAvailable (CPU)
    int max_batch = 0;                      // largest safe batch measured for the model (0 = not measured)
    std::string reason;                     // one line explaining the choice
};

// Hardware-aware defaults: bf16 on GPUs that support it (fp16 otherwise), fp32 on CPUs.
DeviceProfile recommend_profile(Device requested = Device::Auto);

// Measures peak memory of one generation at small batches and extrapolates the largest batch
// that fits in `budget_fraction` of free memory (CUDA; on the CPU, of MemAvailable).
int measure_max_batch(const Model& model, int input_tokens, int new_tokens, double budget_fraction = 0.8);

}  // namespace t5s
