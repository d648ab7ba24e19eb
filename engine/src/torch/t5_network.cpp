#include "torch/t5_network.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "t5s/error.h"
#include "torch/cpu_kernels.h"
#include "torch/packed_gemm.h"

namespace t5s {
namespace {

at::Tensor activation(const std::string& name, const at::Tensor& x) {
    if (name == "relu") return at::relu(x);
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return at::gelu(x, "tanh");
    if (name == "gelu") return at::gelu(x);
    if (name == "silu" || name == "swish") return at::silu(x);
    if (name == "tanh") return at::tanh(x);
    if (name == "sigmoid") return at::sigmoid(x);
    throw Error(ErrorCode::Unsupported, "activation '" + name + "' is not supported");
}

c10::OperatorHandle quantized_op(const char* name) {
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Linear

at::Tensor Linear::operator()(const at::Tensor& x) const {
    if (fp32_packed.defined() && x.scalar_type() == at::kFloat && x.is_cpu()) {
        return packed_linear(x, fp32_packed, out_features, in_features);
    }
    if (bf16_packed.defined() && x.scalar_type() == at::kBFloat16 && x.is_cpu()) return packed_linear_bf16(x, bf16_packed);
    if (cpu_int8.defined()) return int8_linear(x, cpu_int8);  // CPU int8 computes in fp32
    if (!cpu_packed.isNone()) {
        static const c10::OperatorHandle op = quantized_op("quantized::linear_dynamic");
        // FBGEMM is fastest for a few rows, oneDNN from about 16 (beams x inputs, candidates).
        constexpr int64_t kWideRows = 16;
        const bool wide = !cpu_packed_wide.isNone() && x.numel() / x.size(-1) >= kWideRows;
        std::vector<c10::IValue> stack{x.contiguous(), wide ? cpu_packed_wide : cpu_packed, false};
        op.callBoxed(&stack);
        return stack[0].toTensor();
    }
    if (int8_weight.defined()) {
        // Dequantise this layer only: peak extra memory is one layer's weight.
        return at::linear(x, int8_weight.to(x.scalar_type()) * int8_scale.to(x.scalar_type()));
    }
    if (!weight.defined()) throw Error(ErrorCode::Internal, "packed layer called with an input of another dtype or device");
    return at::linear(x, weight);
}

int64_t Linear::bytes() const {
    // The packed buffer's size query includes a fixed reserve that is never touched: count the
    // packed matrix as its element bytes.
    if (fp32_packed.defined() || bf16_packed.defined()) {
        const int64_t element = fp32_packed.defined() ? 4 : 2;
        return (out_features * in_features + (weight.defined() ? weight.numel() : 0)) * element;
    }
    if (cpu_int8.defined()) return cpu_int8.bytes();
    if (!cpu_packed.isNone() || int8_weight.defined()) {
        // int8 values and one fp32 scale per output row (the oneDNN copy of the head: once more).
        const int64_t copies = cpu_packed_wide.isNone() ? 1 : 2;
        return copies * out_features * in_features + out_features * 4;
    }
    return weight.defined() ? weight.numel() * static_cast<int64_t>(weight.element_size()) : 0;
}

// ---------------------------------------------------------------------------------------------
// Construction

std::string T5Network::matmul_kernel() const {
    const Linear& l = decoder_.empty() ? head_ : decoder_[0].ff.wo;  // present in every variant
    if (l.cpu_int8.defined()) return int8_amx_available() ? "int8 AMX" : "int8 AVX512-VNNI";
    if (!l.cpu_packed.isNone()) return "int8 FBGEMM";
    if (l.int8_weight.defined()) return "int8 dequantised";
    if (l.fp32_packed.defined()) return "fp32 MKL packed";
    if (l.bf16_packed.defined()) return "bf16 oneDNN reordered";
    return std::string("ATen linear (") + c10::toString(dtype_) + ")";
}

T5Network::T5Network(ModelConfig config, std::map<std::string, at::Tensor> params)
    : config_(std::move(config)), params_(std::move(params)) {
    const at::Tensor& shared = params_.at("shared.weight");
    dtype_ = shared.scalar_type();
    device_ = shared.device();
    bind_weights();
}

void T5Network::bind_weights() {
    auto p = [&](const std::string& name) { return params_.at(name); };
    auto lin = [&](const std::string& name) {
        Linear l;
        l.weight = p(name);
        l.out_dtype = l.weight.scalar_type();
        return l;
    };
    auto attention = [&](const std::string& prefix, bool has_bias) {
        AttentionWeights a;
        a.q = lin(prefix + ".q.weight");
        a.k = lin(prefix + ".k.weight");
        a.v = lin(prefix + ".v.weight");
        a.o = lin(prefix + ".o.weight");
        if (has_bias) a.relative_bias = p(prefix + ".relative_attention_bias.weight");
        return a;
    };
    auto feed_forward = [&](const std::string& prefix) {
        FeedForwardWeights f;
        if (config_.is_gated_act) {
            f.wi_0 = lin(prefix + ".DenseReluDense.wi_0.weight");
            f.wi_1 = lin(prefix + ".DenseReluDense.wi_1.weight");
        } else {
            f.wi = lin(prefix + ".DenseReluDense.wi.weight");
        }
        f.wo = lin(prefix + ".DenseReluDense.wo.weight");
        return f;
    };
    encoder_.clear();
    decoder_.clear();
    for (int64_t i = 0; i < config_.num_layers; ++i) {
        const std::string b = "encoder.block." + std::to_string(i);
        EncoderLayer l;
        l.attn = attention(b + ".layer.0.SelfAttention", i == 0);
        l.ln_attn = p(b + ".layer.0.layer_norm.weight");
        l.ff = feed_forward(b + ".layer.1");
        l.ln_ff = p(b + ".layer.1.layer_norm.weight");
        encoder_.push_back(std::move(l));
    }
    for (int64_t i = 0; i < config_.num_decoder_layers; ++i) {
        const std::string b = "decoder.block." + std::to_string(i);
        DecoderLayer l;
        l.self_attn = attention(b + ".layer.0.SelfAttention", i == 0);
        l.ln_self = p(b + ".layer.0.layer_norm.weight");
        l.cross_attn = attention(b + ".layer.1.EncDecAttention", false);
        l.ln_cross = p(b + ".layer.1.layer_norm.weight");
        l.ff = feed_forward(b + ".layer.2");
        l.ln_ff = p(b + ".layer.2.layer_norm.weight");
        decoder_.push_back(std::move(l));
    }
    shared_ = p("shared.weight");
    lm_head_ = config_.tie_word_embeddings ? shared_ : p("lm_head.weight");
    head_ = Linear{};
    head_.weight = lm_head_;
    head_.out_dtype = lm_head_.scalar_type();
    enc_final_ln_ = p("encoder.final_layer_norm.weight");
    dec_final_ln_ = p("decoder.final_layer_norm.weight");
    fused_ = false;
}

void T5Network::fuse_for_inference() {
    // One GEMM for q|k|v (and k|v of cross-attention) instead of three; the separate weights
    // become views of the fused tensor, so memory is not doubled.
    const int64_t inner = config_.inner_dim();
    auto fuse = [&](std::vector<Linear*> parts, Linear& fused) {
        std::vector<at::Tensor> ws;
        for (Linear* p : parts) ws.push_back(p->weight);
        fused.weight = at::cat(ws, 0);
        fused.out_dtype = fused.weight.scalar_type();
        for (size_t i = 0; i < parts.size(); ++i) parts[i]->weight = fused.weight.narrow(0, i * inner, inner);
    };
    for (auto& l : encoder_) fuse({&l.attn.q, &l.attn.k, &l.attn.v}, l.attn.qkv);
    for (auto& l : decoder_) {
        fuse({&l.self_attn.q, &l.self_attn.k, &l.self_attn.v}, l.self_attn.qkv);
        fuse({&l.cross_attn.k, &l.cross_attn.v}, l.cross_attn.kv);
    }
    params_.clear();  // inference only from here on: the layer structs hold the weights
    fused_ = true;
}

namespace {

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

}  // namespace

void T5Network::quantize_int8() {
    auto quantize = [&](Linear& l) {
        if (!l.weight.defined()) return;
        at::Tensor w = l.weight.to(at::kFloat);
        l.out_features = w.size(0), l.in_features = w.size(1);
        auto [q8, scale] = quantize_int8_rows(w);
        if (device_.is_cpu() && int8_vnni_available()) {
            l.cpu_int8 = pack_int8_weight(q8, scale);
        } else if (device_.is_cpu()) {
            at::Tensor q = at::quantize_per_channel(w, scale.squeeze(1).to(at::kDouble),
                                                    at::zeros({w.size(0)}, at::kLong), 0, at::kQInt8);
            static const c10::OperatorHandle prepack = quantized_op("quantized::linear_prepack");
            std::vector<c10::IValue> stack{q, c10::IValue()};
            prepack.callBoxed(&stack);
            l.cpu_packed = stack[0];
            if (&l == &head_) l.cpu_packed_wide = prepack_with_onednn(q);
        } else {
            l.int8_weight = q8;
            l.int8_scale = scale.to(dtype_);
        }
        l.weight = at::Tensor();
    };
    // Quantise every matmul, the output head included: at batch 1 decoding is memory-bound and the
    // head alone is d_model x vocab.
    if (!fused_) fuse_for_inference();
    // After fusing, q/k/v are only reached through qkv (and cross k/v through kv): drop the views.
    for (auto& l : encoder_) {
        l.attn.k = l.attn.v = l.attn.q = Linear{};
        for (Linear* x : {&l.attn.qkv, &l.attn.o, &l.ff.wi, &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo}) quantize(*x);
    }
    for (auto& l : decoder_) {
        l.self_attn.q = l.self_attn.k = l.self_attn.v = Linear{};
        l.cross_attn.k = l.cross_attn.v = Linear{};
        for (Linear* x : {&l.self_attn.qkv, &l.self_attn.o, &l.cross_attn.q, &l.cross_attn.kv, &l.cross_attn.o, &l.ff.wi,
                          &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo}) {
            quantize(*x);
        }
    }
    quantize(head_);
    lm_head_ = at::Tensor();  // only the int8 head is used now
    // The embedding table too, with the head's per-row scheme (CTranslate2 does the same): for a
    // tied model these are the head's own int8 rows. t5-small: 66 MB -> 16 MB; mT5-large: 1 GB -> 256 MB.
    at::Tensor w = shared_.to(at::kFloat);
    auto [q8, scale] = quantize_int8_rows(w);
    shared_int8_ = q8;
    shared_scale_ = scale.to(dtype_);
    shared_ = at::Tensor();
}

at::Tensor T5Network::embed(const at::Tensor& ids) const {
    if (!shared_int8_.defined()) return at::embedding(shared_, ids);
    return at::embedding(shared_int8_, ids).to(dtype_).mul_(at::embedding(shared_scale_, ids));
}

void T5Network::pack_for_cpu_decoding() {
    if (!device_.is_cpu() || (dtype_ != at::kFloat && dtype_ != at::kBFloat16)) return;
    if (!fused_) fuse_for_inference();
    auto pack = [](Linear& l, bool keep_weight) {
        if (!l.weight.defined()) return;
        const bool bf16 = l.weight.scalar_type() == at::kBFloat16;
        at::Tensor packed = bf16 ? pack_linear_weight_bf16(l.weight) : pack_linear_weight(l.weight);
        if (!packed.defined()) return;
        l.out_features = l.weight.size(0), l.in_features = l.weight.size(1);
        (bf16 ? l.bf16_packed : l.fp32_packed) = packed;
        if (!keep_weight) l.weight = at::Tensor();
    };
    for (auto& l : decoder_) {
        // q/k/v (and cross k/v) are views of the fused tensors: drop them so the storage goes.
        l.self_attn.q = l.self_attn.k = l.self_attn.v = Linear{};
        l.cross_attn.k = l.cross_attn.v = Linear{};
        for (Linear* x : {&l.self_attn.qkv, &l.self_attn.o, &l.cross_attn.q, &l.cross_attn.kv, &l.cross_attn.o, &l.ff.wi,
                          &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo}) {
            pack(*x, false);
        }
    }
    // A tied head is also the embedding table, which lookups still read.
    pack(head_, config_.tie_word_embeddings);
    if (!config_.tie_word_embeddings) lm_head_ = at::Tensor();
}

int64_t T5Network::weight_bytes() const {
    auto tensor = [](const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; };
    // Fused tensors own the storage; the q/k/v views of a fused tensor are not counted again.
    auto attn = [&](const AttentionWeights& a) {
        int64_t b = a.o.bytes() + tensor(a.relative_bias);
        if (a.qkv.ready()) b += a.qkv.bytes();
        else if (a.kv.ready()) b += a.q.bytes() + a.kv.bytes();
        else b += a.q.bytes() + a.k.bytes() + a.v.bytes();
        return b;
    };
    auto ff = [&](const FeedForwardWeights& f) { return f.wi.bytes() + f.wi_0.bytes() + f.wi_1.bytes() + f.wo.bytes(); };
    // The head shares the embedding's storage when tied and unquantised.
    const bool head_is_embedding = head_.weight.defined() && head_.weight.is_same(shared_);
    const int64_t head_bytes = head_.bytes() - (head_is_embedding ? tensor(shared_) : 0);  // packed form only
    int64_t total = tensor(shared_) + tensor(shared_int8_) + tensor(shared_scale_) + head_bytes + tensor(enc_final_ln_) + tensor(dec_final_ln_);
    for (const auto& l : encoder_) total += attn(l.attn) + ff(l.ff) + tensor(l.ln_attn) + tensor(l.ln_ff);
    for (const auto& l : decoder_) total += attn(l.self_attn) + attn(l.cross_attn) + ff(l.ff) + tensor(l.ln_self) + tensor(l.ln_cross) + tensor(l.ln_ff);
    return total;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

at::Tensor T5Network::dropout(const at::Tensor& x) const {
    return (training_ && dropout_ > 0) ? at::dropout(x, dropout_, true) : x;
}

at::Tensor T5Network::clamp_fp16(const at::Tensor& x) const {
    if (x.scalar_type() != at::kHalf) return x;
    // transformers clamps fp16 activations just below the format's max so inf never appears.
    const double limit = 65504.0 - 1000.0;
    return at::clamp(x, -limit, limit);
}

bool T5Network::use_fused_cpu_kernels(const at::Tensor& x) const {
    return fused_kernels_enabled() && !training_ && !at::GradMode::is_enabled() && x.is_cpu() &&
           (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
}

bool T5Network::fused_single_query(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const {
    const at::ScalarType t = q.scalar_type();
    return q.size(2) == 1 && use_fused_cpu_kernels(q) && k.scalar_type() == t && v.scalar_type() == t && bias.scalar_type() == t &&
           k.stride(3) == 1 && v.stride(3) == 1 && q.stride(3) == 1;
}

at::Tensor T5Network::attend_merged(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const {
    if (fused_single_query(q, k, v, bias)) {
        return q.scalar_type() == at::kFloat ? single_query_attention_cpu_f32(q, k, v, bias)
                                             : single_query_attention_cpu_bf16(q, k, v, bias);
    }
    return merge_heads(attend(q, k, v, bias));
}

at::Tensor T5Network::attend_cross(const at::Tensor& q, const DecoderState& st, size_t layer) const {
    const at::Tensor &k = st.cross_k[layer], &v = st.cross_v[layer];
    const int64_t r = st.cross_share;
    if (r == 1 || fused_single_query(q, k, v, st.cross_bias)) return attend_merged(q, k, v, st.cross_bias);
    // Shared K/V, op by op: an input's r rows become r queries against its one K/V
    // ([B/r, H, r, dk]), then back to one row each.
    const int64_t B = q.size(0), H = q.size(1), dk = q.size(3);
    const at::Tensor grouped = q.reshape({B / r, r, H, dk}).permute({0, 2, 1, 3});
    return attend(grouped, k, v, st.cross_bias).permute({0, 2, 1, 3}).reshape({B, 1, H * dk});
}

at::Tensor T5Network::rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
    if (use_fused_cpu_kernels(x) && weight.scalar_type() == x.scalar_type()) {
        return x.scalar_type() == at::kFloat ? rms_norm_cpu_f32(x, weight, config_.layer_norm_epsilon)
                                             : rms_norm_cpu_bf16(x, weight, config_.layer_norm_epsilon);
    }
    at::Tensor variance = x.to(at::kFloat).pow(2).mean(-1, true);
    at::Tensor h = x * at::rsqrt(variance + config_.layer_norm_epsilon);
    if (weight.scalar_type() == at::kHalf || weight.scalar_type() == at::kBFloat16) h = h.to(weight.scalar_type());
    return weight * h;
}

at::Tensor T5Network::feed_forward(const FeedForwardWeights& w, const at::Tensor& x) const {
    at::Tensor h = config_.is_gated_act ? activation(config_.dense_act_fn, w.wi_0(x)) * w.wi_1(x)
                                        : activation(config_.dense_act_fn, w.wi(x));
    h = dropout(h);
    // fp16: like transformers (_keep_in_fp32_modules = ["wo"]) the output projection runs in fp32.
    if (h.scalar_type() == at::kHalf) return w.wo(h.to(at::kFloat)).to(at::kHalf);
    return w.wo(h);
}

at::Tensor T5Network::split_heads(const at::Tensor& x) const {
    return x.view({x.size(0), x.size(1), config_.num_heads, config_.d_kv}).transpose(1, 2);
}

at::Tensor T5Network::merge_heads(const at::Tensor& x) const {
    return x.transpose(1, 2).reshape({x.size(0), x.size(2), config_.inner_dim()});
}

std::array<at::Tensor, 3> T5Network::project_qkv(const AttentionWeights& a, const at::Tensor& x) const {
    if (a.qkv.ready()) {
        auto parts = a.qkv(x).chunk(3, -1);
        return {split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2])};
    }
    return {split_heads(a.q(x)), split_heads(a.k(x)), split_heads(a.v(x))};
}

at::Tensor T5Network::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const {
    at::Tensor scores = at::matmul(q, k.transpose(-1, -2));  // T5 does not scale by 1/sqrt(d_kv)
    scores = scores + bias;
    at::Tensor weights = at::softmax(scores.to(at::kFloat), -1).to(scores.scalar_type());
    weights = dropout(weights);
    return at::matmul(weights, v);
}

at::Tensor T5Network::mask_to_bias(const at::Tensor& attention_mask) const {
    const double min = dtype_ == at::kHalf ? -65504.0 : dtype_ == at::kBFloat16 ? -3.3895313892515355e38 : std::numeric_limits<float>::lowest();
    at::Tensor m = attention_mask.to(dtype_).unsqueeze(1).unsqueeze(1);
    return (1.0 - m) * min;
}

at::Tensor T5Network::relative_position_bucket(const at::Tensor& relative_position, bool bidirectional, int64_t num_buckets,
                                               int64_t max_distance) {
    at::Tensor buckets = at::zeros_like(relative_position);
    at::Tensor rp = relative_position;
    if (bidirectional) {
        num_buckets /= 2;
        buckets = buckets + (rp > 0).to(at::kLong) * num_buckets;
        rp = at::abs(rp);
    } else {
        rp = -at::min(rp, at::zeros_like(rp));
    }
    const int64_t max_exact = num_buckets / 2;
    at::Tensor is_small = rp < max_exact;
    at::Tensor large = max_exact + (at::log(rp.to(at::kFloat) / max_exact) / std::log(static_cast<double>(max_distance) / max_exact) *
                                    (num_buckets - max_exact))
                                       .to(at::kLong);
    large = at::min(large, at::full_like(large, num_buckets - 1));
    return buckets + at::where(is_small, rp, large);
}

at::Tensor T5Network::position_bias(const at::Tensor& bias_weight, int64_t query_len, int64_t key_len, bool bidirectional) const {
    auto opts = at::TensorOptions().dtype(at::kLong).device(bias_weight.device());
    at::Tensor context = at::arange(query_len, opts).unsqueeze(1);
    at::Tensor memory = at::arange(key_len, opts).unsqueeze(0);
    at::Tensor bucket = relative_position_bucket(memory - context, bidirectional, config_.relative_attention_num_buckets,
                                                 config_.relative_attention_max_distance);
    return at::embedding(bias_weight, bucket).permute({2, 0, 1}).unsqueeze(0);  // [1, H, q, k]
}

// ---------------------------------------------------------------------------------------------
// Gradient checkpointing: a custom autograd function per block. Forward runs the block without
// building a graph and saves only its inputs; backward restores the RNG and autocast state of the
// forward pass, re-runs the block with grad and differentiates it (torch.utils.checkpoint's
// non-reentrant idea, written as a reentrant C++ Function).

namespace {

std::vector<at::Tensor> linear_weights(std::initializer_list<const Linear*> ls) {
    std::vector<at::Tensor> out;
    for (const Linear* l : ls)
        if (l->weight.defined()) out.push_back(l->weight);
    return out;
}

std::vector<at::Tensor> block_params(const EncoderLayer& l) {
    auto w = linear_weights({&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.ff.wi, &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo});
    w.push_back(l.ln_attn);
    w.push_back(l.ln_ff);
    return w;
}

std::vector<at::Tensor> block_params(const DecoderLayer& l) {
    auto w = linear_weights({&l.self_attn.q, &l.self_attn.k, &l.self_attn.v, &l.self_attn.o, &l.cross_attn.q, &l.cross_attn.k,
                             &l.cross_attn.v, &l.cross_attn.o, &l.ff.wi, &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo});
    for (const at::Tensor& t : {l.ln_self, l.ln_cross, l.ln_ff}) w.push_back(t);
    return w;
}

struct AutocastState {
    bool cpu = false, cuda = false;
    at::ScalarType cpu_dtype = at::kBFloat16, cuda_dtype = at::kHalf;
    static AutocastState current() {
        return {at::autocast::is_autocast_enabled(at::kCPU), at::autocast::is_autocast_enabled(at::kCUDA),
                at::autocast::get_autocast_dtype(at::kCPU), at::autocast::get_autocast_dtype(at::kCUDA)};
    }
    void apply() const {
        at::autocast::set_autocast_enabled(at::kCPU, cpu);
        at::autocast::set_autocast_enabled(at::kCUDA, cuda);
        at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
        at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype);
    }
};

at::Generator default_generator(at::Device device) {
    return at::globalContext().defaultGenerator(device.is_cuda() ? at::Device(at::kCUDA, device.index() < 0 ? 0 : device.index()) : at::Device(at::kCPU));
}

}  // namespace

bool T5Network::checkpoint_blocks() const { return checkpointing_ && training_ && at::GradMode::is_enabled(); }

struct BlockCheckpoint : torch::autograd::Function<BlockCheckpoint> {
    static at::Tensor run(const T5Network& net, int64_t index, bool decoder, const std::vector<at::Tensor>& a) {
        if (decoder) return net.decoder_layer(net.decoder_[index], a[0], a[1], a[2], a[3]);
        return net.encoder_layer(net.encoder_[index], a[0], a[1]);
    }

    static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::TensorList acts_in,
                                                  at::TensorList params, int64_t net_ptr, int64_t index, bool decoder) {
        const std::vector<at::Tensor> acts = acts_in.vec();
        const auto* net = reinterpret_cast<const T5Network*>(net_ptr);
        ctx->saved_data["net"] = net_ptr;
        ctx->saved_data["index"] = index;
        ctx->saved_data["decoder"] = decoder;
        ctx->saved_data["acts"] = static_cast<int64_t>(acts.size());
        const AutocastState ac = AutocastState::current();
        ctx->saved_data["ac_cpu"] = ac.cpu;
        ctx->saved_data["ac_cuda"] = ac.cuda;
        ctx->saved_data["ac_cpu_dtype"] = static_cast<int64_t>(ac.cpu_dtype);
        ctx->saved_data["ac_cuda_dtype"] = static_cast<int64_t>(ac.cuda_dtype);
        if (net->training_ && net->dropout_ > 0) {  // replay the same dropout masks in backward
            at::Generator gen = default_generator(net->device_);
            std::lock_guard<std::mutex> lock(gen.mutex());
            ctx->saved_data["rng"] = gen.get_state();
        }
        std::vector<at::Tensor> saved = acts;
        saved.insert(saved.end(), params.begin(), params.end());
        ctx->save_for_backward(saved);
        return {run(*net, index, decoder, acts)};
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grad_out) {
        const auto* net = reinterpret_cast<const T5Network*>(ctx->saved_data["net"].toInt());
        const int64_t index = ctx->saved_data["index"].toInt();
        const bool decoder = ctx->saved_data["decoder"].toBool();
        const auto n_acts = static_cast<size_t>(ctx->saved_data["acts"].toInt());
        std::vector<at::Tensor> saved = ctx->get_saved_variables();
        std::vector<at::Tensor> acts, targets;
        std::vector<int> target_slot;  // index into `saved` of each target
        for (size_t i = 0; i < saved.size(); ++i) {
            const bool needs = ctx->needs_input_grad(i) && saved[i].defined();
            if (i < n_acts) {
                at::Tensor a = saved[i].defined() ? saved[i].detach() : saved[i];
                if (needs) a.requires_grad_(true);
                acts.push_back(a);
                if (needs) targets.push_back(a), target_slot.push_back(static_cast<int>(i));
            } else if (needs) {
                targets.push_back(saved[i]), target_slot.push_back(static_cast<int>(i));
            }
        }
        at::Tensor out;
        {
            // Fork the RNG: replay the forward's state, then put the current one back.
            at::Generator gen = default_generator(net->device_);
            at::Tensor now;
            const bool replay = ctx->saved_data.count("rng") > 0;
            if (replay) {
                std::lock_guard<std::mutex> lock(gen.mutex());
                now = gen.get_state();
                gen.set_state(ctx->saved_data["rng"].toTensor());
            }
            const AutocastState before = AutocastState::current();
            AutocastState{ctx->saved_data["ac_cpu"].toBool(), ctx->saved_data["ac_cuda"].toBool(),
                          static_cast<at::ScalarType>(ctx->saved_data["ac_cpu_dtype"].toInt()),
                          static_cast<at::ScalarType>(ctx->saved_data["ac_cuda_dtype"].toInt())}
                .apply();
            {
                at::AutoGradMode grad(true);
                out = run(*net, index, decoder, acts);
            }
            before.apply();
            if (replay) {
                std::lock_guard<std::mutex> lock(gen.mutex());
                gen.set_state(now);
            }
        }
        torch::autograd::variable_list result(saved.size() + 3);
        if (!targets.empty()) {
            auto grads = torch::autograd::grad({out}, targets, {grad_out[0]}, /*retain_graph=*/false, /*create_graph=*/false,
                                               /*allow_unused=*/true);
            for (size_t k = 0; k < grads.size(); ++k) result[target_slot[k]] = grads[k];
        }
        return result;
    }
};

// ---------------------------------------------------------------------------------------------
// Encoder / decoder (whole sequences)

at::Tensor T5Network::encoder_layer(const EncoderLayer& l, const at::Tensor& h_in, const at::Tensor& bias) const {
    at::Tensor h = h_in;
    auto [q, k, v] = project_qkv(l.attn, rms_norm(h, l.ln_attn));
    h = clamp_fp16(h + dropout(l.attn.o(merge_heads(attend(q, k, v, bias)))));
    h = clamp_fp16(h + dropout(feed_forward(l.ff, rms_norm(h, l.ln_ff))));
    return h;
}

at::Tensor T5Network::encode(const at::Tensor& input_ids, const at::Tensor& attention_mask) const {
    const int64_t S = input_ids.size(1);
    at::Tensor h = dropout(embed(input_ids));
    at::Tensor bias = position_bias(encoder_[0].attn.relative_bias, S, S, true) + mask_to_bias(attention_mask);
    for (size_t i = 0; i < encoder_.size(); ++i) {
        if (checkpoint_blocks()) {
            // TensorList (not std::vector) so that autograd sees every element as an input.
            const std::vector<at::Tensor> acts{h, bias}, weights = block_params(encoder_[i]);
            h = BlockCheckpoint::apply(at::TensorList(acts), at::TensorList(weights), reinterpret_cast<int64_t>(this),
                                       static_cast<int64_t>(i), false)[0];
        } else {
            h = encoder_layer(encoder_[i], h, bias);
        }
    }
    return dropout(rms_norm(h, enc_final_ln_));
}

at::Tensor T5Network::decoder_layer(const DecoderLayer& l, const at::Tensor& h_in, const at::Tensor& self_bias,
                                    const at::Tensor& enc, const at::Tensor& cross_bias) const {
    at::Tensor h = h_in;
    auto [q, k, v] = project_qkv(l.self_attn, rms_norm(h, l.ln_self));
    h = clamp_fp16(h + dropout(l.self_attn.o(merge_heads(attend(q, k, v, self_bias)))));
    at::Tensor cq = split_heads(l.cross_attn.q(rms_norm(h, l.ln_cross)));
    at::Tensor ck, cv;
    if (l.cross_attn.kv.ready()) {
        auto kv = l.cross_attn.kv(enc).chunk(2, -1);
        ck = split_heads(kv[0]), cv = split_heads(kv[1]);
    } else {
        ck = split_heads(l.cross_attn.k(enc)), cv = split_heads(l.cross_attn.v(enc));
    }
    h = clamp_fp16(h + dropout(l.cross_attn.o(merge_heads(attend(cq, ck, cv, cross_bias)))));
    h = clamp_fp16(h + dropout(feed_forward(l.ff, rms_norm(h, l.ln_ff))));
    return h;
}

at::Tensor T5Network::decode(const at::Tensor& decoder_input_ids, const at::Tensor& encoder_hidden,
                             const at::Tensor& attention_mask) const {
    const int64_t T = decoder_input_ids.size(1);
    at::Tensor h = dropout(embed(decoder_input_ids));
    at::Tensor causal = at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(h.device())).triu(1);
    const double min = dtype_ == at::kHalf ? -65504.0 : dtype_ == at::kBFloat16 ? -3.3895313892515355e38 : std::numeric_limits<float>::lowest();
    at::Tensor causal_bias = at::zeros({T, T}, h.options()).masked_fill(causal, min);
    at::Tensor self_bias = position_bias(decoder_[0].self_attn.relative_bias, T, T, false) + causal_bias;
    at::Tensor cross_bias = mask_to_bias(attention_mask);
    for (size_t i = 0; i < decoder_.size(); ++i) {
        if (checkpoint_blocks()) {
            const std::vector<at::Tensor> acts{h, self_bias, encoder_hidden, cross_bias}, weights = block_params(decoder_[i]);
            h = BlockCheckpoint::apply(at::TensorList(acts), at::TensorList(weights), reinterpret_cast<int64_t>(this),
                                       static_cast<int64_t>(i), true)[0];
        } else {
            h = decoder_layer(decoder_[i], h, self_bias, encoder_hidden, cross_bias);
        }
    }
    return dropout(rms_norm(h, dec_final_ln_));
}

at::Tensor T5Network::lm_logits(const at::Tensor& decoder_hidden) const {
    at::Tensor h = decoder_hidden;
    if (config_.tie_word_embeddings) h = h * std::pow(static_cast<double>(config_.d_model), -0.5);
    return head_(h).to(at::kFloat);
}

at::Tensor T5Network::loss(const at::Tensor& logits, const at::Tensor& labels) {
    return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}).to(at::kFloat), labels.reshape({-1}), {},
                                  at::Reduction::Mean, -100);
}

at::Tensor T5Network::shift_right(const at::Tensor& labels) const {
    at::Tensor shifted = at::full_like(labels, config_.decoder_start_token_id);
    shifted.narrow(1, 1, labels.size(1) - 1).copy_(labels.narrow(1, 0, labels.size(1) - 1));
    return shifted.masked_fill(shifted == -100, config_.pad_token_id);
}

// ---------------------------------------------------------------------------------------------
// Incremental decoding

DecoderState T5Network::start_decoding(const at::Tensor& encoder_hidden, const at::Tensor& attention_mask, int64_t capacity,
                                       int64_t rows_per_input) const {
    // Cross-attention K/V are projected once per input and shared by its beams/candidates (not
    // repeated: t5-small, 8 inputs x 4 beams, 32 tokens: 6 MB shared instead of 25 MB of copies).
    DecoderState st;
    const int64_t B = encoder_hidden.size(0) * rows_per_input;
    st.capacity = capacity;
    st.cross_share = rows_per_input;
    st.cross_bias = mask_to_bias(attention_mask);
    st.self_bias_table = position_bias(decoder_[0].self_attn.relative_bias, capacity, capacity, false);
    auto opts = encoder_hidden.options();
    for (const auto& l : decoder_) {
        st.self_k.push_back(at::empty({B, config_.num_heads, capacity, config_.d_kv}, opts));
        st.self_v.push_back(at::empty({B, config_.num_heads, capacity, config_.d_kv}, opts));
        if (l.cross_attn.kv.ready()) {
            auto kv = l.cross_attn.kv(encoder_hidden).chunk(2, -1);
            st.cross_k.push_back(split_heads(kv[0]).contiguous());
            st.cross_v.push_back(split_heads(kv[1]).contiguous());
        } else {
            st.cross_k.push_back(split_heads(l.cross_attn.k(encoder_hidden)).contiguous());
            st.cross_v.push_back(split_heads(l.cross_attn.v(encoder_hidden)).contiguous());
        }
    }
    return st;
}

namespace {

// cache[:, :, t] = x for x [B, H, 1, dk] (a strided view into the fused projection's output).
// On the CPU one memcpy per (row, head) instead of a TensorIterator copy_: t5s_profile charged
// these 12 calls per step 1.1 ms at batch 32 (t5-small), although copy_ alone took 2.7 us per
// call in a microbenchmark; the memcpy loop is no slower either way.
void write_cache_position(at::Tensor& cache, int64_t t, const at::Tensor& x) {
    const int64_t B = cache.size(0), H = cache.size(1), cap = cache.size(2), dk = cache.size(3);
    if (!cache.is_cpu() || !cache.is_contiguous() || x.scalar_type() != cache.scalar_type() || x.stride(3) != 1 ||
        x.size(0) != B || x.size(1) != H || x.size(2) != 1 || x.size(3) != dk) {
        cache.narrow(2, t, 1).copy_(x);
        return;
    }
    const size_t elem = cache.element_size(), bytes = static_cast<size_t>(dk) * elem;
    char* dst = static_cast<char*>(cache.data_ptr());
    const char* src = static_cast<const char*>(x.data_ptr());
    const int64_t sb = x.stride(0), sh = x.stride(1);
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < H; ++h) {
            std::memcpy(dst + (((b * H + h) * cap + t) * dk) * elem, src + (b * sb + h * sh) * elem, bytes);
        }
    }
}

}  // namespace

at::Tensor T5Network::decode_step(DecoderState& st, const at::Tensor& tokens) const {
    const int64_t t = st.length;
    if (t >= st.capacity) throw Error(ErrorCode::Internal, "decoder cache capacity exceeded");
    at::Tensor h = embed(tokens.unsqueeze(1));  // [B, 1, d]
    at::Tensor self_bias = st.self_bias_table.narrow(2, t, 1).narrow(3, 0, t + 1);
    for (size_t i = 0; i < decoder_.size(); ++i) {
        const DecoderLayer& l = decoder_[i];
        auto [q, k, v] = project_qkv(l.self_attn, rms_norm(h, l.ln_self));
        write_cache_position(st.self_k[i], t, k);
        write_cache_position(st.self_v[i], t, v);
        at::Tensor keys = st.self_k[i].narrow(2, 0, t + 1), values = st.self_v[i].narrow(2, 0, t + 1);
        h = clamp_fp16(h + l.self_attn.o(attend_merged(q, keys, values, self_bias)));
        at::Tensor cq = split_heads(l.cross_attn.q(rms_norm(h, l.ln_cross)));
        h = clamp_fp16(h + l.cross_attn.o(attend_cross(cq, st, i)));
        h = clamp_fp16(h + feed_forward(l.ff, rms_norm(h, l.ln_ff)));
    }
    st.length = t + 1;
    return lm_logits(rms_norm(h, dec_final_ln_)).squeeze(1);
}

namespace {

bool gather_on_host(const DecoderState& st, const at::Tensor& rows) {
    return rows.is_cpu() && !st.self_k.empty() && st.self_k[0].is_cpu();
}

// `rows` as host indices, checked against the cache's current batch.
at::Tensor host_rows(const DecoderState& st, const at::Tensor& rows) {
    at::Tensor idx = rows.to(at::kLong).contiguous();
    const int64_t* r = idx.data_ptr<int64_t>();
    for (int64_t b = 0; b < idx.numel(); ++b) {
        if (r[b] < 0 || r[b] >= st.self_k[0].size(0)) throw Error(ErrorCode::Internal, "decoder cache row out of range");
    }
    return idx;
}

// dst[r, :, :len] = src[rows[r], :, :len] for contiguous CPU caches [B, H, capacity, d_kv]: one
// memcpy per (row, head) of the filled part, instead of index_select into a temporary + copy_.
void gather_cache_rows(const at::Tensor& src, at::Tensor& dst, const at::Tensor& idx, int64_t len) {
    const int64_t* r = idx.data_ptr<int64_t>();
    const int64_t B = dst.size(0), H = src.size(1), head_bytes = src.size(2) * src.size(3) * src.element_size();
    const int64_t row_bytes = H * head_bytes, chunk = len * src.size(3) * src.element_size();
    const char* s = static_cast<const char*>(src.data_ptr());
    char* d = static_cast<char*>(dst.data_ptr());
    at::parallel_for(0, B * H, 64, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / H, h = i % H;
            std::memcpy(d + b * row_bytes + h * head_bytes, s + r[b] * row_bytes + h * head_bytes, chunk);
        }
    });
}

}  // namespace

void T5Network::select_rows(DecoderState& st, const at::Tensor& rows) {
    // Only the filled part of the self-attention cache is gathered (not its whole capacity).
    const int64_t len = st.length;
    const at::Tensor idx = gather_on_host(st, rows) ? host_rows(st, rows) : at::Tensor();
    for (auto* list : {&st.self_k, &st.self_v}) {
        for (auto& t : *list) {
            at::Tensor fresh = at::empty({rows.size(0), t.size(1), t.size(2), t.size(3)}, t.options());
            if (len > 0 && idx.defined() && t.is_contiguous()) gather_cache_rows(t, fresh, idx, len);
            else if (len > 0) fresh.narrow(2, 0, len).copy_(t.narrow(2, 0, len).index_select(0, rows));
            t = fresh;
        }
    }
    st.spare = at::Tensor();
    select_encoder_rows(st, rows);
}

void T5Network::reorder_beams(DecoderState& st, const at::Tensor& rows) {
    // Beams of one input share its encoder output, so cross-attention K/V need no reordering.
    const int64_t len = st.length;
    const at::Tensor idx = gather_on_host(st, rows) ? host_rows(st, rows) : at::Tensor();
    for (auto* list : {&st.self_k, &st.self_v}) {
        for (auto& t : *list) {
            if (idx.defined() && t.is_contiguous()) {
                // Gather into the spare buffer and swap: every cache tensor has the same shape, so
                // one spare serves them all (the previous tensor becomes the next spare).
                if (!st.spare.defined() || !st.spare.sizes().equals(t.sizes()) || st.spare.dtype() != t.dtype()) {
                    st.spare = at::empty_like(t);
                }
                gather_cache_rows(t, st.spare, idx, len);
                std::swap(t, st.spare);
                continue;
            }
            at::Tensor gathered = t.narrow(2, 0, len).index_select(0, rows);
            t.narrow(2, 0, len).copy_(gathered);
        }
    }
}

void T5Network::select_encoder_rows(DecoderState& st, const at::Tensor& rows) {
    // Shared K/V: a kept row reads its input's entry; after this every row has its own.
    const at::Tensor source = st.cross_share > 1 ? at::div(rows, st.cross_share, "floor") : rows;
    for (auto* list : {&st.cross_k, &st.cross_v}) {
        for (auto& t : *list) t = t.index_select(0, source);
    }
    st.cross_bias = st.cross_bias.index_select(0, source);
    st.cross_share = 1;
}

}  // namespace t5s
