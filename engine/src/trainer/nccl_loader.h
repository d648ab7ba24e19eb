#pragma once
// The NCCL process group for CUDA ranks, from libt5s_nccl.so (trainer/nccl_module.cpp), opened
// lazily so that the CPU-only product never links libtorch_cuda.
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace t5s {

// Which backend a run's gradients go through: T5S_DIST_BACKEND=auto (NCCL on CUDA, Gloo on the
// CPU), gloo or nccl. NCCL on a CPU run, or without a usable GPU, throws t5s::Error with one line.
bool use_nccl_for_gradients(bool cuda_run);

// ProcessGroupNCCL on GPU `device_index` over `store`. Throws t5s::Error naming what is missing
// (the CUDA backend, the module, or NCCL's own reason).
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
                                                    int device_index, std::chrono::milliseconds timeout);

}  // namespace t5s
