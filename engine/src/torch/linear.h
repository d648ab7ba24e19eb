#pragma once
// A bias-free linear layer y = x W^T that holds its weight in exactly one form and multiplies
// with the kernel that form needs (the shape of CTranslate2's layers::Dense over ops::Gemm).
//
// Forms, and who creates them:
//   Plain            the [out, in] tensor as loaded (training, the encoder, anything not converted)
//   Fp32Panels       W^T in 16-column panels for our batch-invariant AVX2 kernel, CPU fp32
//                    decoding where the kernel policy picks panels (pack_for_cpu, panel_gemm.h)
//   Fp32Packed       MKL-packed W^T, CPU fp32 decoding elsewhere (pack_for_cpu, packed_gemm.h)
//   Bf16Reordered    oneDNN-reordered W, CPU bf16 decoding (pack_for_cpu, packed_gemm.h)
//   CpuInt8          our AMX / AVX512-VNNI layout (quantize_int8 where the policy picks it, int8_gemm.h)
//   FbgemmInt8       quantized::linear_prepack (quantize_int8 otherwise), optionally a second
//                    oneDNN prepack used from kWideRows rows (the head)
//   Int8Rows         int8 values + per-row scales dequantised per call (quantize_int8 on CUDA)
//   Frozen           a frozen training base in bf16 / fp16, or int8 + per-row scales, dequantised
//                    to the input's dtype per call; autograd keeps no fp32 copy (hold_frozen,
//                    lean_backward.h): LoRA training on a smaller base
// The form is chosen once, at conversion, as the kernel policy says (t5s/kernel_policy.h);
// operator() only dispatches on it. The conversions and
// the dispatch, the kernel name and the byte count of each form all live in linear.cpp.
//
// A low-rank adapter (LoRA) adds `y += scale * B(A dropout(x))` after the form's product, so every
// form gets it without touching the network code; the base weight is never changed. A layer fused
// from several (q|k|v) carries the parts' terms as one: A stacked, B block-diagonal.
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <variant>
#include <vector>

#include "t5s/kernel_policy.h"
#include "torch/int8_gemm.h"

namespace t5s {

class Linear {
public:
    struct Plain {
        at::Tensor weight;  // [out, in]
    };
    struct Fp32Panels {
        at::Tensor panels;  // [ceil(out / 16), in, 16]
        int64_t out_features = 0;
        KernelIsa isa = KernelIsa::Portable;  // the kernel policy's fp32_panels
    };
    struct Fp32Packed {
        at::Tensor packed;
        int64_t out_features = 0, in_features = 0;
    };
    struct Bf16Reordered {
        at::Tensor packed;
        int64_t out_features = 0, in_features = 0;
    };
    struct CpuInt8 {
        Int8Weight weight;
        Int8Kernel kernel = Int8Kernel::Vnni;  // Vnni, Amx or Avx2, as the kernel policy chose
    };
    struct FbgemmInt8 {
        c10::IValue narrow;  // FBGEMM prepack: fastest for a few rows
        c10::IValue wide;    // oneDNN prepack of the same weight, or None
        int64_t out_features = 0, in_features = 0;
        bool reduce_range = false;  // 7-bit activations: CPUs without VNNI (see linear.cpp)
    };
    using Int8Rows = t5s::Int8Rows;  // int8 [out, in] and scale [out, 1] in the compute dtype: the device path
    struct Frozen {
        at::Tensor values;     // [out, in] bf16 / fp16 / int8
        at::Tensor row_scale;  // int8: [out, 1] fp32; else undefined
    };
    // The adapter term. `a` [r, in] and `b` [out, r] in their own dtype (fp32 as PEFT keeps them);
    // the input is cast to it and the sum cast back to the output's dtype, as PEFT does.
    struct Lora {
        at::Tensor a, b;
        double scale = 1.0;
        double dropout = 0.0;  // active only while the owning network trains
    };
    using Form =
        std::variant<std::monostate, Plain, Fp32Panels, Fp32Packed, Bf16Reordered, CpuInt8, FbgemmInt8, Int8Rows, Frozen>;

    Linear() = default;
    explicit Linear(at::Tensor weight) : form_(Plain{std::move(weight)}) {}
    explicit Linear(Frozen frozen) : form_(std::move(frozen)) {}

    at::Tensor operator()(const at::Tensor& x) const;
    // Whether product_into can multiply this layer: fp32 panels, MKL packed or our int8 layout, and
    // no adapter term (the forms whose kernels take raw rows).
    bool writes_into() const;
    // y [rows, out] = x [rows, in] W^T on raw fp32 rows, exactly what operator() computes: the decode
    // step's one pass over its own buffers (t5_step_cpu.cpp). Only where writes_into().
    void product_into(const float* x, int64_t rows, float* y) const;

    bool ready() const { return !std::holds_alternative<std::monostate>(form_); }
    // Rows `ids` of W ([ids..., in], fp32 for the int8 form: q * row scale), read from the form
    // that holds them exactly (Plain, Fp32Panels, CpuInt8, Int8Rows); undefined for the opaque forms. A tied
    // head converted for inference serves as the embedding table too: one copy of the table, not two.
    at::Tensor rows(const at::Tensor& ids) const;
    // The plain [out, in] weight; undefined once converted to another form.
    const at::Tensor& weight() const;
    // Bytes this layer holds (packed buffers counted as their element bytes).
    int64_t bytes() const;
    // What multiplies: "int8 AMX", "int8 AVX512-VNNI", "int8 FBGEMM", "int8 dequantised",
    // "fp32 panels (AVX2)", "fp32 MKL packed", "bf16 oneDNN reordered" or "ATen linear (<dtype>)".
    std::string kernel_name() const;
    const Form& form() const { return form_; }

    // Attaches (or, with an empty term, removes) the adapter term; the form is untouched.
    void set_lora(Lora term) { lora_ = std::move(term); }
    const Lora& lora() const { return lora_; }
    bool has_lora() const { return lora_.a.defined(); }
    void set_lora_dropout_active(bool on) { lora_dropout_on_ = on; }

    // Inference-only conversions of a Plain layer (no-ops otherwise), choosing as `kernels` says
    // (t5s/kernel_policy.h). quantize_int8 picks the int8 kernel for the weight's device and the
    // policy; `also_wide` keeps a second oneDNN form where FBGEMM is used (worth it for the head
    // only). pack_for_cpu packs CPU fp32/bf16 weights when packing is available and wanted, else
    // leaves the layer Plain.
    void quantize_int8(bool also_wide, const KernelPolicy& kernels);
    void pack_for_cpu(const KernelPolicy& kernels);
    // One layer whose weight is `parts` stacked along the output rows (q|k|v), packed as
    // pack_for_cpu would pack that weight. The panel form is built from the parts directly; any
    // other form from their concatenation.
    static Linear packed_from_parts(const std::vector<at::Tensor>& parts, const KernelPolicy& kernels);
    // Training with a frozen base: a Plain layer becomes Frozen in `dtype` (kBFloat16, kHalf, or
    // kChar = int8 with per-row scales); kFloat leaves it as it is.
    void hold_frozen(at::ScalarType dtype);

private:
    at::Tensor product(const at::Tensor& x) const;  // the form's x W^T
    Form form_;
    Lora lora_;
    bool lora_dropout_on_ = false;
};

}  // namespace t5s
