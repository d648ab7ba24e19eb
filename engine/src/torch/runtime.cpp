#include "torch/runtime.h"

#include "torch/cuda_backend.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "t5s/error.h"

namespace t5s {

int physical_core_count() {
    // Count distinct (physical id, core id) pairs; hyper-threads share a core and only oversubscribe GEMMs.
    std::ifstream in("/proc/cpuinfo");
    std::set<std::pair<int, int>> cores;
    std::string line;
    int phys = 0, core = -1;
    while (std::getline(in, line)) {
        if (line.rfind("physical id", 0) == 0) phys = std::stoi(line.substr(line.find(':') + 1));
        else if (line.rfind("core id", 0) == 0) core = std::stoi(line.substr(line.find(':') + 1));
        else if (line.empty() && core >= 0) {
            cores.insert({phys, core});
            core = -1;
        }
    }
    if (core >= 0) cores.insert({phys, core});
    int n = static_cast<int>(cores.size());
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return n > 0 ? n : 1;
}

bool cuda_available(bool requested) {
    // The backend must be loaded before torch is first asked about CUDA (it caches its hooks).
    if (!load_cuda_backend(requested)) return false;
    return at::hasCUDA() && at::detail::getCUDAHooks().deviceCount() > 0;
}

ResolvedRuntime resolve_runtime(const RuntimeOptions& options) {
    ResolvedRuntime r;
    // An explicit CPU request never loads the CUDA backend.
    const bool has_cuda = options.device != Device::Cpu && cuda_available(options.device == Device::Cuda);
    const std::string cuda_name = options.device_index > 0 ? "cuda:" + std::to_string(options.device_index) : "cuda";
    if (options.device == Device::Cuda && !has_cuda) {
        const std::string why = cuda_backend_message();
        throw Error(ErrorCode::InvalidArgument, "device '" + cuda_name +
                                                    "' requested but no CUDA GPU is available on this machine" +
                                                    (why.empty() ? "" : " (" + why + ")"));
    }
    if (has_cuda) {
        const int count = static_cast<int>(at::detail::getCUDAHooks().deviceCount());
        if (options.device_index < 0 || options.device_index >= count)
            throw Error(ErrorCode::InvalidArgument, "device '" + cuda_name + "' requested but this machine has " +
                                                        std::to_string(count) +
                                                        " CUDA device(s): cuda:0 to cuda:" + std::to_string(count - 1));
    }
    r.device = has_cuda ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options.device_index)) : at::Device(at::kCPU);
    r.precision = options.precision;
    if (r.precision == Precision::Fp16 && r.device.is_cpu()) {
        throw Error(ErrorCode::InvalidArgument, "dtype fp16 runs on CUDA only; use bf16 or int8 on the CPU");
    }
    switch (r.precision) {
        case Precision::Fp32: r.compute_dtype = at::kFloat; break;
        case Precision::Bf16: r.compute_dtype = at::kBFloat16; break;
        case Precision::Fp16: r.compute_dtype = at::kHalf; break;
        // int8 weights; activations in fp32 on the CPU (dynamic quantisation), bf16 on CUDA.
        case Precision::Int8: r.compute_dtype = r.device.is_cpu() ? at::kFloat : at::kBFloat16; break;
    }
    if (options.threads < 0 || options.threads > kMaxThreads) {
        throw Error(ErrorCode::InvalidArgument, "threads must be from 0 (= physical cores) to " + std::to_string(kMaxThreads) +
                                                    ", got " + std::to_string(options.threads));
    }
    r.threads = options.threads > 0 ? options.threads : physical_core_count();
    at::set_num_threads(r.threads);
    r.kernels = resolve_kernel_policy(options.kernels);
    return r;
}

}  // namespace t5s
