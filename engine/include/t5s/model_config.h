#pragma once
// The T5Config fields that change the math, parsed from a Hugging Face config.json exactly as
// transformers interprets them (defaults included).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace t5s {

// A task a checkpoint lists in config.json's task_specific_params, as T5 checkpoints carry them
// (t5-small: {"translation_en_to_de": {"prefix": "translate English to German: ", ...}, ...}):
// the prefix the model was trained to read before an input of that task.
struct ModelTask {
    std::string name, prefix;
};

// The key beside task_specific_params naming the task whose prefix applies by default (a model
// trained by T5 Studio: its training prefix). transformers keeps unknown config keys as they are.
// Without it no prefix applies by default, however many tasks are listed (t5-small's: generate
// keeps reading raw text; the tasks are offered by name, `--task`, and as the app's presets).
inline constexpr const char* kDefaultTaskKey = "t5studio_default_task";

struct ModelTasks {
    std::vector<ModelTask> tasks;  // entries of task_specific_params with a string "prefix", by name
    std::string default_task;      // kDefaultTaskKey's value ("" = none)
};

struct ModelConfig {
    std::string model_type = "t5";  // "t5" or "mt5"; others are rejected as unsupported
    int64_t vocab_size = 32128;     // rows of the embedding / head (may exceed the tokenizer)
    int64_t d_model = 512;
    int64_t d_kv = 64;  // per-head size; num_heads * d_kv may differ from d_model
    int64_t d_ff = 2048;
    int64_t num_layers = 6;          // encoder blocks
    int64_t num_decoder_layers = 6;  // decoder blocks (defaults to num_layers)
    int64_t num_heads = 8;
    int64_t relative_attention_num_buckets = 32;
    int64_t relative_attention_max_distance = 128;
    double dropout_rate = 0.1;  // used only when training
    double layer_norm_epsilon = 1e-6;
    std::string feed_forward_proj = "relu";  // "relu" | "gated-gelu" | "gated-silu" | "{gated-}ACT"
    std::string dense_act_fn = "relu";       // derived like transformers ("gated-gelu" -> "gelu_new")
    bool is_gated_act = false;               // derived from feed_forward_proj
    bool tie_word_embeddings = true;         // T5 v1.0: head = shared, output scaled by d_model^-0.5
    int64_t decoder_start_token_id = 0;
    int64_t eos_token_id = 1;
    int64_t pad_token_id = 0;
    int64_t n_positions = 0;  // config's n_positions (0 = absent): the longest source a request accepts by default
    std::string torch_dtype;  // dtype the checkpoint says it was saved in ("" if absent)
    std::string raw_json;     // the original file, kept so checkpoints can be re-saved faithfully
    ModelTasks tasks;         // task_specific_params and the default task (written back by model_config_to_json)

    int64_t inner_dim() const { return num_heads * d_kv; }
};

// Throws t5s::Error naming `source` (usually the file path) on malformed JSON, bad or
// unsupported values.
ModelConfig parse_model_config(const std::string& json_text, const std::string& source);
ModelConfig load_model_config(const std::filesystem::path& config_json);

// task_specific_params and kDefaultTaskKey of a config.json. Entries that are not objects with a
// string "prefix" are skipped (transformers allows any value there); a default that is not a
// string, or names no listed task, throws t5s::Error(CorruptFile) naming `source` and the key.
ModelTasks parse_model_tasks(const std::string& json_text, const std::string& source);
// The listed task called `name`, or null.
const ModelTask* find_task(const ModelTasks& tasks, const std::string& name);
// A task name for a prefix: lower-case words joined by '_' ("translate English to Chinese: " ->
// "translate_english_to_chinese"); "task" when the prefix has no letters or digits.
std::string task_name_for_prefix(const std::string& prefix);
// `config` with the prefix a model was fine-tuned on recorded as a task (named from the prefix,
// replacing a listed task's prefix of that name) and marked the default; an empty prefix (trained
// on raw text) clears the default, so the fine-tuned model applies none.
ModelConfig with_training_task(ModelConfig config, const std::string& prefix);

// Checks the config's sizes against a checkpoint's tensor table (name -> shape) before anything is
// allocated from them: encoder/decoder block counts, embedding, attention, relative bias and
// feed-forward shapes of the tensors present (missing ones are reported by the loader). Throws
// t5s::Error(CorruptFile) naming `where` (the weights file).
void check_config_against_tensors(const ModelConfig& config, const std::map<std::string, std::vector<int64_t>>& shapes,
                                  const std::string& where);

// config.json text for a checkpoint that transformers loads unchanged.
std::string model_config_to_json(const ModelConfig& config);

}  // namespace t5s
