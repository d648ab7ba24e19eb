#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstring>
#include <utility>
#include <vector>

#include "t5s/error.h"
#include "torch/cpu_kernels.h"
#include "torch/t5_network.h"

// The CPU fp32 decode step in one pass per layer over buffers of its own. Each linear layer writes
// into a row buffer (Linear::product_into); the norms and the attention read and write raw rows
// (cpu_kernels.h). The step with a tensor per operation (t5_incremental.cpp) makes some 25 ATen
// calls per layer, each a dispatch and most an allocation: at t5-small int8 batch 1 a step spent
// 0.2-0.35 ms outside the GEMMs' 0.74-0.95 ms. This one makes none inside the layers. The kernels
// and their order are the same, so are the bits (test_kernel_policy.cpp compares the two).
namespace t5s {
namespace {

bool cpu_f32(const at::Tensor& t) { return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat; }
bool cpu_f32_contiguous(const at::Tensor& t) { return cpu_f32(t) && t.is_contiguous(); }
// Single-query attention reads K/V rows with a unit stride inside a head.
bool cpu_f32_rows(const at::Tensor& t) { return cpu_f32(t) && t.dim() == 4 && t.stride(3) == 1; }

bool layers_write_into(const DecoderLayer& l, bool gated) {
    const bool ff = gated ? l.ff.wi_0.writes_into() && l.ff.wi_1.writes_into() : l.ff.wi.writes_into();
    return ff && l.ff.wo.writes_into() && l.self_attn.qkv.writes_into() && l.self_attn.o.writes_into() &&
           l.cross_attn.q.writes_into() && l.cross_attn.o.writes_into() && cpu_f32(l.ln_self) && cpu_f32(l.ln_cross) &&
           cpu_f32(l.ln_ff);
}

// The step's rows, carved from one buffer per thread that grows to the widest step it has run
// (no allocation per step after the first).
struct StepRows {
    float *h, *x, *qkv, *attn, *y, *q, *ff, *gate;
    StepRows(int64_t rows, int64_t d, int64_t inner, int64_t d_ff) {
        thread_local std::vector<float> buffer;
        const int64_t need = rows * (3 * d + 5 * inner + 2 * d_ff);
        if (buffer.size() < static_cast<size_t>(need)) buffer.resize(static_cast<size_t>(need));
        float* p = buffer.data();
        auto take = [&](int64_t n) { return std::exchange(p, p + rows * n); };
        h = take(d), x = take(d), y = take(d), qkv = take(3 * inner), attn = take(inner), q = take(inner);
        ff = take(d_ff), gate = take(d_ff);
    }
};

// K/V and bias operands from the tensors' strides; q and out are the caller's.
SingleQuery<float> attention_over(const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias, int64_t keys) {
    SingleQuery<float> a;
    a.k = k.data_ptr<float>(), a.k_row = k.stride(0), a.k_head = k.stride(1), a.k_pos = k.stride(2);
    a.v = v.data_ptr<float>(), a.v_row = v.stride(0), a.v_head = v.stride(1), a.v_pos = v.stride(2);
    // bias [rows, H or 1, 1, keys]: a head dimension of 1 is read with stride 0 (broadcast).
    a.bias = bias.data_ptr<float>(), a.bias_row = bias.stride(0), a.bias_pos = bias.stride(3);
    a.bias_head = bias.size(1) == 1 ? 0 : bias.stride(1);
    a.bias_rows = bias.size(0);
    a.keys = keys, a.heads = k.size(1), a.d_kv = k.size(3);
    return a;
}

}  // namespace

bool T5Network::one_pass_step_ready(const DecoderState& st, int64_t rows) const {
    if (!kernels_.one_pass_step || kernels_.step == KernelIsa::Off || training_ || at::GradMode::is_enabled()) return false;
    if (!device_.is_cpu() || dtype_ != at::kFloat || !cpu_f32(dec_final_ln_) || !cpu_f32(st.self_bias_table)) return false;
    if (!cpu_f32(st.cross_bias) || (st.self_key_bias.defined() && !cpu_f32(st.self_key_bias))) return false;
    if (st.cross_rows.defined() &&
        !(st.cross_rows.is_cpu() && st.cross_rows.scalar_type() == at::kLong && st.cross_rows.is_contiguous()))
        return false;
    if (st.self_k.size() != decoder_.size() || st.cross_k.size() != decoder_.size()) return false;
    for (size_t i = 0; i < decoder_.size(); ++i) {
        if (!layers_write_into(decoder_[i], config_.is_gated_act)) return false;
        if (!cpu_f32_contiguous(st.self_k[i]) || !cpu_f32_contiguous(st.self_v[i])) return false;
        // Anything else (a full cache, a batch of another size) is the tensor step's to report.
        const at::Tensor& k = st.self_k[i];
        if (!k.sizes().equals(st.self_v[i].sizes()) || k.size(0) != rows || k.size(1) != config_.num_heads ||
            k.size(2) <= st.length || k.size(3) != config_.d_kv)
            return false;
        if (!cpu_f32_rows(st.cross_k[i]) || !cpu_f32_rows(st.cross_v[i])) return false;
    }
    return true;
}

void T5Network::feed_forward_into(const FeedForwardWeights& w, const float* x, int64_t rows, float* ff, float* gate,
                                  float* y) const {
    const int64_t d_ff = config_.d_ff;
    if (!config_.is_gated_act && config_.dense_act_fn == "relu") {
        w.wi.product_into(x, rows, ff);
        // at::relu's values: negatives to 0, NaN kept.
        for (int64_t i = 0; i < rows * d_ff; ++i) ff[i] = ff[i] < 0.0f ? 0.0f : ff[i];
        w.wo.product_into(ff, rows, y);
        return;
    }
    // Other activations (gelu_new, silu, ...) through ATen on the buffers: the op-by-op step's ops.
    const auto opts = at::TensorOptions().dtype(at::kFloat);
    at::Tensor h;
    if (config_.is_gated_act) {
        w.wi_0.product_into(x, rows, ff);
        w.wi_1.product_into(x, rows, gate);
        h = (activate(at::from_blob(ff, {rows, 1, d_ff}, opts)) * at::from_blob(gate, {rows, 1, d_ff}, opts)).contiguous();
    } else {
        w.wi.product_into(x, rows, ff);
        h = activate(at::from_blob(ff, {rows, 1, d_ff}, opts)).contiguous();
    }
    w.wo.product_into(h.data_ptr<float>(), rows, y);
}

at::Tensor T5Network::decode_step_one_pass(DecoderState& st, const at::Tensor& tokens, at::Tensor* final_hidden) const {
    const int64_t t = st.length, B = tokens.size(0), d = config_.d_model, inner = config_.inner_dim();
    const double eps = config_.layer_norm_epsilon;
    const KernelIsa isa = kernels_.step;
    StepRows r(B, d, inner, config_.d_ff);
    const at::Tensor embedded = embed(tokens.unsqueeze(1)).contiguous();  // [B, 1, d]
    std::memcpy(r.h, embedded.data_ptr<float>(), static_cast<size_t>(B * d) * sizeof(float));
    rms_norm_rows_f32(r.h, decoder_[0].ln_self.data_ptr<float>(), B, d, eps, isa, r.x);

    at::Tensor self_bias = st.self_bias_table.narrow(2, t, 1).narrow(3, 0, t + 1);
    if (st.self_key_bias.defined()) self_bias = self_bias + st.self_key_bias.narrow(3, 0, t + 1);
    const at::Tensor cross_bias = st.cross_bias;
    for (size_t i = 0; i < decoder_.size(); ++i) {
        const DecoderLayer& l = decoder_[i];
        l.self_attn.qkv.product_into(r.x, B, r.qkv);  // each row q | k | v
        write_cache_position(st.self_k[i], t, r.qkv + inner, 3 * inner, config_.d_kv);
        write_cache_position(st.self_v[i], t, r.qkv + 2 * inner, 3 * inner, config_.d_kv);
        SingleQuery<float> self = attention_over(st.self_k[i], st.self_v[i], self_bias, t + 1);
        self.q = r.qkv, self.q_row = 3 * inner, self.q_head = config_.d_kv;
        self.rows = B, self.out = r.attn;
        single_query_attention_f32(self, isa);
        l.self_attn.o.product_into(r.attn, B, r.y);
        residual_rms_norm_rows_f32(r.h, r.y, l.ln_cross.data_ptr<float>(), B, d, eps, isa, r.x);

        l.cross_attn.q.product_into(r.x, B, r.q);
        const at::Tensor &ck = st.cross_k[i], &cv = st.cross_v[i];
        SingleQuery<float> cross = attention_over(ck, cv, cross_bias, ck.size(2));
        cross.q = r.q, cross.q_row = inner, cross.q_head = config_.d_kv;
        cross.rows = B, cross.out = r.attn;
        // Each row's K/V: named by cross_rows, or shared by the rows of one input (beams, candidates).
        if (st.cross_rows.defined()) cross.kv_row = st.cross_rows.data_ptr<int64_t>();
        else cross.share = B / ck.size(0);
        single_query_attention_f32(cross, isa);
        l.cross_attn.o.product_into(r.attn, B, r.y);
        residual_rms_norm_rows_f32(r.h, r.y, l.ln_ff.data_ptr<float>(), B, d, eps, isa, r.x);

        feed_forward_into(l.ff, r.x, B, r.ff, r.gate, r.y);
        const at::Tensor& next_ln = i + 1 < decoder_.size() ? decoder_[i + 1].ln_self : dec_final_ln_;
        residual_rms_norm_rows_f32(r.h, r.y, next_ln.data_ptr<float>(), B, d, eps, isa, r.x);
    }
    st.length = t + 1;
    const at::Tensor hidden = at::from_blob(r.x, {B, 1, d}, at::TensorOptions().dtype(at::kFloat));
    if (final_hidden) *final_hidden = hidden.squeeze(1).clone();  // the buffer is the next step's
    return lm_logits(hidden).squeeze(1);
}

}  // namespace t5s
