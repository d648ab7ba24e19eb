#include "torch/packed_gemm.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace t5s {
namespace {

// CBLAS constants (mkl_cblas.h); values fixed by the CBLAS/MKL ABI.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kBMatrix = 162, kPacked = 151;

using PackGetSize = size_t (*)(int identifier, int m, int n, int k);
using Pack = void (*)(int layout, int identifier, int trans, int m, int n, int k, float alpha, const float* src, int ld,
                      float* dest);
using Compute = void (*)(int layout, int transa, int transb, int m, int n, int k, const float* a, int lda, const float* b,
                         int ldb, float beta, float* c, int ldc);

struct Mkl {
    PackGetSize get_size = nullptr;
    Pack pack = nullptr;
    Compute compute = nullptr;
    bool ok() const { return get_size && pack && compute; }
};

const Mkl& mkl() {
    static const Mkl m = [] {
        Mkl f;
        // libtorch_cpu is already loaded by the time anything runs; look in the process's symbols.
        f.get_size = reinterpret_cast<PackGetSize>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack_get_size"));
        f.pack = reinterpret_cast<Pack>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack"));
        f.compute = reinterpret_cast<Compute>(dlsym(RTLD_DEFAULT, "cblas_sgemm_compute"));
        return f;
    }();
    return m;
}

// The row count given to pack is a blocking hint (the packed buffer records its layout, and the
// size query does not depend on it): one packed weight serves any row count, which the probe
// below checks. Measured on t5-small shapes, 1 thread: a hint of 128 is within noise of the
// best hint from 1 to 1024 rows, while a hint of 8 made 32-row products 1.3x slower than
// unpacked sgemm.
constexpr int kPackRowsHint = 128;

at::Tensor pack_unchecked(const at::Tensor& weight) {
    const Mkl& f = mkl();
    const int n = static_cast<int>(weight.size(0)), k = static_cast<int>(weight.size(1));
    const size_t bytes = f.get_size(kBMatrix, kPackRowsHint, n, k);
    at::Tensor packed = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte));
    // B = weight^T (K x N): weight is row-major N x K, i.e. B transposed with leading dimension K.
    f.pack(kRowMajor, kBMatrix, kTrans, kPackRowsHint, n, k, 1.0f, weight.data_ptr<float>(), k,
           reinterpret_cast<float*>(packed.data_ptr()));
    return packed;
}

// Packed and plain products agree to rounding on a few row counts, or packing stays off.
bool probe_ok() {
    const int64_t n = 48, k = 40;
    // Deterministic values: the probe must not advance the global RNG that seeded runs rely on.
    auto values = [](int64_t rows, int64_t cols, double step) {
        return at::sin(at::arange(rows * cols, at::TensorOptions().dtype(at::kFloat)) * step).reshape({rows, cols});
    };
    at::Tensor w = values(n, k, 0.37);
    at::Tensor packed = pack_unchecked(w);
    for (int64_t rows : {1, 3, 8, 33}) {
        at::Tensor x = values(rows, k, 0.91);
        at::Tensor want = at::linear(x, w), got = packed_linear(x, packed, n, k);
        if (!at::allclose(got, want, 1e-4, 1e-4)) return false;
    }
    return true;
}

// Below 512x512 the multiply is cheap, and MKL's packed buffer has a fixed part of several MB.
constexpr int64_t kMinPackedElements = 512 * 512;

}  // namespace

bool packing_wanted(int64_t elements, WeightPacking mode) {
    return mode == WeightPacking::All || (mode == WeightPacking::Auto && elements >= kMinPackedElements);
}

bool packing_wanted(const at::Tensor& weight, WeightPacking mode) { return packing_wanted(weight.numel(), mode); }

bool packed_gemm_available() {
    static const bool ok = mkl().ok() && probe_ok();  // the library's ability, not a choice
    return ok;
}

at::Tensor pack_linear_weight(const at::Tensor& weight) {
    if (!packed_gemm_available() || !weight.is_cpu() || weight.scalar_type() != at::kFloat || weight.dim() != 2) return {};
    return pack_unchecked(weight.contiguous());
}

at::Tensor packed_linear(const at::Tensor& x_in, const at::Tensor& packed, int64_t n, int64_t k) {
    at::Tensor x = x_in.contiguous();
    const int64_t rows = x.numel() / k;
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = n;
    at::Tensor out = at::empty(shape, x.options());
    packed_linear_into(x.data_ptr<float>(), rows, packed, n, k, out.data_ptr<float>());
    return out;
}

void packed_linear_into(const float* x, int64_t rows, const at::Tensor& packed, int64_t n, int64_t k, float* y) {
    if (rows == 0) return;
    mkl().compute(kRowMajor, kNoTrans, kPacked, static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k), x,
                  static_cast<int>(k), reinterpret_cast<const float*>(packed.data_ptr()), static_cast<int>(k), 0.0f, y,
                  static_cast<int>(n));
}

namespace {

std::optional<c10::OperatorHandle> mkldnn_op(const char* name) { return c10::Dispatcher::singleton().findSchema({name, ""}); }

}  // namespace

at::Tensor pack_linear_weight_bf16(const at::Tensor& weight) {
    static const std::optional<c10::OperatorHandle> reorder = mkldnn_op("mkldnn::_reorder_linear_weight");
    static const bool usable = reorder && mkldnn_op("mkldnn::_linear_pointwise");  // the library's ability
    if (!usable || !weight.is_cpu() || weight.scalar_type() != at::kBFloat16 || weight.dim() != 2) return {};
    try {
        std::vector<c10::IValue> stack{weight.contiguous(), c10::IValue()};  // no batch-size hint: best from 8 rows up
        reorder->callBoxed(&stack);
        return stack[0].toTensor();
    } catch (const std::exception&) {
        return {};  // e.g. a CPU without bf16 support in oneDNN: keep at::linear
    }
}

at::Tensor packed_linear_bf16(const at::Tensor& x, const at::Tensor& packed) {
    static const std::optional<c10::OperatorHandle> linear = mkldnn_op("mkldnn::_linear_pointwise");
    std::vector<c10::IValue> stack{
        x.contiguous(), packed, c10::IValue(), std::string("none"), c10::List<std::optional<at::Scalar>>(), c10::IValue()};
    linear->callBoxed(&stack);
    return stack[0].toTensor();
}

}  // namespace t5s
