#pragma once
// Device, dtype and thread decisions, in one place.
#include <ATen/ATen.h>

#include "t5s/kernel_policy.h"
#include "t5s/model.h"

namespace t5s {

struct ResolvedRuntime {
    at::Device device{at::kCPU};
    Precision precision = Precision::Fp32;
    at::ScalarType compute_dtype = at::kFloat;  // dtype of activations and (non-int8) weights
    int threads = 1;
    KernelPolicy kernels;  // the CPU kernels (t5s/kernel_policy.h)
};

// Validates the request against this machine (e.g. cuda without a GPU -> InvalidArgument) and
// sets the intra-op thread count.
ResolvedRuntime resolve_runtime(const RuntimeOptions& options);

// A usable CUDA GPU (loads LibTorch's CUDA backend on first call when a driver is visible, or
// always when `requested`: the user asked for CUDA).
bool cuda_available(bool requested = false);

}  // namespace t5s
