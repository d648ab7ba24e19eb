#include "torch/t5_network.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <limits>
#include <map>

#include "t5s/error.h"
#include "torch/cpu_kernels.h"
#include "torch/lean_backward.h"

namespace t5s {
namespace {

at::Tensor activation(const std::string& name, const at::Tensor& x) {
    if (name == "relu") return relu_keeping_mask(x);  // at::relu when no gradient is needed
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return at::gelu(x, "tanh");
    if (name == "gelu") return at::gelu(x);
    if (name == "silu" || name == "swish") return at::silu(x);
    if (name == "tanh") return at::tanh(x);
    if (name == "sigmoid") return at::sigmoid(x);
    throw Error(ErrorCode::Unsupported, "activation '" + name + "' is not supported");
}

int64_t tensor_bytes(const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layer lists

std::vector<Linear*> linear_layers(EncoderLayer& l) {
    return {&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.attn.qkv, &l.attn.kv, &l.ff.wi, &l.ff.wi_0, &l.ff.wi_1, &l.ff.wo};
}

std::vector<Linear*> linear_layers(DecoderLayer& l) {
    return {&l.self_attn.q,  &l.self_attn.k,  &l.self_attn.v,  &l.self_attn.o,  &l.self_attn.qkv,  &l.self_attn.kv,
            &l.cross_attn.q, &l.cross_attn.k, &l.cross_attn.v, &l.cross_attn.o, &l.cross_attn.qkv, &l.cross_attn.kv,
            &l.ff.wi,        &l.ff.wi_0,      &l.ff.wi_1,      &l.ff.wo};
}

std::vector<const Linear*> linear_layers(const EncoderLayer& l) {
    auto all = linear_layers(const_cast<EncoderLayer&>(l));
    return {all.begin(), all.end()};
}

std::vector<const Linear*> linear_layers(const DecoderLayer& l) {
    auto all = linear_layers(const_cast<DecoderLayer&>(l));
    return {all.begin(), all.end()};
}

// ---------------------------------------------------------------------------------------------
// Construction

std::string T5Network::matmul_kernel() const {
    const Linear& l = decoder_.empty() ? head_ : decoder_[0].ff.wo;  // present in every variant
    // A plain layer is named by the model's dtype (fp16 models keep wo in fp32, as transformers does).
    if (l.weight().defined()) return std::string("ATen linear (") + c10::toString(dtype_) + ")";
    return l.kernel_name();
}

T5Network::T5Network(ModelConfig config, std::map<std::string, at::Tensor> params)
    : config_(std::move(config)), params_(std::move(params)), kernels_(default_kernel_policy()) {
    const at::Tensor& shared = params_.at("shared.weight");
    dtype_ = shared.scalar_type();
    device_ = shared.device();
    bind_weights();
}

void T5Network::bind_weights() {
    auto p = [&](const std::string& name) { return params_.at(name); };
    auto lin = [&](const std::string& name) { return Linear(p(name)); };
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
    head_ = Linear(config_.tie_word_embeddings ? shared_ : p("lm_head.weight"));
    enc_final_ln_ = p("encoder.final_layer_norm.weight");
    dec_final_ln_ = p("decoder.final_layer_norm.weight");
    fused_ = false;
}

void T5Network::fuse_for_inference() { fuse_projections(FusedForm::Plain); }

void T5Network::fuse_projections(FusedForm form) {
    // One GEMM for q|k|v (and k|v of cross-attention) instead of three. The separate layers are
    // dropped (inference reaches them only through the fused one), so memory is not doubled.
    // Inference only from here on: the layer structs hold the weights, and without the name table's
    // references a part's pages (a file mapping) leave memory as soon as its fused layer is built.
    params_.clear();
    // Each fused layer takes its final form as it is built, so at most one fused fp32 copy lives
    // at a time (none for the panels, packed from the parts).
    auto fuse = [&](std::vector<Linear*> parts, bool encoder) {
        std::vector<at::Tensor> ws;
        for (Linear* p : parts) ws.push_back(p->weight());
        for (Linear* p : parts) *p = Linear{};
        if (form == FusedForm::Packed && (!encoder || encoder_packed())) return Linear::packed_from_parts(ws, kernels_);
        Linear fused(at::cat(ws, 0));
        if (form == FusedForm::Int8) fused.quantize_int8(false, kernels_);
        return fused;
    };
    for (auto& l : encoder_) l.attn.qkv = fuse({&l.attn.q, &l.attn.k, &l.attn.v}, true);
    for (auto& l : decoder_) {
        l.self_attn.qkv = fuse({&l.self_attn.q, &l.self_attn.k, &l.self_attn.v}, false);
        l.cross_attn.kv = fuse({&l.cross_attn.k, &l.cross_attn.v}, false);
    }
    fused_ = true;
}

bool T5Network::encoder_packed() const {
    // The encoder multiplies every token of its inputs at once, where re-packing per call costs
    // MKL little: only our panel kernel, faster than MKL at every row count measured (1 to 512),
    // takes the encoder over too (a request joining a served batch is encoded alone: ~30 rows).
    return dtype_ == at::kFloat && kernels_.fp32_gemm == Fp32Gemm::Panels;
}

void T5Network::quantize_int8() {
    // Quantise every matmul, the output head included: at batch 1 decoding is memory-bound and the
    // head alone is d_model x vocab.
    if (!fused_) fuse_projections(FusedForm::Int8);
    for (auto& l : encoder_)
        for (Linear* x : linear_layers(l)) x->quantize_int8(false, kernels_);
    for (auto& l : decoder_)
        for (Linear* x : linear_layers(l)) x->quantize_int8(false, kernels_);
    head_.quantize_int8(true, kernels_);
    // The embedding table too, with the head's per-row scheme (CTranslate2 does the same). A tied
    // head in our int8 layout already holds these rows (embed reads them there); otherwise the
    // table gets its own int8 copy. t5-small: 66 MB -> 16 MB or none; mT5-large: 1 GB -> 256 MB.
    if (!embedding_in_head()) {
        auto [q8, scale] = quantize_int8_rows(shared_.to(at::kFloat));
        shared_int8_ = q8;
        shared_scale_ = scale.to(dtype_);
    }
    shared_ = at::Tensor();
}

bool T5Network::embedding_in_head() const {
    if (!config_.tie_word_embeddings) return false;
    const auto& form = head_.form();
    return std::holds_alternative<Linear::Fp32Panels>(form) || std::holds_alternative<Linear::CpuInt8>(form) ||
           std::holds_alternative<Linear::Int8Rows>(form);
}

at::Tensor T5Network::embed(const at::Tensor& ids) const {
    if (embedding_in_head()) return head_.rows(ids);
    if (!shared_int8_.defined()) {
        at::Tensor e = at::embedding(shared_, ids);
        return e.scalar_type() == dtype_ ? e : e.to(dtype_);  // a frozen base held in a smaller dtype
    }
    return at::embedding(shared_int8_, ids).to(dtype_).mul_(at::embedding(shared_scale_, ids));
}

void T5Network::pack_for_cpu_decoding() {
    const bool packs = device_.is_cpu() && (dtype_ == at::kFloat || dtype_ == at::kBFloat16);
    // Fused layers are packed as they are fused: no fused fp32 copy at load beside the packed one.
    if (!fused_) fuse_projections(packs ? FusedForm::Packed : FusedForm::Plain);
    if (!packs) return;
    for (auto& l : decoder_)
        for (Linear* x : linear_layers(l)) x->pack_for_cpu(kernels_);
    if (encoder_packed()) {
        for (auto& l : encoder_)
            for (Linear* x : linear_layers(l)) x->pack_for_cpu(kernels_);
    }
    head_.pack_for_cpu(kernels_);
    if (embedding_in_head()) shared_ = at::Tensor();  // lookups read the head's panels: one copy of the table
}

int64_t T5Network::weight_bytes() const {
    auto block = [](const auto& layer) {
        int64_t b = 0;
        for (const Linear* x : linear_layers(layer)) b += x->bytes();
        return b;
    };
    // The head shares the embedding's storage when tied and still plain.
    const auto* frozen_head = std::get_if<Linear::Frozen>(&head_.form());
    const bool head_is_embedding =
        (head_.weight().defined() && head_.weight().is_same(shared_)) ||
        (frozen_head && (frozen_head->values.is_same(shared_) || frozen_head->values.is_same(shared_int8_)));
    const int64_t head_bytes = head_is_embedding ? 0 : head_.bytes();
    int64_t total = tensor_bytes(shared_) + tensor_bytes(shared_int8_) + tensor_bytes(shared_scale_) + head_bytes +
                    tensor_bytes(enc_final_ln_) + tensor_bytes(dec_final_ln_);
    for (const auto& l : encoder_) {
        total += block(l) + tensor_bytes(l.attn.relative_bias) + tensor_bytes(l.ln_attn) + tensor_bytes(l.ln_ff);
    }
    for (const auto& l : decoder_) {
        total += block(l) + tensor_bytes(l.self_attn.relative_bias) + tensor_bytes(l.cross_attn.relative_bias) +
                 tensor_bytes(l.ln_self) + tensor_bytes(l.ln_cross) + tensor_bytes(l.ln_ff);
    }
    return total;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

// native_dropout draws the same mask as at::dropout (one bernoulli per element from the same
// generator) but autograd keeps it as bools, not as a float noise tensor: a quarter of the bytes for
// every dropout site, which on the CPU is a large share of what training keeps for backward.
at::Tensor T5Network::dropout(const at::Tensor& x) const {
    return (training_ && dropout_ > 0) ? std::get<0>(at::native_dropout(x, dropout_, true)) : x;
}

at::Tensor T5Network::clamp_fp16(const at::Tensor& x) const {
    if (x.scalar_type() != at::kHalf) return x;
    // transformers clamps fp16 activations just below the format's max so inf never appears.
    const double limit = 65504.0 - 1000.0;
    return at::clamp(x, -limit, limit);
}

bool T5Network::use_fused_cpu_kernels(const at::Tensor& x) const {
    return kernels_.step != KernelIsa::Off && !training_ && !at::GradMode::is_enabled() && x.is_cpu() &&
           (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
}

bool T5Network::fused_single_query(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const {
    const at::ScalarType t = q.scalar_type();
    return q.size(2) == 1 && use_fused_cpu_kernels(q) && k.scalar_type() == t && v.scalar_type() == t &&
           bias.scalar_type() == t && k.stride(3) == 1 && v.stride(3) == 1 && q.stride(3) == 1;
}

at::Tensor T5Network::attend_merged(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const {
    if (fused_single_query(q, k, v, bias)) {
        return q.scalar_type() == at::kFloat ? single_query_attention_cpu_f32(q, k, v, bias, kernels_.step)
                                             : single_query_attention_cpu_bf16(q, k, v, bias, kernels_.step);
    }
    return merge_heads(attend(q, k, v, bias));
}

at::Tensor T5Network::attend_cross(const at::Tensor& q, const DecoderState& st, size_t layer) const {
    const at::Tensor &k = st.cross_k[layer], &v = st.cross_v[layer];
    if (st.cross_rows.defined()) {
        if (fused_single_query(q, k, v, st.cross_bias)) {
            return q.scalar_type() == at::kFloat
                       ? single_query_attention_cpu_f32(q, k, v, st.cross_bias, kernels_.step, st.cross_rows)
                       : single_query_attention_cpu_bf16(q, k, v, st.cross_bias, kernels_.step, st.cross_rows);
        }
        const at::Tensor rows = st.cross_rows.to(k.device());  // op by op: each row's own copy
        return attend_merged(q, k.index_select(0, rows), v.index_select(0, rows), st.cross_bias.index_select(0, rows));
    }
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
        return x.scalar_type() == at::kFloat ? rms_norm_cpu_f32(x, weight, config_.layer_norm_epsilon, kernels_.step)
                                             : rms_norm_cpu_bf16(x, weight, config_.layer_norm_epsilon, kernels_.step);
    }
    at::Tensor variance = x.to(at::kFloat).pow(2).mean(-1, true);
    at::Tensor h = x * at::rsqrt(variance + config_.layer_norm_epsilon);
    if (weight.scalar_type() == at::kHalf || weight.scalar_type() == at::kBFloat16) h = h.to(weight.scalar_type());
    return weight * h;
}

at::Tensor T5Network::feed_forward(const FeedForwardWeights& w, const at::Tensor& x) const {
    at::Tensor h = config_.is_gated_act ? activate(w.wi_0(x)) * w.wi_1(x) : activate(w.wi(x));
    h = dropout(h);
    // fp16: like transformers (_keep_in_fp32_modules = ["wo"]) the output projection runs in fp32.
    if (h.scalar_type() == at::kHalf) return w.wo(h.to(at::kFloat)).to(at::kHalf);
    return w.wo(h);
}

at::Tensor T5Network::activate(const at::Tensor& x) const { return activation(config_.dense_act_fn, x); }

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
    const double min = dtype_ == at::kHalf       ? -65504.0
                       : dtype_ == at::kBFloat16 ? -3.3895313892515355e38
                                                 : std::numeric_limits<float>::lowest();
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
    at::Tensor large = max_exact + (at::log(rp.to(at::kFloat) / max_exact) /
                                    std::log(static_cast<double>(max_distance) / max_exact) * (num_buckets - max_exact))
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
            h = checkpointed_block(i, false, {h, bias});
        } else {
            h = encoder_layer(encoder_[i], h, bias);
        }
    }
    return dropout(rms_norm(h, enc_final_ln_));
}

at::Tensor T5Network::attend_each(const AttentionWeights& a, const at::Tensor& x, const std::vector<int64_t>& lengths,
                                  const std::vector<at::Tensor>& biases) const {
    // One input at a time: ATen's batched products over several inputs do not give the bits of
    // one input's (checked by the scheduler tests' bitwise case).
    const std::vector<at::Tensor> projected =
        a.qkv.ready() ? std::vector<at::Tensor>{a.qkv(x)} : std::vector<at::Tensor>{a.q(x), a.k(x), a.v(x)};
    std::vector<at::Tensor> merged;
    int64_t offset = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
        std::vector<at::Tensor> own;  // this input's projections, as project_qkv would return them
        for (const auto& p : projected) own.push_back(p.narrow(1, offset, lengths[i]).contiguous());
        if (own.size() == 1) own = own[0].chunk(3, -1);
        merged.push_back(merge_heads(attend(split_heads(own[0]), split_heads(own[1]), split_heads(own[2]), biases[i])));
        offset += lengths[i];
    }
    return at::cat(merged, 1);
}

std::vector<at::Tensor> T5Network::encode_each(const std::vector<at::Tensor>& input_ids) const {
    if (input_ids.size() == 1) return {encode(input_ids[0], at::ones_like(input_ids[0]))};
    std::vector<int64_t> lengths;
    std::vector<at::Tensor> biases;
    std::map<int64_t, at::Tensor> bias_of_length;  // inputs of one length share their bias
    for (const auto& ids : input_ids) {
        const int64_t S = ids.size(1);
        lengths.push_back(S);
        at::Tensor& bias = bias_of_length[S];
        if (!bias.defined()) bias = position_bias(encoder_[0].attn.relative_bias, S, S, true) + mask_to_bias(at::ones_like(ids));
        biases.push_back(bias);
    }
    at::Tensor h = embed(at::cat(input_ids, 1));
    for (const auto& l : encoder_) {  // encoder_layer, attention per input
        h = clamp_fp16(h + l.attn.o(attend_each(l.attn, rms_norm(h, l.ln_attn), lengths, biases)));
        h = clamp_fp16(h + feed_forward(l.ff, rms_norm(h, l.ln_ff)));
    }
    const at::Tensor out = rms_norm(h, enc_final_ln_);
    std::vector<at::Tensor> each;
    int64_t offset = 0;
    for (int64_t S : lengths) {
        each.push_back(out.narrow(1, offset, S).contiguous());
        offset += S;
    }
    return each;
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
    const double min = dtype_ == at::kHalf       ? -65504.0
                       : dtype_ == at::kBFloat16 ? -3.3895313892515355e38
                                                 : std::numeric_limits<float>::lowest();
    at::Tensor causal_bias = at::zeros({T, T}, h.options()).masked_fill(causal, min);
    at::Tensor self_bias = position_bias(decoder_[0].self_attn.relative_bias, T, T, false) + causal_bias;
    at::Tensor cross_bias = mask_to_bias(attention_mask);
    for (size_t i = 0; i < decoder_.size(); ++i) {
        if (checkpoint_blocks()) {
            h = checkpointed_block(i, true, {h, self_bias, encoder_hidden, cross_bias});
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

}  // namespace t5s
