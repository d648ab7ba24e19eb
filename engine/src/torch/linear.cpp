#include "torch/linear.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <vector>

#include "t5s/error.h"
#include "t5s/overload.h"
#include "torch/int8_rows_linear.h"
#include "torch/lean_backward.h"
#include "torch/packed_gemm.h"
#include "torch/panel_gemm.h"

namespace t5s {
namespace {

c10::OperatorHandle quantized_op(const char* name) { return c10::Dispatcher::singleton().findSchemaOrThrow(name, ""); }

// FBGEMM is fastest for a few rows, oneDNN from about 16 (beams x inputs, candidates).
constexpr int64_t kWideRows = 16;

[[noreturn]] void throw_wrong_input() {
    throw Error(ErrorCode::Internal, "packed layer called with an input of another dtype or device");
}

// The head is the widest layer (d_model x vocab): at 32 rows oneDNN's int8 GEMM takes half
// FBGEMM's time there (t5-small: 1.4 vs 3.0 ms), at 1 row FBGEMM is faster. Keeping both forms
// of the head costs one more int8 copy of it; the other layers gain too little to double.
c10::IValue prepack_with_onednn(const at::Tensor& q) {
    auto& ctx = at::globalContext();
    const auto& engines = ctx.supportedQEngines();
    if (std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) == engines.end()) return {};
    const at::QEngine before = ctx.qEngine();
    static const c10::OperatorHandle prepack = quantized_op("quantized::linear_prepack");
    std::vector<c10::IValue> stack{q, c10::IValue()};
    ctx.setQEngine(at::QEngine::ONEDNN);
    try {
        prepack.callBoxed(&stack);
    } catch (const std::exception&) {
        ctx.setQEngine(before);
        return {};  // keep the FBGEMM form only
    }
    ctx.setQEngine(before);
    return stack[0];
}

c10::IValue prepack_with_fbgemm(const at::Tensor& q) {
    static const c10::OperatorHandle prepack = quantized_op("quantized::linear_prepack");
    std::vector<c10::IValue> stack{q, c10::IValue()};
    prepack.callBoxed(&stack);
    return stack[0];
}

}  // namespace

at::Tensor Linear::operator()(const at::Tensor& x) const {
    at::Tensor y = product(x);
    if (!lora_.a.defined()) return y;
    at::Tensor h = x.to(lora_.a.scalar_type());
    const bool dropout = lora_dropout_on_ && lora_.dropout > 0;
    at::Tensor delta;
    if (dropout && at::GradMode::is_enabled()) {
        delta = lora_term_keeping_input(h, lora_.a, lora_.b, lora_.scale, lora_.dropout);  // keeps x and a bool mask
    } else {
        if (dropout) h = std::get<0>(at::native_dropout(h, lora_.dropout, true));
        delta = at::linear(at::linear(h, lora_.a), lora_.b) * lora_.scale;
    }
    if (delta.scalar_type() == y.scalar_type()) return y + delta;
    return (y.to(delta.scalar_type()) + delta).to(y.scalar_type());
}

// The one place that picks the kernel: the form decides.
at::Tensor Linear::product(const at::Tensor& x) const {
    return std::visit(
        Overload{
            [&](const Plain& f) { return at::linear(x, f.weight); },
            [&](const Fp32Panels& f) -> at::Tensor {
                if (x.scalar_type() != at::kFloat || !x.is_cpu()) throw_wrong_input();
                return panel_linear(x, f.panels, f.out_features, f.isa);
            },
            [&](const Fp32Packed& f) -> at::Tensor {
                if (x.scalar_type() != at::kFloat || !x.is_cpu()) throw_wrong_input();
                return packed_linear(x, f.packed, f.out_features, f.in_features);
            },
            [&](const Bf16Reordered& f) -> at::Tensor {
                if (x.scalar_type() != at::kBFloat16 || !x.is_cpu()) throw_wrong_input();
                return packed_linear_bf16(x, f.packed);
            },
            [&](const CpuInt8& f) { return int8_linear(x, f.weight, f.kernel); },  // computes in fp32
            [&](const FbgemmInt8& f) {
                static const c10::OperatorHandle op = quantized_op("quantized::linear_dynamic");
                const bool wide = !f.wide.isNone() && x.numel() / x.size(-1) >= kWideRows;
                std::vector<c10::IValue> stack{x.contiguous(), wide ? f.wide : f.narrow, f.reduce_range};
                op.callBoxed(&stack);
                return stack[0].toTensor();
            },
            [&](const Int8Rows& f) { return int8_rows_linear(x, f); },  // int32 products, no dequantised weight
            [&](const Frozen& f) { return frozen_linear(x, f.values, f.row_scale); },
            [&](const std::monostate&) -> at::Tensor { throw Error(ErrorCode::Internal, "linear layer has no weight"); },
        },
        form_);
}

namespace {

// Rows `flat` of a weight packed in blocks of 16 rows whose row is the second index of its block
// ([N/16, X, 16, ...]: the fp32 panels and the VNNI int8 layout) -> [rows, X, ...].
at::Tensor rows_of_blocks_of_16(const at::Tensor& packed, const at::Tensor& flat) {
    return packed.index({at::floor_divide(flat, 16), at::indexing::Slice(), at::remainder(flat, 16)});
}

}  // namespace

at::Tensor Linear::rows(const at::Tensor& ids) const {
    if (const Plain* f = std::get_if<Plain>(&form_)) return at::embedding(f->weight, ids);
    if (const Int8Rows* f = std::get_if<Int8Rows>(&form_))  // as a separate int8 table would give them
        return at::embedding(f->q, ids).to(f->scale.scalar_type()).mul_(at::embedding(f->scale, ids));
    const at::Tensor flat = ids.reshape({-1});
    std::vector<int64_t> shape(ids.sizes().begin(), ids.sizes().end());
    if (const Fp32Panels* f = std::get_if<Fp32Panels>(&form_)) {
        shape.push_back(f->panels.size(1));  // panels [N/16, K, 16]
        return rows_of_blocks_of_16(f->panels, flat).view(shape);
    }
    if (const CpuInt8* f = std::get_if<CpuInt8>(&form_)) {
        const Int8Weight& w = f->weight;  // packed [N/16, K/4, 16, 4]
        const at::Tensor q = rows_of_blocks_of_16(w.packed, flat).reshape({flat.size(0), -1}).narrow(1, 0, w.k);
        shape.push_back(w.k);
        return q.to(at::kFloat).mul_(w.scale.index({flat}).unsqueeze(1)).view(shape);
    }
    return {};
}

const at::Tensor& Linear::weight() const {
    static const at::Tensor none;
    const Plain* p = std::get_if<Plain>(&form_);
    return p ? p->weight : none;
}

int64_t Linear::bytes() const {
    // The packed buffers' size queries include a fixed reserve that is never touched: count a
    // packed matrix as its element bytes. int8 forms: values plus one fp32 scale per output row.
    return std::visit(
        Overload{
            [](const std::monostate&) -> int64_t { return 0; },
            [](const Plain& f) -> int64_t { return f.weight.numel() * static_cast<int64_t>(f.weight.element_size()); },
            [](const Fp32Panels& f) -> int64_t { return f.panels.numel() * 4; },
            [](const Fp32Packed& f) -> int64_t { return f.out_features * f.in_features * 4; },
            [](const Bf16Reordered& f) -> int64_t { return f.out_features * f.in_features * 2; },
            [](const CpuInt8& f) -> int64_t { return f.weight.bytes(); },
            [](const FbgemmInt8& f) -> int64_t {
                const int64_t copies = f.wide.isNone() ? 1 : 2;
                return copies * f.out_features * f.in_features + f.out_features * 4;
            },
            [](const Int8Rows& f) -> int64_t { return f.q.numel() + f.q.size(0) * 4; },
            [](const Frozen& f) -> int64_t {
                return f.values.numel() * static_cast<int64_t>(f.values.element_size()) +
                       (f.row_scale.defined() ? f.values.size(0) * 4 : 0);
            },
        },
        form_);
}

std::string Linear::kernel_name() const {
    return std::visit(
        Overload{
            [](const std::monostate&) -> std::string { return "none"; },
            [](const Plain& f) { return std::string("ATen linear (") + c10::toString(f.weight.scalar_type()) + ")"; },
            [](const Fp32Panels& f) -> std::string {
                return f.isa == KernelIsa::Avx2 ? "fp32 panels (AVX2)" : "fp32 panels (portable)";
            },
            [](const Fp32Packed&) -> std::string { return "fp32 MKL packed"; },
            [](const Bf16Reordered&) -> std::string { return "bf16 oneDNN reordered"; },
            [](const CpuInt8& f) -> std::string { return f.kernel == Int8Kernel::Amx ? "int8 AMX" : "int8 AVX512-VNNI"; },
            [](const FbgemmInt8&) -> std::string { return "int8 FBGEMM"; },
            [](const Int8Rows&) -> std::string { return "int8 rows (int32 products)"; },
            [](const Frozen& f) { return std::string("frozen ") + c10::toString(f.values.scalar_type()) + " dequantised"; },
        },
        form_);
}

void Linear::quantize_int8(bool also_wide, const KernelPolicy& kernels) {
    const Plain* plain = std::get_if<Plain>(&form_);
    if (!plain) return;
    const at::ScalarType dtype = plain->weight.scalar_type();
    const bool cpu = plain->weight.is_cpu();
    at::Tensor w = plain->weight.to(at::kFloat);
    auto [q8, scale] = quantize_int8_rows(w);
    if (!cpu || kernels.int8 == Int8Kernel::Rows) {
        form_ = Int8Rows{q8, scale.to(dtype)};  // the device path (and its CPU twin): int8 in memory, int32 products
    } else if (kernels.int8 != Int8Kernel::Fbgemm) {
        form_ = CpuInt8{pack_int8_weight(q8, scale), kernels.int8};
    } else {
        // Without VNNI, FBGEMM and oneDNN multiply u8 x s8 pairs with vpmaddubsw, whose int16
        // sums saturate: activations then get 7 bits (reduce_range, PyTorch's own default on x86;
        // the policy's int8_reduced_range). On an AVX2 CPU, one 256x64 layer on N(0, 1) inputs:
        // 6.7% relative error without, 1.2% with; the tiny models' int8 logits were off by up to
        // 37% (t5v10) and 49% (flan) of their range without it. VNNI sums in int32: full range.
        at::Tensor q =
            at::quantize_per_channel(w, scale.squeeze(1).to(at::kDouble), at::zeros({w.size(0)}, at::kLong), 0, at::kQInt8);
        form_ = FbgemmInt8{prepack_with_fbgemm(q), also_wide ? prepack_with_onednn(q) : c10::IValue(), w.size(0), w.size(1),
                           kernels.int8_reduced_range};
    }
}

void Linear::hold_frozen(at::ScalarType dtype) {
    const Plain* plain = std::get_if<Plain>(&form_);
    if (!plain || dtype == at::kFloat) return;
    if (dtype != at::kChar) {
        form_ = Frozen{plain->weight.detach().to(dtype), at::Tensor()};
        return;
    }
    auto [q8, scale] = quantize_int8_rows(plain->weight.detach().to(at::kFloat));
    form_ = Frozen{q8, scale};
}

namespace {

// Whether pack_for_cpu gives a weight of these parts' dtype, device and total size the panel form.
bool panels_wanted(const std::vector<at::Tensor>& parts, const KernelPolicy& kernels) {
    int64_t elements = 0;
    for (const at::Tensor& w : parts) {
        if (w.scalar_type() != at::kFloat || !w.is_cpu() || w.dim() != 2) return false;
        elements += w.numel();
    }
    return kernels.fp32_gemm == Fp32Gemm::Panels && packing_wanted(elements, kernels.packing);
}

}  // namespace

Linear Linear::packed_from_parts(const std::vector<at::Tensor>& parts, const KernelPolicy& kernels) {
    Linear fused;
    if (panels_wanted(parts, kernels)) {
        int64_t rows = 0;
        for (const at::Tensor& w : parts) rows += w.size(0);
        fused.form_ = Fp32Panels{pack_panels(parts), rows, kernels.fp32_panels};
        return fused;
    }
    fused.form_ = Plain{at::cat(parts, 0)};
    fused.pack_for_cpu(kernels);
    return fused;
}

void Linear::pack_for_cpu(const KernelPolicy& kernels) {
    const Plain* plain = std::get_if<Plain>(&form_);
    if (!plain || !packing_wanted(plain->weight, kernels.packing)) return;
    const at::Tensor& w = plain->weight;
    const bool bf16 = w.scalar_type() == at::kBFloat16;
    if (panels_wanted({w}, kernels)) {
        form_ = Fp32Panels{pack_panels(w), w.size(0), kernels.fp32_panels};
        return;
    }
    at::Tensor packed = bf16 ? pack_linear_weight_bf16(w) : pack_linear_weight(w);
    if (!packed.defined()) return;
    const int64_t out = w.size(0), in = w.size(1);
    if (bf16) form_ = Bf16Reordered{packed, out, in};
    else form_ = Fp32Packed{packed, out, in};
}

}  // namespace t5s
