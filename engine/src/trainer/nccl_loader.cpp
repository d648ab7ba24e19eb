#include "trainer/nccl_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string>

#include "t5s/env.h"
#include "t5s/error.h"
#include "t5s/install_paths.h"
#include "torch/cuda_backend.h"
#include "torch/runtime.h"
#include "trainer/nccl_module_abi.h"

namespace t5s {
namespace {

// The module's entry point, opened once; throws naming why it cannot be.
T5sNcclCreateBackend open_module() {
    static std::mutex mutex;
    static T5sNcclCreateBackend create = nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    if (create) return create;
#ifndef T5S_NCCL_MODULE_PATH
    throw Error(ErrorCode::InvalidArgument,
                "NCCL: this build has no NCCL module (LibTorch without CUDA); use T5S_DIST_BACKEND=gloo");
#else
    // Installed: the t5studio-cuda package's copy beside libtorch_cuda; build tree: the one built.
    const auto lib_dir = installed_lib_dir();
    const std::string path = lib_dir.empty() ? std::string(T5S_NCCL_MODULE_PATH) : (lib_dir / "libt5s_nccl.so").string();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* err = dlerror();
        throw Error(ErrorCode::InvalidArgument, "NCCL: cannot load " + path + ": " + (err ? err : "unknown error"));
    }
    create = reinterpret_cast<T5sNcclCreateBackend>(dlsym(h, "t5s_nccl_create_backend"));
    if (!create) throw Error(ErrorCode::Internal, "NCCL: " + path + " has no t5s_nccl_create_backend");
    return create;
#endif
}

}  // namespace

bool use_nccl_for_gradients(bool cuda_run) {
    const std::string choice = read_choice_from_env("T5S_DIST_BACKEND", {"auto", "gloo", "nccl"}, "auto");
    if (choice == "gloo") return false;
    if (choice == "auto") return cuda_run;
    if (!cuda_run)
        throw Error(ErrorCode::InvalidArgument,
                    "T5S_DIST_BACKEND=nccl needs --device cuda: NCCL all-reduces GPU tensors only (this run trains on the CPU; "
                    "use T5S_DIST_BACKEND=gloo or auto)");
    return true;
}

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
                                                    int device_index, std::chrono::milliseconds timeout) {
    if (!cuda_available(true)) {
        const std::string why = cuda_backend_message();
        throw Error(ErrorCode::InvalidArgument, "NCCL needs a usable CUDA GPU on rank " + std::to_string(rank) + " (LOCAL_RANK " +
                                                    std::to_string(device_index) + ")" + (why.empty() ? "" : ": " + why));
    }
    const T5sNcclCreateBackend create = open_module();
    T5sNcclRequest request{store.get(), rank, world_size, device_index, static_cast<int64_t>(timeout.count())};
    char error[512] = {0};
    void* backend = create(&request, error, sizeof error);
    if (!backend)
        throw Error(ErrorCode::Internal, "rank " + std::to_string(rank) + ": cannot create the NCCL process group on cuda:" +
                                             std::to_string(device_index) + ": " + error);
    return c10::intrusive_ptr<c10d::Backend>::reclaim(static_cast<c10d::Backend*>(backend));
}

}  // namespace t5s
