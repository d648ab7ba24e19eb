#pragma once
// The T5Config fields that change the math, parsed from a Hugging Face config.json exactly as
// transformers interprets them (defaults included).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace t5s {

struct ModelConfig {
    std::string model_type = "t5";       // "t5" or "mt5"; others are rejected as unsupported
    int64_t vocab_size = 32128;          // rows of the embedding / head (may exceed the tokenizer)
    int64_t d_model = 512;
    int64_t d_kv = 64;                   // per-head size; num_heads * d_kv may differ from d_model
    int64_t d_ff = 2048;
    int64_t num_layers = 6;              // encoder blocks
    int64_t num_decoder_layers = 6;      // decoder blocks (defaults to num_layers)
    int64_t num_heads = 8;
    int64_t relative_attention_num_buckets = 32;
    int64_t relative_attention_max_distance = 128;
    double dropout_rate = 0.1;           // used only when training
    double layer_norm_epsilon = 1e-6;
    std::string feed_forward_proj = "relu";  // "relu" | "gated-gelu" | "gated-silu" | "{gated-}ACT"
    std::string dense_act_fn = "relu";       // derived like transformers ("gated-gelu" -> "gelu_new")
    bool is_gated_act = false;               // derived from feed_forward_proj
    bool tie_word_embeddings = true;         // T5 v1.0: head = shared, output scaled by d_model^-0.5
    int64_t decoder_start_token_id = 0;
    int64_t eos_token_id = 1;
    int64_t pad_token_id = 0;
    int64_t n_positions = 0;             // config's n_positions (0 = absent): the longest source a request accepts by default
    std::string torch_dtype;             // dtype the checkpoint says it was saved in ("" if absent)
    std::string raw_json;                // the original file, kept so checkpoints can be re-saved faithfully

    int64_t inner_dim() const { return num_heads * d_kv; }
};

// Throws t5s::Error naming `source` (usually the file path) on malformed JSON, bad or
// unsupported values.
ModelConfig parse_model_config(const std::string& json_text, const std::string& source);
ModelConfig load_model_config(const std::filesystem::path& config_json);

// Checks the config's sizes against a checkpoint's tensor table (name -> shape) before anything is
// allocated from them: encoder/decoder block counts, embedding, attention, relative bias and
// feed-forward shapes of the tensors present (missing ones are reported by the loader). Throws
// t5s::Error(CorruptFile) naming `where` (the weights file).
void check_config_against_tensors(const ModelConfig& config, const std::map<std::string, std::vector<int64_t>>& shapes,
                                  const std::string& where);

// config.json text for a checkpoint that transformers loads unchanged.
std::string model_config_to_json(const ModelConfig& config);

}  // namespace t5s
