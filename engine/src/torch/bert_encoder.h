#pragma once
// The BERT / XLM-RoBERTa encoder (post-LayerNorm, exact-erf GELU, absolute positions, token type
// 0) as transformers' BertModel / XLMRobertaModel compute last_hidden_state, inference only.
// Matmuls go through Linear, so fp32 / bf16 / int8 on the CPU and CUDA use the T5 engine's kernels.
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "embed/embedder_config.h"
#include "torch/linear.h"

namespace t5s {

struct AffineLinear {
    Linear linear;
    at::Tensor bias;  // undefined when the layer has none
    at::Tensor operator()(const at::Tensor& x) const;
};

class BertEncoder {
public:
    // `params`: HF names without the "bert." / "roberta." prefix, already on the device in the
    // compute dtype. Throws t5s::Error naming `weights_file` and the tensor on a missing tensor or
    // a shape mismatch.
    BertEncoder(const embed_detail::EncoderConfig& config, std::map<std::string, at::Tensor> params,
                const std::string& weights_file);

    // ids, mask: int64 [B, S] (mask 1 = token). Returns the last hidden state [B, S, hidden].
    at::Tensor forward(const at::Tensor& ids, const at::Tensor& mask) const;

    void quantize_int8(const KernelPolicy& kernels);
    int64_t weight_bytes() const;
    std::string matmul_kernel() const;
    const embed_detail::EncoderConfig& config() const { return config_; }

private:
    struct Layer {
        AffineLinear qkv, attn_out, ffn_in, ffn_out;
        at::Tensor ln1_w, ln1_b, ln2_w, ln2_b;
    };
    at::Tensor layer_forward(const Layer& l, const at::Tensor& x, const at::Tensor& attn_bias) const;
    at::Tensor position_ids(const at::Tensor& ids) const;

    embed_detail::EncoderConfig config_;
    at::Tensor word_, position_, token_type_, emb_ln_w_, emb_ln_b_;
    std::vector<Layer> layers_;
};

// Expected shape of every encoder tensor this config implies (pooler weights are not used).
std::vector<std::pair<std::string, std::vector<int64_t>>> bert_parameter_shapes(const embed_detail::EncoderConfig& config);

}  // namespace t5s
