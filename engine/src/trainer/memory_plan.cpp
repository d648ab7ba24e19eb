// Peak-memory estimate for a training configuration: weights, gradients, optimizer state and the
// activations autograd keeps (with and without gradient checkpointing).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "t5s/error.h"
#include "t5s/lora.h"
#include "t5s/model_config.h"
#include "t5s/trainer.h"
#include "trainer/memory.h"

namespace t5s {
namespace {

int64_t count_parameters(const ModelConfig& c) {
    const int64_t d = c.d_model, i = c.inner_dim(), f = c.d_ff, H = c.num_heads;
    const int64_t ff = (c.is_gated_act ? 3 : 2) * d * f;
    const int64_t attn = 4 * d * i;
    int64_t p = c.vocab_size * d;  // shared
    p += c.num_layers * (attn + ff + 2 * d) + c.relative_attention_num_buckets * H + d;
    p += c.num_decoder_layers * (2 * attn + ff + 3 * d) + c.relative_attention_num_buckets * H + d;
    if (!c.tie_word_embeddings) p += c.vocab_size * d;
    return p;
}

struct Activations {
    int64_t full = 0, ckpt = 0;
};

// What LoRA changes in what autograd keeps: the frozen layers keep no input (they need no weight
// gradient); the adapted layers keep their input once per input they share (q|k|v read the same
// normed x, wi / wi_0 / wi_1 too; cross-attention k|v read the encoder output, kept anyway), the
// bool dropout mask (a quarter element) and A x (r per token). Per encoder layer / decoder layer.
struct LoraActivations {
    int64_t enc_layer = 0, dec_layer = 0;
};

LoraActivations lora_activation_elements(const ModelConfig& c, int64_t B, int64_t S, int64_t T, int64_t r,
                                         const std::vector<std::string>& targets) {
    const int64_t d = c.d_model, i = c.inner_dim(), f = c.d_ff * (c.is_gated_act ? 2 : 1);
    LoraActivations a;
    a.enc_layer = -B * S * (2 * d + i + f);      // inputs of q|k|v, o, wi, wo
    a.dec_layer = -B * T * (3 * d + 2 * i + f);  // self q|k|v, o, cross q, o, wi, wo
    const std::vector<std::string> paths = lora_module_paths(c, targets, "--lora-targets");
    const std::set<std::string> chosen(paths.begin(), paths.end());
    std::set<std::string> inputs_kept;
    for (const LoraLinear& m : lora_linear_modules(c)) {
        if (!chosen.count(m.path) || m.path.find(".block.0.") == std::string::npos) continue;  // one block's share
        const bool encoder = m.path.rfind("encoder.", 0) == 0;
        const std::string name = m.path.substr(m.path.rfind('.') + 1);
        const std::string module = m.path.substr(0, m.path.rfind('.'));
        const bool reads_encoder =
            !encoder && module.find("EncDecAttention") != std::string::npos && (name == "k" || name == "v");
        const int64_t tokens = B * (encoder || reads_encoder ? S : T);
        const std::string input = (name == "q" || name == "k" || name == "v") ? module + (reads_encoder ? ".enc" : ".normed")
                                  : name.rfind("wi", 0) == 0                  ? module + ".ff_in"
                                                                              : m.path;
        int64_t kept = tokens * (m.in / 4 + r);
        if (!reads_encoder && inputs_kept.insert(input).second) kept += tokens * m.in;
        (encoder ? a.enc_layer : a.dec_layer) += kept;
    }
    return a;
}

// Elements autograd keeps alive, per the ops in T5Network (dropout and relu keep bool masks: a
// quarter element each). Per encoder layer: the norms' inputs and outputs, q k v and o's input, the
// feed-forward's masks and wo's input, softmax output + dropped-out weights + mask; the decoder adds
// cross-attention (its k|v over the source).
Activations activation_elements(const ModelConfig& c, int64_t B, int64_t S, int64_t T, bool dropout,
                                const LoraActivations& lora) {
    const int64_t d = c.d_model, i = c.inner_dim(), f = c.d_ff * (c.is_gated_act ? 2 : 1), H = c.num_heads;
    const double q = dropout ? 0.25 : 0.0;  // one bool mask
    const double ff = c.is_gated_act ? 2.0 : 1.5;
    const double attn = 2.0 + q;
    const int64_t enc_layer =
        static_cast<int64_t>(B * S * ((4 + 2 * q) * d + 4 * i + ff * f) + attn * B * H * S * S) + lora.enc_layer;
    const int64_t dec_layer =
        static_cast<int64_t>(B * T * ((6 + 3 * q) * d + 6 * i + ff * f) + B * S * 2 * i + attn * B * H * (T * T + T * S)) +
        lora.dec_layer;
    const int64_t head = 3 * B * T * c.vocab_size;  // logits, log-softmax, their gradient
    const int64_t embed = B * (S + T) * d * 2;
    Activations a;
    a.full = c.num_layers * enc_layer + c.num_decoder_layers * dec_layer + head + embed;
    // Checkpointing: block inputs, plus one block recomputed in backward together with its gradients.
    a.ckpt = c.num_layers * B * S * d + c.num_decoder_layers * B * T * d + 2 * std::max(enc_layer, dec_layer) + head + embed;
    return a;
}

// Bytes per frozen base parameter: int8 also keeps an fp32 scale per row (counted per d_model values).
double base_bytes_per_parameter(Precision p, const ModelConfig& c) {
    switch (p) {
        case Precision::Bf16:
        case Precision::Fp16: return 2.0;
        case Precision::Int8: return 1.0 + 4.0 / static_cast<double>(std::max<int64_t>(1, c.d_model));
        default: return 4.0;
    }
}

std::string gib(int64_t b) {
    std::ostringstream o;
    o.precision(b >= (int64_t(1) << 30) ? 2 : 1);
    if (b >= (int64_t(1) << 30)) o << std::fixed << b / double(int64_t(1) << 30) << " GiB";
    else o << std::fixed << b / double(1 << 20) << " MiB";
    return o.str();
}

}  // namespace

MemoryEstimate estimate_training_memory(const std::string& config_json_text, const TrainingOptions& o, int64_t free_bytes,
                                        int64_t process_bytes) {
    ModelConfig c = parse_model_config(config_json_text, "config");
    MemoryEstimate e;
    const bool cuda = o.device == TrainDevice::Cuda;
    e.device = cuda ? "cuda:0" : "cpu";
    e.parameters = count_parameters(c);
    const bool lora = o.lora || !o.adapter_dir.empty();
    // LoRA: the frozen base has neither gradients nor optimizer state; the adapter has both.
    e.trainable_parameters = lora ? lora_trainable_parameters(c, o.lora_r, parse_lora_targets(o.lora_targets, c)) : e.parameters;
    // Master weights stay fp32 under autocast; a LoRA base may be held smaller, its adapter is fp32.
    e.weight_bytes = lora ? static_cast<int64_t>(e.parameters * base_bytes_per_parameter(o.lora_base_precision, c)) +
                                e.trainable_parameters * 4
                          : e.parameters * 4;
    e.gradient_bytes = e.trainable_parameters * 4;
    if (o.optimizer == OptimizerKind::AdamW || lora) {
        e.optimizer_bytes = e.trainable_parameters * 8;  // Adafactor on an adapter: at most AdamW's two moments
    } else {
        // Factored second moments: rows + cols per matrix (~ (r + c) / (r * c) of the parameters).
        const int64_t d = c.d_model;
        e.optimizer_bytes = (e.parameters / std::max<int64_t>(1, d)) * 8 + (c.vocab_size + d) * 4;
    }
    const double act_bytes = o.precision == TrainPrecision::Fp32 ? 4.0 : 3.0;  // autocast keeps fp32 where it must
    const double dropout = o.dropout >= 0 ? o.dropout : c.dropout_rate;
    auto acts = [&](int64_t B) {
        const LoraActivations l = lora ? lora_activation_elements(c, B, o.max_source_len, o.max_target_len, o.lora_r,
                                                                  parse_lora_targets(o.lora_targets, c))
                                       : LoraActivations{};
        Activations a = activation_elements(c, B, o.max_source_len, o.max_target_len, dropout > 0, l);
        return std::pair<int64_t, int64_t>{static_cast<int64_t>(a.full * act_bytes), static_cast<int64_t>(a.ckpt * act_bytes)};
    };
    auto [full, ckpt] = acts(o.batch_size);
    e.activation_bytes_no_ckpt = full;
    e.activation_bytes_ckpt = ckpt;
    e.activation_bytes = o.gradient_checkpointing ? ckpt : full;
    const int64_t fixed = e.weight_bytes + e.gradient_bytes + e.optimizer_bytes;
    // CUDA: the context and cuBLAS workspaces; CPU: the process's own baseline when measured (its
    // peak RSS is what gets compared), else a typical LibTorch figure.
    if (!cuda) e.process_bytes = process_bytes;
    const int64_t overhead = cuda ? (int64_t(600) << 20) : process_bytes >= 0 ? process_bytes : (int64_t(300) << 20);
    auto total_for = [&](int64_t act) { return static_cast<int64_t>((fixed + act) * 1.1) + overhead; };
    e.total_bytes = total_for(e.activation_bytes);
    if (free_bytes < 0) free_bytes = cuda ? cuda_free_bytes(0) : host_available_bytes();
    e.free_bytes = free_bytes;
    e.fits = free_bytes <= 0 || e.total_bytes <= free_bytes;
    e.suggested_batch_size = 0;
    if (free_bytes > 0) {
        int64_t lo = 0, hi = 4096;
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            auto [f2, c2] = acts(mid);
            if (total_for(o.gradient_checkpointing ? c2 : f2) <= free_bytes * 9 / 10) lo = mid;
            else hi = mid - 1;
        }
        e.suggested_batch_size = static_cast<int>(lo);
    }
    return e;
}

std::string MemoryEstimate::to_text() const {
    std::ostringstream o;
    o << "memory plan (" << device << "): " << parameters << " parameters";
    if (trainable_parameters != parameters) o << " (trainable " << trainable_parameters << ")";
    o << "; weights " << gib(weight_bytes) << ", gradients " << gib(gradient_bytes) << ", optimizer " << gib(optimizer_bytes)
      << ", activations " << gib(activation_bytes) << " (without checkpointing " << gib(activation_bytes_no_ckpt) << ", with "
      << gib(activation_bytes_ckpt) << "); peak ~" << gib(total_bytes);
    if (process_bytes >= 0) o << " (incl. " << gib(process_bytes) << " the process held before loading)";
    if (free_bytes > 0) {
        o << " of " << gib(free_bytes) << " free" << (fits ? "" : " - DOES NOT FIT");
        o << "; largest micro-batch that fits: " << suggested_batch_size;
    }
    return o.str();
}

}  // namespace t5s
