#pragma once
// The training pieces the job loop is made of, exposed for tests: a trainable network, batches,
// the loss with precision handling, the initialisation of a fresh model.
#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "t5s/model_config.h"
#include "t5s/trainer.h"
#include "torch/lora.h"
#include "torch/t5_network.h"
#include "trainer/data_internal.h"
#include "trainer/optim.h"

namespace t5s {

struct TrainableModel {
    ModelConfig config;
    std::map<std::string, at::Tensor> params;  // HF name -> fp32 leaf (requires_grad)
    std::unique_ptr<T5Network> net;
    std::vector<NamedParam> named;  // unique tensors (tied weights once), layer norms without decay
};

// Fine-tune start point: config.json + weights of an HF folder, fp32 on `device`.
TrainableModel load_trainable(const std::filesystem::path& dir, at::Device device);
// From scratch: T5's _init_weights (initializer_factor 1.0) with a seeded generator.
TrainableModel init_trainable(const ModelConfig& config, uint64_t seed, at::Device device);

// LoRA: freezes the base (no gradients) and makes the adapter's A/B tensors, moved to `device`, the
// only trainable parameters (PEFT's tensor names, with decay); the network applies the adapter.
// `base` other than fp32 holds the frozen matmul weights and embedding table in bf16 / fp16 / int8
// (T5Network::hold_frozen_base) and drops their fp32 tensors from `m.params`.
std::shared_ptr<LoraAdapter> make_lora_trainable(TrainableModel& m, LoraAdapter adapter, at::Device device,
                                                 Precision base = Precision::Fp32);

struct Batch {
    at::Tensor input_ids, attention_mask, labels;  // [B,S] long, [B,S] long, [B,T] long (-100 pad)
    int64_t source_tokens = 0, target_tokens = 0;  // real (non-pad) tokens
};
Batch make_batch(const std::vector<TokenizedPair>& data, const std::vector<int64_t>& rows, at::Device device);
Batch make_batch_from_ids(const std::vector<std::vector<int>>& sources, const std::vector<std::vector<int>>& targets,
                          at::Device device);

// Forward pass with autocast per `precision` (bf16: CPU and CUDA; fp16: CUDA). Returns the HF loss
// (mean over labels != -100) in fp32.
at::Tensor forward_loss(const T5Network& net, const Batch& batch, TrainPrecision precision);

// RAII autocast for the device and precision (no-op for fp32).
class AutocastGuard {
public:
    AutocastGuard(at::Device device, TrainPrecision precision);
    ~AutocastGuard();

private:
    bool active_ = false;
    at::DeviceType type_ = at::kCPU;
    bool prev_enabled_ = false;
    at::ScalarType prev_dtype_ = at::kBFloat16;
};

// Tokenize with truncation as transformers does (max_length incl. </s>, </s> kept).
TokenizedPair tokenize_pair(const class Tokenizer& tok, const std::string& source, const std::string& target, int max_source_len,
                            int max_target_len);

}  // namespace t5s
