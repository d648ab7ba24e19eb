#include "torch/cuda_backend.h"

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "t5s/install_paths.h"

#include "t5s/env.h"

namespace t5s {

namespace {

// Skipped (no driver seen) may still be tried later when CUDA is requested explicitly; a failed
// dlopen is final. Nothing asks torch about CUDA before a load succeeded (cuda_available()).
enum class State { Untried, Skipped, Loaded, Failed };
std::mutex g_mutex;
State g_state = State::Untried;
std::string g_message;

bool driver_visible() {
    std::error_code ec;
    for (const char* p : {"/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"})
        if (std::filesystem::exists(p, ec)) return true;
    return false;
}

State load(bool requested) {
    // auto: load when a driver is visible or CUDA is asked for; off: never; on / force: always.
    const std::string mode = read_choice_from_env("T5S_CUDA", {"auto", "off", "on", "force"}, "auto");
    if (mode == "off") {
        g_message = "CUDA disabled (T5S_CUDA=" + read_string_from_env("T5S_CUDA") + ")";
        return State::Failed;
    }
#ifndef T5S_TORCH_CUDA_LIBRARY
    (void)requested;
    g_message = "this LibTorch was built without CUDA";
    return State::Failed;
#else
    // Installed (Debian packages): only the t5studio-cuda package's copy next to libtorch_cpu, never
    // a build machine's path. Build tree: the LibTorch we were built against, then the loader's path.
    std::vector<std::string> candidates;
    if (const auto lib_dir = installed_lib_dir(); !lib_dir.empty()) {
        candidates.push_back((lib_dir / "libtorch_cuda.so").string());
        std::error_code ec;
        if (!std::filesystem::exists(candidates.back(), ec)) {
            g_message = "CUDA support is not installed: install the t5studio-cuda package";
            return State::Failed;
        }
    } else {
        candidates = {T5S_TORCH_CUDA_LIBRARY, "libtorch_cuda.so"};
    }
    if (!requested && mode == "auto" && !driver_visible()) {
        g_message = "no NVIDIA driver on this machine";
        return State::Skipped;
    }
    // RTLD_GLOBAL: the CUDA libraries' symbols serve later loads (cuBLAS plug-ins, NVRTC).
    void* h = nullptr;
    for (const auto& c : candidates)
        if ((h = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL))) break;
    if (!h) {
        const char* err = dlerror();
        g_message = std::string("cannot load LibTorch's CUDA library: ") + (err ? err : "unknown error");
        return State::Failed;
    }
    g_message.clear();
    return State::Loaded;
#endif
}

c10::DeviceIndex idx(int device) { return static_cast<c10::DeviceIndex>(device < 0 ? 0 : device); }

}  // namespace

bool load_cuda_backend(bool requested) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_state == State::Untried || (g_state == State::Skipped && requested)) g_state = load(requested);
    return g_state == State::Loaded;
}

bool cuda_backend_loaded() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_state == State::Loaded;
}

const std::string& cuda_backend_message() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_message;
}

CudaAllocatorStats cuda_allocator_stats(int device) {
    const auto stats = c10::getDeviceAllocator(c10::DeviceType::CUDA)->getDeviceStats(idx(device));
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return {stats.allocated_bytes[agg].current, stats.reserved_bytes[agg].current, stats.allocated_bytes[agg].peak};
}

void cuda_reset_peak_stats(int device) { c10::getDeviceAllocator(c10::DeviceType::CUDA)->resetPeakStats(idx(device)); }

void cuda_release_cached_memory() { c10::getDeviceAllocator(c10::DeviceType::CUDA)->emptyCache(); }

std::pair<int64_t, int64_t> cuda_free_and_total(int device) {
    const auto [free, total] = c10::getDeviceAllocator(c10::DeviceType::CUDA)->getMemoryInfo(idx(device));
    return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

void cuda_synchronize(int device) { at::detail::getCUDAHooks().deviceSynchronize(idx(device)); }

CudaDeviceInfo cuda_device_info(int device) {
    // The driver API's C ABI is stable across CUDA versions (unlike cudaDeviceProp's layout).
    using GetName = int (*)(char*, int, int);
    using GetAttr = int (*)(int*, int, int);
    using Init = int (*)(unsigned);
    CudaDeviceInfo info;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return info;
    auto init = reinterpret_cast<Init>(dlsym(h, "cuInit"));
    auto get_name = reinterpret_cast<GetName>(dlsym(h, "cuDeviceGetName"));
    auto get_attr = reinterpret_cast<GetAttr>(dlsym(h, "cuDeviceGetAttribute"));
    if (!init || !get_name || !get_attr || init(0) != 0) return info;
    char name[256] = {0};
    if (get_name(name, sizeof name, device) == 0) info.name = name;
    get_attr(&info.major, 75, device);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    get_attr(&info.minor, 76, device);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    return info;
}

}  // namespace t5s
