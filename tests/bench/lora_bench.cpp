// LoRA vs full fine-tuning, one training mode per process (so each peak RSS is its own):
//
//   t5s_lora_bench --mode full|lora [--steps 3] [--batch 8] [--src 128] [--tgt 64] [--threads N]
//                  [--r 8] [--targets q,v] [--base fp32|bf16|fp16|int8] [--config t5-base|FILE] [--device cpu|cuda]
//                  [--bf16 1] [--ckpt 1]
//   t5s_lora_bench --count CONFIG.json [--r 8] [--targets q,v]      (trainable / total parameters only)
//
// Random weights in the t5-base shape (or a config.json), CPU fp32 by default (CUDA, bf16 autocast
// and gradient checkpointing on request), AdamW. Prints one JSON line: mode, parameters, trainable,
// step seconds (median of the timed steps after one warm-up step), peak RSS or peak CUDA allocation,
// and the heap bytes of the weights (before the first step) and of what the first forward pass
// left for backward. LoRA's --base holds the frozen base in that precision (train
// --lora-base-precision). tests/bench/lora_bench.sh runs the modes alternately and compares them.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "t5s/lora.h"
#include "t5s/process_memory.h"
#include "torch/weight_loader.h"
#include "trainer/block_cache.h"
#include "trainer/core.h"
#include "trainer/memory.h"

using namespace t5s;

namespace {

const char* kT5Base = R"({"model_type": "t5", "d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 12,
  "num_decoder_layers": 12, "vocab_size": 32128, "feed_forward_proj": "relu", "tie_word_embeddings": true,
  "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128, "dropout_rate": 0.1,
  "layer_norm_epsilon": 1e-6, "decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0})";

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
    std::map<std::string, std::string> f;
    for (int i = 1; i + 1 < argc; i += 2) f[std::string(argv[i]).substr(2)] = argv[i + 1];
    return f;
}

std::string get(const std::map<std::string, std::string>& f, const std::string& k, const std::string& d) {
    auto it = f.find(k);
    return it == f.end() ? d : it->second;
}

ModelConfig config_from(const std::string& spec) {
    return spec == "t5-base" ? parse_model_config(kT5Base, "t5-base") : parse_model_config(read_text(spec), spec);
}

int count_only(const std::map<std::string, std::string>& f) {
    const ModelConfig c = config_from(f.at("count"));
    const int64_t r = std::stoll(get(f, "r", "8"));
    const auto targets = parse_lora_targets(get(f, "targets", "q,v"), c);
    int64_t total = 0;
    for (const auto& [name, shape] : t5_parameter_shapes(c)) {
        if (name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight") continue;
        if (name == "lm_head.weight" && c.tie_word_embeddings) continue;
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        total += n;
    }
    const int64_t trainable = lora_trainable_parameters(c, r, targets);
    std::cout << nlohmann::json{{"config", f.at("count")},
                                {"r", r},
                                {"targets", get(f, "targets", "q,v")},
                                {"parameters", total},
                                {"trainable", trainable},
                                {"trainable_percent", 100.0 * trainable / total}}
                     .dump()
              << std::endl;
    return 0;
}

// Bytes handed out now — malloc's heap and mmapped chunks plus the block cache's live blocks (the
// tensors of 256 KiB and more): live tensors, unlike RSS, which keeps freed pages not yet returned.
int64_t heap_in_use_bytes() {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<int64_t>(m.uordblks + m.hblkhd) + cpu_block_cache_stats().live_bytes;
}

}  // namespace

int main(int argc, char** argv) {
    const auto f = parse_flags(argc, argv);
    if (f.count("count")) return count_only(f);
    const std::string mode = get(f, "mode", "lora");
    const int steps = std::stoi(get(f, "steps", "3"));
    const int64_t B = std::stoll(get(f, "batch", "8")), S = std::stoll(get(f, "src", "128")), T = std::stoll(get(f, "tgt", "64"));
    if (f.count("threads")) at::set_num_threads(std::stoi(f.at("threads")));
    CpuBlockCacheScope block_cache;  // as the trainer does, in every mode
    const ModelConfig c = config_from(get(f, "config", "t5-base"));
    const at::Device device = get(f, "device", "cpu") == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    const TrainPrecision precision = get(f, "bf16", "0") == "1" ? TrainPrecision::Bf16 : TrainPrecision::Fp32;
    if (device.is_cuda()) cuda_reset_peak(0);
    TrainableModel m = init_trainable(c, 1, device);
    int64_t total = 0;
    for (const auto& p : m.named) total += p.tensor.numel();
    if (mode == "lora") {
        LoraSettings s;
        s.r = std::stoll(get(f, "r", "8"));
        s.targets = parse_lora_targets(get(f, "targets", "q,v"), c);
        make_lora_trainable(m, init_lora_adapter(c, s, 1), device, parse_enum<Precision>(get(f, "base", "fp32")));
    }
    int64_t trainable = 0;
    for (const auto& p : m.named) trainable += p.tensor.numel();
    m.net->set_training(true, 0.1);
    m.net->set_gradient_checkpointing(get(f, "ckpt", "0") == "1");
    auto opt = make_adamw(m.named, {0.9, 0.999, 1e-8, 0.0});
    at::Generator gen = at::detail::createCPUGenerator(5);
    Batch b;
    b.input_ids = at::randint(2, c.vocab_size, {B, S}, gen, at::kLong);
    b.attention_mask = at::ones({B, S}, at::kLong);
    b.labels = at::randint(2, c.vocab_size, {B, T}, gen, at::kLong);
    b.target_tokens = B * T;
    b.input_ids = b.input_ids.to(device), b.attention_mask = b.attention_mask.to(device), b.labels = b.labels.to(device);
    std::vector<double> times;
    const int64_t heap_before = heap_in_use_bytes();
    int64_t forward_held = 0;
    for (int i = 0; i <= steps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        at::Tensor loss = forward_loss(*m.net, b, precision);
        if (i == 0) forward_held = heap_in_use_bytes() - heap_before;
        loss.backward();
        opt->step(1e-4);
        for (auto& p : m.named) p.tensor.mutable_grad() = at::Tensor();
        if (device.is_cuda()) (void)m.named[0].tensor.sum().item<float>();  // wait for the GPU
        if (i > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    std::cout << nlohmann::json{{"mode", mode == "lora" ? "lora-" + get(f, "base", "fp32") : mode},
                                {"parameters", total},
                                {"trainable", trainable},
                                {"batch", B},
                                {"src", S},
                                {"tgt", T},
                                {"threads", at::get_num_threads()},
                                {"step_s", times.empty() ? 0.0 : times[times.size() / 2]},
                                {"device", device.str()},
                                {"peak_rss_bytes", process_peak_rss_bytes()},
                                {"weights_heap_bytes", heap_before},
                                {"forward_saved_bytes", forward_held},
                                {"peak_cuda_bytes", device.is_cuda() ? cuda_memory(0).peak : 0}}
                     .dump()
              << std::endl;
    return 0;
}
