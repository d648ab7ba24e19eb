#include "torch/bert_encoder.h"

#include <cmath>

#include "t5s/error.h"

namespace t5s {

at::Tensor AffineLinear::operator()(const at::Tensor& x) const {
    at::Tensor y = linear(x);
    return bias.defined() ? y.add_(bias.to(y.scalar_type())) : y;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> bert_parameter_shapes(const embed_detail::EncoderConfig& c) {
    const int64_t h = c.hidden_size, f = c.intermediate_size;
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"embeddings.word_embeddings.weight", {c.vocab_size, h}},
        {"embeddings.position_embeddings.weight", {c.max_position_embeddings, h}},
        {"embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}},
        {"embeddings.LayerNorm.weight", {h}},
        {"embeddings.LayerNorm.bias", {h}},
    };
    for (int i = 0; i < c.num_layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
            shapes.push_back({p + n + ".weight", {h, h}});
            shapes.push_back({p + n + ".bias", {h}});
        }
        shapes.push_back({p + "attention.output.LayerNorm.weight", {h}});
        shapes.push_back({p + "attention.output.LayerNorm.bias", {h}});
        shapes.push_back({p + "intermediate.dense.weight", {f, h}});
        shapes.push_back({p + "intermediate.dense.bias", {f}});
        shapes.push_back({p + "output.dense.weight", {h, f}});
        shapes.push_back({p + "output.dense.bias", {h}});
        shapes.push_back({p + "output.LayerNorm.weight", {h}});
        shapes.push_back({p + "output.LayerNorm.bias", {h}});
    }
    return shapes;
}

BertEncoder::BertEncoder(const embed_detail::EncoderConfig& config, std::map<std::string, at::Tensor> params,
                         const std::string& weights_file)
    : config_(config) {
    for (const auto& [name, shape] : bert_parameter_shapes(config)) {
        auto it = params.find(name);
        if (it == params.end()) throw Error(ErrorCode::CorruptFile, weights_file + ": missing tensor '" + name + "'");
        if (it->second.sizes() != at::IntArrayRef(shape)) {
            throw Error(ErrorCode::CorruptFile, weights_file + ": tensor '" + name + "' has shape " +
                                                    c10::str(it->second.sizes()) + ", config.json implies " +
                                                    c10::str(at::IntArrayRef(shape)));
        }
    }
    auto take = [&](const std::string& n) { return params.at(n); };
    word_ = take("embeddings.word_embeddings.weight");
    position_ = take("embeddings.position_embeddings.weight");
    token_type_ = take("embeddings.token_type_embeddings.weight");
    emb_ln_w_ = take("embeddings.LayerNorm.weight");
    emb_ln_b_ = take("embeddings.LayerNorm.bias");
    for (int i = 0; i < config.num_layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        auto affine = [&](const std::string& n) { return AffineLinear{Linear(take(p + n + ".weight")), take(p + n + ".bias")}; };
        Layer l;
        // One matmul for query, key and value.
        l.qkv = AffineLinear{Linear(at::cat({take(p + "attention.self.query.weight"), take(p + "attention.self.key.weight"),
                                             take(p + "attention.self.value.weight")})),
                             at::cat({take(p + "attention.self.query.bias"), take(p + "attention.self.key.bias"),
                                      take(p + "attention.self.value.bias")})};
        l.attn_out = affine("attention.output.dense");
        l.ffn_in = affine("intermediate.dense");
        l.ffn_out = affine("output.dense");
        l.ln1_w = take(p + "attention.output.LayerNorm.weight");
        l.ln1_b = take(p + "attention.output.LayerNorm.bias");
        l.ln2_w = take(p + "output.LayerNorm.weight");
        l.ln2_b = take(p + "output.LayerNorm.bias");
        layers_.push_back(std::move(l));
    }
}

// As transformers' create_position_ids_from_input_ids for XLM-R (padding keeps padding_idx),
// 0, 1, 2, ... for BERT.
at::Tensor BertEncoder::position_ids(const at::Tensor& ids) const {
    if (config_.position_offset == 0) {
        return at::arange(ids.size(1), ids.options()).unsqueeze(0).expand_as(ids);
    }
    at::Tensor not_pad = ids.ne(config_.pad_token_id).to(at::kLong);
    return at::cumsum(not_pad, 1).mul_(not_pad).add_(config_.pad_token_id);
}

at::Tensor BertEncoder::layer_forward(const Layer& l, const at::Tensor& x, const at::Tensor& attn_bias) const {
    const int64_t b = x.size(0), s = x.size(1), h = config_.hidden_size, heads = config_.num_heads;
    at::Tensor qkv = l.qkv(x).view({b, s, 3, heads, h / heads}).permute({2, 0, 3, 1, 4});
    at::Tensor ctx = at::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_bias.to(x.scalar_type()));
    ctx = ctx.transpose(1, 2).reshape({b, s, h});
    const double eps = config_.layer_norm_eps;
    at::Tensor a = at::layer_norm(l.attn_out(ctx).add_(x), {h}, l.ln1_w, l.ln1_b, eps);
    at::Tensor f = at::gelu(l.ffn_in(a));  // exact erf GELU ("gelu" in transformers)
    return at::layer_norm(l.ffn_out(f).add_(a), {h}, l.ln2_w, l.ln2_b, eps);
}

at::Tensor BertEncoder::forward(const at::Tensor& ids, const at::Tensor& mask) const {
    const int64_t max_pos = config_.max_position_embeddings;
    at::Tensor pos = position_ids(ids);
    if (pos.numel() > 0 && pos.max().item<int64_t>() >= max_pos) {
        throw Error(ErrorCode::InvalidArgument, "input of " + std::to_string(ids.size(1)) + " tokens exceeds the " +
                                                    std::to_string(max_pos) + " positions of " + config_.file.string());
    }
    at::Tensor x = at::embedding(word_, ids) + at::embedding(position_, pos) + token_type_[0];
    x = at::layer_norm(x, {config_.hidden_size}, emb_ln_w_, emb_ln_b_, config_.layer_norm_eps);
    // Additive mask [B, 1, 1, S]: 0 on tokens, the dtype's lowest value on padding (as transformers).
    at::Tensor attn_bias =
        (1.0 - mask.to(at::kFloat)).mul_(std::numeric_limits<float>::lowest()).view({ids.size(0), 1, 1, ids.size(1)});
    for (const Layer& l : layers_) x = layer_forward(l, x, attn_bias);
    return x;
}

void BertEncoder::quantize_int8(const KernelPolicy& kernels) {
    for (Layer& l : layers_)
        for (AffineLinear* a : {&l.qkv, &l.attn_out, &l.ffn_in, &l.ffn_out}) a->linear.quantize_int8(false, kernels);
}

int64_t BertEncoder::weight_bytes() const {
    int64_t n = 0;
    for (const at::Tensor& t : {word_, position_, token_type_, emb_ln_w_, emb_ln_b_}) n += t.nbytes();
    for (const Layer& l : layers_) {
        for (const AffineLinear* a : {&l.qkv, &l.attn_out, &l.ffn_in, &l.ffn_out}) n += a->linear.bytes() + a->bias.nbytes();
        for (const at::Tensor& t : {l.ln1_w, l.ln1_b, l.ln2_w, l.ln2_b}) n += t.nbytes();
    }
    return n;
}

std::string BertEncoder::matmul_kernel() const { return layers_.empty() ? "none" : layers_.front().ffn_in.linear.kernel_name(); }

}  // namespace t5s
