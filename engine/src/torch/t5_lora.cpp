// T5Network's LoRA attachment: which Linear carries which adapter module, fused layers included.
#include "t5s/error.h"
#include "torch/int8_gemm.h"
#include "torch/lora.h"
#include "torch/t5_network.h"

namespace t5s {
namespace {

// A linear layer as it stands now and the module path(s) it computes: one for a plain layer, the
// parts in output order for a fused one.
struct Slot {
    Linear* layer;
    std::vector<std::string> parts;
};

void attention_slots(AttentionWeights& a, const std::string& prefix, std::vector<Slot>& out) {
    if (a.qkv.ready()) out.push_back({&a.qkv, {prefix + "q", prefix + "k", prefix + "v"}});
    if (a.q.ready()) out.push_back({&a.q, {prefix + "q"}});
    if (a.kv.ready()) out.push_back({&a.kv, {prefix + "k", prefix + "v"}});
    if (a.k.ready()) out.push_back({&a.k, {prefix + "k"}});
    if (a.v.ready()) out.push_back({&a.v, {prefix + "v"}});
    if (a.o.ready()) out.push_back({&a.o, {prefix + "o"}});
}

void feed_forward_slots(FeedForwardWeights& f, const std::string& prefix, std::vector<Slot>& out) {
    for (auto [layer, name] : {std::pair<Linear*, const char*>{&f.wi, "wi"}, {&f.wi_0, "wi_0"}, {&f.wi_1, "wi_1"}, {&f.wo, "wo"}})
        if (layer->ready()) out.push_back({layer, {prefix + name}});
}

// Stacks the parts' terms: A = [A_1; A_2; ..] and B block-diagonal, so that one product gives each
// part's slice its own B_i A_i x (the zero blocks add exact zeros).
Linear::Lora fused_term(const std::vector<const LoraModule*>& parts, int64_t part_out, double scale, double dropout) {
    std::vector<at::Tensor> as;
    int64_t rank = 0;
    for (const LoraModule* m : parts)
        if (m) as.push_back(m->a), rank += m->a.size(0);
    at::Tensor b = at::zeros({part_out * static_cast<int64_t>(parts.size()), rank}, as[0].options());
    int64_t col = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i]) continue;
        const int64_t r = parts[i]->a.size(0);
        b.narrow(0, static_cast<int64_t>(i) * part_out, part_out).narrow(1, col, r).copy_(parts[i]->b);
        col += r;
    }
    return {at::cat(as, 0), b, scale, dropout};
}

}  // namespace

void T5Network::set_adapter(const LoraAdapter* adapter) {
    std::vector<Slot> slots;
    for (size_t i = 0; i < encoder_.size(); ++i) {
        const std::string b = "encoder.block." + std::to_string(i);
        attention_slots(encoder_[i].attn, b + ".layer.0.SelfAttention.", slots);
        feed_forward_slots(encoder_[i].ff, b + ".layer.1.DenseReluDense.", slots);
    }
    for (size_t i = 0; i < decoder_.size(); ++i) {
        const std::string b = "decoder.block." + std::to_string(i);
        attention_slots(decoder_[i].self_attn, b + ".layer.0.SelfAttention.", slots);
        attention_slots(decoder_[i].cross_attn, b + ".layer.1.EncDecAttention.", slots);
        feed_forward_slots(decoder_[i].ff, b + ".layer.2.DenseReluDense.", slots);
    }
    lora_dropout_ = adapter ? adapter->settings.dropout : 0.0;
    size_t used = 0;
    for (Slot& s : slots) {
        std::vector<const LoraModule*> parts;
        bool any = false;
        for (const std::string& p : s.parts) {
            const LoraModule* m = nullptr;
            if (adapter) {
                auto it = adapter->modules.find(p);
                if (it != adapter->modules.end()) m = &it->second, ++used;
            }
            parts.push_back(m);
            any = any || m;
        }
        if (!any) {
            s.layer->set_lora({});
        } else if (parts.size() == 1) {
            // The adapter's own tensors (shared, not copied): training updates them in place.
            s.layer->set_lora({parts[0]->a, parts[0]->b, adapter->settings.scale(), adapter->settings.dropout});
        } else {
            Linear::Lora t = fused_term(parts, config_.inner_dim(), adapter->settings.scale(), adapter->settings.dropout);
            s.layer->set_lora(std::move(t));
        }
        s.layer->set_lora_dropout_active(training_);
    }
    if (adapter && used != adapter->modules.size())
        throw Error(ErrorCode::Internal, "adapter modules without a matching layer in the network");
}

void T5Network::hold_frozen_base(at::ScalarType dtype) {
    if (dtype == at::kFloat) return;
    if (fused_) throw Error(ErrorCode::Internal, "hold_frozen_base on an inference network");
    auto hold = [&](auto& layers) {
        for (auto& l : layers)
            for (Linear* x : linear_layers(l)) x->hold_frozen(dtype);
    };
    hold(encoder_);
    hold(decoder_);
    const bool tied = head_.weight().defined() && head_.weight().is_same(shared_);
    if (!tied) head_.hold_frozen(dtype);
    at::Tensor table = shared_.detach();
    if (dtype == at::kChar) {
        // The inference int8 scheme for the table (per-row scales); a tied head multiplies with the same rows.
        auto [q8, scale] = quantize_int8_rows(table.to(at::kFloat));
        shared_int8_ = q8;
        shared_scale_ = scale.to(dtype_);
        shared_ = at::Tensor();
        if (tied) head_ = Linear(Linear::Frozen{q8, scale});
    } else {
        shared_ = table.to(dtype);
        if (tied) head_ = Linear(Linear::Frozen{shared_, at::Tensor()});
    }
    for (auto it = params_.begin(); it != params_.end();) {
        const std::string& n = it->first;
        const bool norm_or_bias =
            n.find("layer_norm") != std::string::npos || n.find("relative_attention_bias") != std::string::npos;
        it = norm_or_bias ? std::next(it) : params_.erase(it);
    }
}

void T5Network::set_training(bool training, double dropout_rate) {
    training_ = training;
    dropout_ = dropout_rate;
    auto each = [&](auto& layers) {
        for (auto& l : layers)
            for (Linear* x : linear_layers(l)) x->set_lora_dropout_active(training);
    };
    each(encoder_);
    each(decoder_);
}

}  // namespace t5s
