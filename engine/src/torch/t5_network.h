#pragma once
// The T5 encoder-decoder math, written to match transformers' modeling_t5 operation for
// operation (RMS norm in fp32, unscaled attention, relative position buckets computed once in the
// first layer and shared, softmax in fp32, tied head scaled by d_model^-0.5). The same code serves
// inference (KV cache, no autograd) and training (autograd through `params`, dropout).
#include <ATen/ATen.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "t5s/kernel_policy.h"
#include "t5s/model_config.h"
#include "torch/linear.h"
#include "torch/step_decoding.h"

namespace t5s {

// Inference fuses q|k|v (self-attention) and k|v (cross-attention) into one layer each; the
// separate q/k/v (cross: k/v) are then empty. Training keeps them separate.
struct AttentionWeights {
    Linear q, k, v, o;
    Linear qkv;                // fused q|k|v (inference, self-attention)
    Linear kv;                 // fused k|v (inference, cross-attention)
    at::Tensor relative_bias;  // [buckets, heads] in the first block only
};

struct FeedForwardWeights {
    Linear wi, wi_0, wi_1, wo;  // wi (relu) or wi_0/wi_1 (gated); the others stay empty
};

struct EncoderLayer {
    at::Tensor ln_attn, ln_ff;
    AttentionWeights attn;
    FeedForwardWeights ff;
};

struct DecoderLayer {
    at::Tensor ln_self, ln_cross, ln_ff;
    AttentionWeights self_attn, cross_attn;
    FeedForwardWeights ff;
};

// Every linear layer of a block, in one fixed order (empty ones included): the one list that
// conversions, byte counts and gradient checkpointing walk.
std::vector<const Linear*> linear_layers(const EncoderLayer& l);
std::vector<const Linear*> linear_layers(const DecoderLayer& l);
std::vector<Linear*> linear_layers(EncoderLayer& l);
std::vector<Linear*> linear_layers(DecoderLayer& l);

// Incremental decoding state: pre-allocated self-attention K/V (no concatenation per step),
// cross-attention K/V computed once, the decoder position-bias table computed once.
struct DecoderState {
    std::vector<at::Tensor> self_k, self_v;    // [B, H, capacity, d_kv]
    std::vector<at::Tensor> cross_k, cross_v;  // [B / cross_share, H, S, d_kv]
    at::Tensor cross_bias;                     // [B / cross_share, 1, 1, S] (0 or dtype min)
    int64_t cross_share = 1;                   // decoder rows per cross K/V row: an input's beams or
                                               // candidates share its encoder output's K/V
    at::Tensor cross_rows;                     // optional [B] long (host): the cross K/V (and cross_bias)
                                               // row of each decoder row, instead of cross_share (a
                                               // running batch keeps one K/V row per input)
    at::Tensor self_bias_table;                // [1, H, capacity, capacity]
    at::Tensor self_key_bias;                  // optional [B, 1, 1, capacity]: 0, or dtype min for the cache
                                               // positions before a row's first token (rows that joined a
                                               // running batch later; T5's position bias is relative, so a
                                               // row's numbers do not depend on where it starts)
    at::Tensor spare;                          // CPU beam reorder: gather target, swapped with a cache tensor
    int64_t length = 0;                        // tokens already in the cache
    int64_t capacity = 0;
    int64_t batch() const { return cross_bias.defined() ? cross_bias.size(0) * cross_share : 0; }
};

enum class Precision;
struct LoraAdapter;

class T5Network final : public StepDecoding {
public:
    // `params`: HF name -> tensor, already on the target device in the target dtype (see
    // prepare_parameters). Keeps references: training updates them in place.
    T5Network(ModelConfig config, std::map<std::string, at::Tensor> params);

    const ModelConfig& config() const override { return config_; }
    std::map<std::string, at::Tensor>& params() { return params_; }
    const std::map<std::string, at::Tensor>& params() const { return params_; }
    at::ScalarType dtype() const { return dtype_; }
    at::Device device() const override { return device_; }

    // The CPU kernels this network runs (t5s/kernel_policy.h); default_kernel_policy() until set.
    // Set it before quantize_int8 / pack_for_cpu_decoding: they convert the weights for it.
    void set_kernel_policy(const KernelPolicy& kernels) { kernels_ = kernels; }
    const KernelPolicy& kernels() const override { return kernels_; }

    // Inference-only speed-ups: fused QKV / cross KV weights; int8 forms of the linear layers.
    void fuse_for_inference();
    void quantize_int8();
    // fp32/bf16 on the CPU: the decoder's and the head's weights packed once for our panel kernel,
    // MKL or oneDNN (panel_gemm.h, packed_gemm.h); the encoder's only for the panel kernel. Fuses
    // first where that has not been done (on any device: the layers inference runs).
    void pack_for_cpu_decoding();
    int64_t weight_bytes() const;
    // Which form multiplies the decoder's weights: "int8 AMX", "int8 AVX512-VNNI", "int8 FBGEMM",
    // "int8 dequantised", "fp32 MKL packed", "bf16 oneDNN reordered" or "ATen linear (<dtype>)".
    std::string matmul_kernel() const;

    // Training knobs.
    void set_training(bool training, double dropout_rate);  // also switches the LoRA dropout (t5_lora.cpp)
    // Applies `adapter` (nullptr: none) through the linear layers' LoRA terms; the base weights are
    // untouched, so switching costs no reload. Unfused layers share the adapter's tensors (training
    // updates them in place); fused ones (q|k|v, k|v) get stacked copies. The adapter's tensors must
    // be on the network's device.
    void set_adapter(const LoraAdapter* adapter);
    // LoRA training: holds the frozen base's matmul weights and embedding table in `dtype`
    // (kBFloat16, kHalf, or kChar = int8 with per-row scales; kFloat: no change) and drops their
    // fp32 tensors from params() (norms and position biases stay fp32). Activations and the adapter
    // stay in the network's dtype; each product dequantises one weight at a time (lean_backward.h).
    void hold_frozen_base(at::ScalarType dtype);
    // Recompute each encoder/decoder block in backward instead of keeping its activations (only
    // the block inputs are saved). Active when training with grad mode on; dropout masks and autocast
    // state are replayed, so loss and gradients equal the non-checkpointed ones.
    void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
    bool gradient_checkpointing() const { return checkpointing_; }

    // input_ids [B, S] long; attention_mask [B, S] (1 = token, 0 = pad). Returns [B, S, d_model].
    at::Tensor encode(const at::Tensor& input_ids, const at::Tensor& attention_mask) const;
    // Inference: several inputs [1, S_i] (no padding) encoded in one pass, each result [1, S_i, d]
    // computed as encode() computes it alone. The row-wise work (norms, projections, feed-forward)
    // runs on all their tokens at once, so each weight is read once rather than once per input;
    // attention runs per input on a contiguous copy of its rows, laid out as encode() lays out
    // one input's. Bit-identical to encode() where a linear layer's row result does not depend on
    // the rows beside it (panel_gemm.h); elsewhere equal to rounding.
    std::vector<at::Tensor> encode_each(const std::vector<at::Tensor>& input_ids) const override;
    // Whole decoder at once (teacher forcing). Returns the final hidden states [B, T, d_model].
    at::Tensor decode(const at::Tensor& decoder_input_ids, const at::Tensor& encoder_hidden,
                      const at::Tensor& attention_mask) const;
    // Head (with the tied-embedding scale): [.., d_model] -> [.., vocab] in float32.
    at::Tensor lm_logits(const at::Tensor& decoder_hidden) const;
    // HF loss with labels: mean cross-entropy over labels != -100.
    static at::Tensor loss(const at::Tensor& logits, const at::Tensor& labels);
    // labels -> decoder inputs: prepend decoder_start_token_id, -100 -> pad.
    at::Tensor shift_right(const at::Tensor& labels) const;

    // rows_per_input: beams or candidates per input; the state has B * rows_per_input rows
    // (row i belongs to input i / rows_per_input).
    DecoderState start_decoding(const at::Tensor& encoder_hidden, const at::Tensor& attention_mask, int64_t capacity,
                                int64_t rows_per_input = 1) const override;
    std::vector<DecoderState> start_decoding_each(const std::vector<at::Tensor>& encoded, int64_t table_capacity) const override;
    // tokens [B] long -> logits [B, vocab] float32; appends to the cache.
    at::Tensor decode_step(DecoderState& state, const at::Tensor& tokens) const override;
    at::Tensor decode_step_hidden(DecoderState& state, const at::Tensor& tokens, at::Tensor* final_hidden) const override;
    bool decodes_in_one_pass(const DecoderState& state) const override {
        return !state.self_k.empty() && one_pass_step_ready(state, state.self_k[0].size(0));
    }
    // Keeps (and reorders) batch rows: compaction of finished rows.
    static void select_rows(DecoderState& state, const at::Tensor& rows);
    // Beam reordering: `rows` only permutes beams within each input (cross-attention untouched).
    static void reorder_beams(DecoderState& state, const at::Tensor& rows);

    // Relative position buckets exactly as transformers computes them.
    static at::Tensor relative_position_bucket(const at::Tensor& relative_position, bool bidirectional, int64_t num_buckets,
                                               int64_t max_distance);
    at::Tensor position_bias(const at::Tensor& bias_weight, int64_t query_len, int64_t key_len, bool bidirectional) const;

private:
    at::Tensor mask_to_bias(const at::Tensor& attention_mask) const;  // [B,S] -> [B,1,1,S]
    at::Tensor embed(const at::Tensor& ids) const;                    // token embeddings (int8 table or not)
    bool embedding_in_head() const;  // tied, and the head's inference form gives its rows exactly (Linear::rows)
    static void select_encoder_rows(DecoderState& state, const at::Tensor& rows);
    std::array<at::Tensor, 2> cross_kv(const AttentionWeights& a, const at::Tensor& encoder_hidden) const;  // [B, S, inner] each
    at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const;
    at::Tensor feed_forward(const FeedForwardWeights& w, const at::Tensor& x) const;
    at::Tensor activate(const at::Tensor& x) const;  // the feed-forward's activation (config dense_act_fn)
    // The CPU fp32 decode step in one pass per layer over its own buffers (t5_step_cpu.cpp): where
    // the policy asks for it (one_pass_step) and every layer and tensor the step reads has a form it
    // takes (one_pass_step_ready, for a step of `rows` tokens). The same bits as the step with a
    // tensor per operation.
    bool one_pass_step_ready(const DecoderState& st, int64_t rows) const;
    at::Tensor decode_step_one_pass(DecoderState& st, const at::Tensor& tokens, at::Tensor* final_hidden) const;
    // y [rows, d] = the feed-forward of x [rows, d] on raw rows; ff and gate hold d_ff floats per row.
    void feed_forward_into(const FeedForwardWeights& w, const float* x, int64_t rows, float* ff, float* gate, float* y) const;
    at::Tensor split_heads(const at::Tensor& x) const;  // [B,T,inner] -> [B,H,T,dk]
    at::Tensor merge_heads(const at::Tensor& x) const;  // [B,H,T,dk] -> [B,T,inner]
    std::array<at::Tensor, 3> project_qkv(const AttentionWeights& a, const at::Tensor& x) const;
    at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const;
    // Cross-attention of a decode step against the state's (possibly shared) encoder K/V.
    at::Tensor attend_cross(const at::Tensor& q, const DecoderState& st, size_t layer) const;
    // Whether attend_merged takes the fused single-query CPU kernel for these tensors.
    bool fused_single_query(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const;
    // attend + merge_heads; one fused kernel for a single query on the CPU in fp32/bf16 (decode step).
    at::Tensor attend_merged(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) const;
    bool use_fused_cpu_kernels(const at::Tensor& x) const;  // kernels_.step on, inference, CPU fp32/bf16
    at::Tensor encoder_layer(const EncoderLayer& l, const at::Tensor& h, const at::Tensor& bias) const;
    // encode_each's self-attention: x [1, sum(lengths), d] -> the merged heads of every input, in order.
    at::Tensor attend_each(const AttentionWeights& a, const at::Tensor& x, const std::vector<int64_t>& lengths,
                           const std::vector<at::Tensor>& biases) const;
    at::Tensor decoder_layer(const DecoderLayer& l, const at::Tensor& h, const at::Tensor& self_bias, const at::Tensor& enc,
                             const at::Tensor& cross_bias) const;
    at::Tensor dropout(const at::Tensor& x) const;
    bool checkpoint_blocks() const;
    // One block under gradient checkpointing (t5_checkpoint.cpp): `acts` are the block inputs
    // as encoder_layer / decoder_layer take them.
    at::Tensor checkpointed_block(size_t index, bool decoder, const std::vector<at::Tensor>& acts) const;
    friend struct BlockCheckpoint;  // t5_checkpoint.cpp: recompute-in-backward for one block
    at::Tensor clamp_fp16(const at::Tensor& x) const;
    void bind_weights();
    // fuse_for_inference, each fused layer built in the form the conversion that follows gives it:
    // Plain, Packed (pack_for_cpu_decoding's) or Int8 (quantize_int8's).
    enum class FusedForm { Plain, Packed, Int8 };
    void fuse_projections(FusedForm form);
    bool encoder_packed() const;  // the CPU packing covers the encoder's layers too

    ModelConfig config_;
    std::map<std::string, at::Tensor> params_;
    std::vector<EncoderLayer> encoder_;
    std::vector<DecoderLayer> decoder_;
    at::Tensor shared_, enc_final_ln_, dec_final_ln_;
    at::Tensor shared_int8_, shared_scale_;  // int8 embedding table [V, d] and row scales [V, 1]
    Linear head_;                            // the output projection; tied models: the embedding table as a Linear
    at::ScalarType dtype_ = at::kFloat;
    at::Device device_{at::kCPU};
    bool training_ = false;
    double dropout_ = 0.0;
    double lora_dropout_ = 0.0;
    bool checkpointing_ = false;
    bool fused_ = false;
    KernelPolicy kernels_;
};

}  // namespace t5s
