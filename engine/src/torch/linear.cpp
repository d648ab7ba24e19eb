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

bool Linear::writes_into() const {
    if (has_lora()) return false;
    if (const auto* f = std::get_if<CpuInt8>(&form_)) return multiplies_packed_int8(f->kernel);
    return std::holds_alternative<Fp32Panels>(form_) || std::holds_alternative<Fp32Packed>(form_);
}

void Linear::product_into(const float* x, int64_t rows, float* y) const {
    if (!writes_into()) throw Error(ErrorCode::Internal, "product_into: this layer's form takes tensors only");
    if (const auto* f = std::get_if<Fp32Panels>(&form_)) panel_linear_into(x, rows, f->panels, f->out_features, f->isa, y);
    else if (const auto* p = std::get_if<Fp32Packed>(&form_))
        packed_linear_into(x, rows, p->packed, p->out_features, p->in_features, y);
    else int8_linear_into(x, rows, std::get<CpuInt8>(form_).weight, std::get<CpuInt8>(form_).kernel, y);
}

namespace {

// `ids` flattened to host int64, each checked against the weight's n rows.
at::Tensor host_ids(const at::Tensor& ids, int64_t n) {
    at::Tensor flat = ids.reshape({-1}).to(at::kLong).contiguous();
    const int64_t* id = flat.data_ptr<int64_t>();
    for (int64_t r = 0; r < flat.numel(); ++r)
        TORCH_CHECK_INDEX(id[r] >= 0 && id[r] < n, "row ", id[r], " is out of range [0, ", n, ")");
    return flat;
}

// Rows of a weight packed in blocks of 16 rows whose row is the second index of its block (the fp32
// panels [N/16, K, 16] and the VNNI int8 layout [N/16, K/4, 16, 4]), gathered by a host loop: a
// decode step looks up one row per sequence, where an advanced index (with floor_divide, remainder,
// a cast and a multiply) cost 25-30 us a step.
at::Tensor panel_rows(const Linear::Fp32Panels& f, const at::Tensor& flat) {
    const int64_t k = f.panels.size(1), count = flat.numel();
    at::Tensor out = at::empty({count, k}, f.panels.options());
    const int64_t* id = flat.data_ptr<int64_t>();
    const float* panels = f.panels.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < count; ++r) {
        const float* column = panels + (id[r] / 16) * k * 16 + id[r] % 16;
        for (int64_t i = 0; i < k; ++i) o[r * k + i] = column[i * 16];
    }
    return out;
}

// q * the row's scale in fp32, as q.to(kFloat) * scale gives it.
at::Tensor vnni_rows(const Int8Weight& w, const at::Tensor& flat) {
    const int64_t k = w.k, k4 = w.packed.size(1), count = flat.numel();
    at::Tensor out = at::empty({count, k}, w.scale.options().dtype(at::kFloat));
    const int64_t* id = flat.data_ptr<int64_t>();
    const int8_t* packed = w.packed.data_ptr<int8_t>();
    const float* scale = w.scale.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < count; ++r) {
        const int8_t* row = packed + ((id[r] / 16) * k4 * 16 + id[r] % 16) * 4;  // its 4 inputs of each group of 4
        for (int64_t i = 0; i < k; ++i) o[r * k + i] = static_cast<float>(row[(i / 4) * 64 + i % 4]) * scale[id[r]];
    }
    return out;
}

}  // namespace

at::Tensor Linear::rows(const at::Tensor& ids) const {
    if (const Plain* f = std::get_if<Plain>(&form_)) return at::embedding(f->weight, ids);
    if (const Int8Rows* f = std::get_if<Int8Rows>(&form_))  // as a separate int8 table would give them
        return at::embedding(f->q, ids).to(f->scale.scalar_type()).mul_(at::embedding(f->scale, ids));
    std::vector<int64_t> shape(ids.sizes().begin(), ids.sizes().end());
    if (const Fp32Panels* f = std::get_if<Fp32Panels>(&form_)) {
        shape.push_back(f->panels.size(1));
        return panel_rows(*f, host_ids(ids, f->out_features)).view(shape);
    }
    if (const CpuInt8* f = std::get_if<CpuInt8>(&form_)) {
        shape.push_back(f->weight.k);
        return vnni_rows(f->weight, host_ids(ids, f->weight.n)).view(shape);
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
            [](const CpuInt8& f) -> std::string {
                return f.kernel == Int8Kernel::Amx ? "int8 AMX" : f.kernel == Int8Kernel::Avx2 ? "int8 AVX2" : "int8 AVX512-VNNI";
            },
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
