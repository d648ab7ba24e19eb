#include "torch/lean_backward.h"

#include <torch/csrc/autograd/custom_function.h>

namespace t5s {
namespace {

at::Tensor dequantise(const at::Tensor& values, const at::Tensor& row_scale, at::ScalarType dtype) {
    at::Tensor w = values.to(dtype);
    return row_scale.defined() ? w.mul_(row_scale.to(dtype)) : w;
}

// Passed as a plain argument, not as tensors: autograd neither tracks nor saves the frozen weight.
struct FrozenWeight {
    at::Tensor values, row_scale;
};

struct FrozenLinearFunction : torch::autograd::Function<FrozenLinearFunction> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const FrozenWeight& w) {
        // Kept by reference (frozen storage), not as saved variables: nothing new stays alive.
        ctx->saved_data["values"] = w.values;
        if (w.row_scale.defined()) ctx->saved_data["row_scale"] = w.row_scale;
        return at::linear(x, dequantise(w.values, w.row_scale, x.scalar_type()));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
        const at::Tensor values = ctx->saved_data["values"].toTensor();
        const auto it = ctx->saved_data.find("row_scale");
        const at::Tensor row_scale = it != ctx->saved_data.end() ? it->second.toTensor() : at::Tensor();
        const at::Tensor& gy = grads[0];
        return {at::matmul(gy, dequantise(values, row_scale, gy.scalar_type())), at::Tensor()};
    }
};

struct LoraTermKeepingInput : torch::autograd::Function<LoraTermKeepingInput> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& a,
                              const at::Tensor& b, double scale, double dropout) {
        auto [h, keep] = at::native_dropout(x, dropout, true);
        at::Tensor u = at::linear(h, a);  // [.., r]
        ctx->save_for_backward({x, keep, a, b, u});
        ctx->saved_data["scale"] = scale;
        ctx->saved_data["dropout"] = dropout;
        return at::linear(u, b) * scale;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &keep = saved[1], &a = saved[2], &b = saved[3], &u = saved[4];
        const double scale = ctx->saved_data["scale"].toDouble();
        const double keep_scale = 1.0 / (1.0 - ctx->saved_data["dropout"].toDouble());
        // In the adapter's dtype (fp32): under autocast the forward's products ran in bf16 / fp16.
        const at::Tensor g = (grads[0].to(a.scalar_type()) * scale).reshape({-1, b.size(0)});  // d loss / d (u B^T)
        const at::Tensor u2 = u.to(a.scalar_type()).reshape({-1, u.size(-1)});
        const at::Tensor grad_b = at::mm(g.t(), u2);
        const at::Tensor grad_u = at::mm(g, b);  // [N, r]
        const at::Tensor h = (x * keep * keep_scale).reshape({-1, x.size(-1)});
        const at::Tensor grad_a = at::mm(grad_u.t(), h);
        at::Tensor grad_x;
        if (ctx->needs_input_grad(0)) grad_x = (at::mm(grad_u, a).view(x.sizes()) * keep * keep_scale);
        return {grad_x, grad_a, grad_b, at::Tensor(), at::Tensor()};
    }
};

struct ReluKeepingMask : torch::autograd::Function<ReluKeepingMask> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x) {
        at::Tensor positive = x > 0;
        ctx->save_for_backward({positive});
        return at::relu(x);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
        const at::Tensor positive = ctx->get_saved_variables()[0];
        return {grads[0] * positive};
    }
};

}  // namespace

at::Tensor lora_term_keeping_input(const at::Tensor& x, const at::Tensor& a, const at::Tensor& b, double scale, double dropout) {
    return LoraTermKeepingInput::apply(x, a, b, scale, dropout);
}

at::Tensor relu_keeping_mask(const at::Tensor& x) {
    if (!(at::GradMode::is_enabled() && x.requires_grad())) return at::relu(x);
    return ReluKeepingMask::apply(x);
}

at::Tensor frozen_linear(const at::Tensor& x, const at::Tensor& values, const at::Tensor& row_scale) {
    if (!(at::GradMode::is_enabled() && x.requires_grad())) return at::linear(x, dequantise(values, row_scale, x.scalar_type()));
    return FrozenLinearFunction::apply(x, FrozenWeight{values, row_scale});
}

}  // namespace t5s
