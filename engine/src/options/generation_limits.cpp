#include "t5s/generation_limits.h"

#include <algorithm>
#include <cstdio>

#include "t5s/error.h"

namespace t5s {
namespace {

std::string gigabytes(double bytes) {
    char buf[64];
    if (bytes >= 1e15) std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
    else std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
    return buf;
}

}  // namespace

int64_t source_token_limit(const ModelConfig& config, const GenerationOptions& options) {
    if (options.max_source_tokens > 0) return options.max_source_tokens;
    return config.n_positions > 0 ? config.n_positions : kDefaultMaxSourceTokens;
}

void check_source_lengths(const std::vector<std::vector<int>>& input_ids, const ModelConfig& config,
                          const GenerationOptions& options) {
    const int64_t limit = source_token_limit(config, options);
    for (size_t i = 0; i < input_ids.size(); ++i) {
        const auto n = static_cast<int64_t>(input_ids[i].size());
        if (n <= limit) continue;
        const std::string from = options.max_source_tokens > 0 ? "max_source_tokens"
                                 : config.n_positions > 0      ? "the model's n_positions"
                                                               : "the default";
        throw Error(ErrorCode::InvalidArgument, "input " + std::to_string(i + 1) + " is " + std::to_string(n) +
                                                    " tokens, more than the source limit of " + std::to_string(limit) + " (" +
                                                    from + "); shorten it or raise --max-source-tokens");
    }
}

double estimate_generation_bytes(const ModelConfig& c, int64_t inputs, int64_t source_tokens, const GenerationOptions& o,
                                 int64_t element_bytes) {
    const double e = static_cast<double>(element_bytes), heads = static_cast<double>(c.num_heads);
    const double n = static_cast<double>(inputs), s = static_cast<double>(source_tokens);
    const double per_input = decoding_rows_per_input(o);
    const double rows = n * per_input, cap = static_cast<double>(o.max_new_tokens) + 1.0;
    const double layers = static_cast<double>(c.num_decoder_layers), dk = static_cast<double>(c.d_kv);
    const double self_cache = 2.0 * layers * rows * heads * cap * dk * e;
    const double self_bias = heads * cap * cap * e;  // relative position bias table [1, H, cap, cap]
    const double cross_kv = 2.0 * layers * n * heads * s * dk * e;
    // Encoder: scores, bias and softmax [n, H, s, s]; hidden states and the feed-forward activations.
    const double encoder = 3.0 * n * heads * s * s * e + 2.0 * n * s * (static_cast<double>(c.d_ff) + 3.0 * c.d_model) * e;
    const double step = 4.0 * rows * static_cast<double>(c.vocab_size) * 4.0;  // fp32 logits, log-softmax, processors
    const double sequences = 4.0 * rows * cap * 8.0;                           // int64 ids, beam bookkeeping
    return self_cache + self_bias + cross_kv + encoder + step + sequences;
}

void check_generation_memory(const ModelConfig& config, int64_t inputs, int64_t source_tokens, const GenerationOptions& options,
                             int64_t element_bytes, int64_t available_bytes, const std::string& device) {
    if (available_bytes <= 0) return;
    const double need = estimate_generation_bytes(config, inputs, source_tokens, options, element_bytes);
    if (need <= static_cast<double>(available_bytes)) return;
    throw Error(ErrorCode::OutOfMemory, "generation would need about " + gigabytes(need) + " but only " +
                                            gigabytes(static_cast<double>(available_bytes)) + " are free on " + device +
                                            " (max_new_tokens " + std::to_string(options.max_new_tokens) + ", beams " +
                                            std::to_string(options.num_beams) + ", batch " + std::to_string(inputs) + " x " +
                                            std::to_string(source_tokens) +
                                            " source tokens); lower --max-new-tokens, --beams or --batch-size");
}

}  // namespace t5s
