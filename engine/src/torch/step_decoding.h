#pragma once
// What engine code that drives decoding itself (the serving scheduler's shared batch) needs from a
// model: encode each request alone, start a decoder state for its rows, and run one decoder step
// for the whole batch. A Model offers it through Model::step_decoding(); the LibTorch network
// implements it, so the scheduler needs no knowledge of which Model implementation it serves.
#include <ATen/ATen.h>

#include <vector>

#include "t5s/kernel_policy.h"
#include "t5s/model_config.h"

namespace t5s {

struct DecoderState;

class StepDecoding {
public:
    virtual ~StepDecoding() = default;
    virtual const ModelConfig& config() const = 0;
    virtual at::Device device() const = 0;
    // The CPU kernels the model was loaded for: the driver's own steps (greedy pick, beam
    // search's log-softmax) use its vocabulary kernel.
    virtual const KernelPolicy& kernels() const = 0;
    // Several inputs [1, S_i] (no padding), each result [1, S_i, d] as if encoded alone.
    virtual std::vector<at::Tensor> encode_each(const std::vector<at::Tensor>& input_ids) const = 0;
    // rows_per_input: beams or candidates per input.
    virtual DecoderState start_decoding(const at::Tensor& encoder_hidden, const at::Tensor& attention_mask, int64_t capacity,
                                        int64_t rows_per_input) const = 0;
    // The encoder side of several inputs' decoding (encode_each's results, each [1, S_i, d]): per
    // input its cross-attention K/V and mask, each as if alone, projected in one pass. The states'
    // self-attention caches have no positions (the caller keeps its own); self_bias_table is the
    // one table for `table_capacity` positions, shared by all, or undefined when that is 0.
    virtual std::vector<DecoderState> start_decoding_each(const std::vector<at::Tensor>& encoded,
                                                          int64_t table_capacity) const = 0;
    // tokens [B] long -> logits [B, vocab] float32; appends to the cache.
    virtual at::Tensor decode_step(DecoderState& state, const at::Tensor& tokens) const = 0;
    // decode_step, and in *final_hidden the decoder's last hidden state [B, d_model] (after the final
    // layer norm: what the head reads, transformers' decoder_hidden_states[-1]), which contrastive
    // search compares with the states of the tokens before.
    virtual at::Tensor decode_step_hidden(DecoderState& state, const at::Tensor& tokens, at::Tensor* final_hidden) const = 0;
    // Whether the next step of `state` runs as one pass per layer over the step's own buffers
    // (KernelPolicy::one_pass_step) rather than a tensor per operation: the same results either
    // way; tests ask it to know which path they compared.
    virtual bool decodes_in_one_pass(const DecoderState& state) const {
        (void)state;
        return false;
    }
};

}  // namespace t5s
