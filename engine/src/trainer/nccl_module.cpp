// libt5s_nccl.so: c10d's ProcessGroupNCCL in a module of its own. It links libtorch_cuda (where the
// NCCL process group lives); the engine links LibTorch's CPU half only and opens this module with
// dlopen when a CUDA training run joins a process group (trainer/nccl_loader.h), after the CUDA
// backend itself was loaded. Built only when the LibTorch has CUDA.
#define USE_C10D_NCCL 1
#include <c10/cuda/CUDAFunctions.h>

#include <chrono>
#include <cstring>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "trainer/nccl_module_abi.h"

namespace {

void copy_message(const std::string& text, char* out, size_t out_size) {
    if (!out || out_size == 0) return;
    const size_t n = std::min(text.size(), out_size - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* t5s_nccl_create_backend(const T5sNcclRequest* request, char* error,
                                                                                size_t error_size) {
    try {
        auto* store = static_cast<c10d::Store*>(request->store);
        const auto device = static_cast<c10::DeviceIndex>(request->device_index);
        c10::cuda::set_device(device);  // NCCL's communicator and streams belong to LOCAL_RANK's GPU
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = std::chrono::milliseconds(request->timeout_ms);
        auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(c10::intrusive_ptr<c10d::Store>::reclaim_copy(store),
                                                                 request->rank, request->world_size, options);
        // The GPU its collectives run on; connecting now makes a NCCL setup failure an error at join
        // time, not in the first training step.
        group->setBoundDeviceId(at::Device(at::kCUDA, device));
        group->eagerConnectSingleDevice(at::Device(at::kCUDA, device));
        c10::intrusive_ptr<c10d::Backend> backend = group;
        return backend.release();  // the caller reclaims it (one reference)
    } catch (const std::exception& e) {
        copy_message(e.what(), error, error_size);
        return nullptr;
    }
}
