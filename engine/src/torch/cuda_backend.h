#pragma once
// LibTorch's CUDA half (libtorch_cuda and the CUDA libraries it pulls in: ~300 MB resident, a
// second of start-up) is loaded on demand with dlopen, only when an NVIDIA GPU can exist. The
// engine links libtorch_cpu alone, so CPU runs never pay for CUDA. Loading registers torch's CUDA
// backend, after which the usual at:: calls work on kCUDA tensors; the memory numbers below use
// torch's device-generic allocator interface and the driver API, so no CUDA headers are needed.
//
// T5S_CUDA=0 never loads it; T5S_CUDA=1 loads it even without a visible driver (diagnostics).
// Installed, it is looked for only in <prefix>/lib/t5studio (the t5studio-cuda package; see
// t5s/install_paths.h); from the build tree, in the LibTorch the engine was built against.
// It must load before anything asks torch about CUDA (torch caches its CUDA hooks on first use):
// cuda_available() is the one gate and loads it first.
#include <cstdint>
#include <string>
#include <utility>

namespace t5s {

// Loads the backend once (thread-safe). `requested`: the user asked for CUDA explicitly, so try
// even when no driver is visible (the error then comes from torch). False when unavailable.
bool load_cuda_backend(bool requested = false);
bool cuda_backend_loaded();
const std::string& cuda_backend_message();  // why it is not loaded ("" when loaded or not tried)

struct CudaAllocatorStats {
    int64_t allocated = 0, reserved = 0, peak_allocated = 0;
};
// All of these need cuda_available() to be true first.
CudaAllocatorStats cuda_allocator_stats(int device);
void cuda_reset_peak_stats(int device);
void cuda_release_cached_memory();                            // the torch allocator's cached blocks back to the driver
std::pair<int64_t, int64_t> cuda_free_and_total(int device);  // bytes (cudaMemGetInfo)
void cuda_synchronize(int device);

struct CudaDeviceInfo {
    std::string name;          // "NVIDIA H200"
    int major = 0, minor = 0;  // compute capability
};
CudaDeviceInfo cuda_device_info(int device);  // via the driver API (libcuda.so.1)

}  // namespace t5s
