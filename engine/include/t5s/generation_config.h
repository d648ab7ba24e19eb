#pragma once
// generation_config.json: the generation defaults a checkpoint ships, read as transformers'
// GenerationConfig does. Only fields present in the file are set; they apply where the caller
// gave no value of its own (the CLI: no flag), as generate() does with its kwargs.
//
// Honoured: decoder_start_token_id, eos_token_id (an id or a list: the first), pad_token_id
// (they replace config.json's ids, as in transformers), max_new_tokens, max_length (encoder-
// decoder: max_new_tokens = max_length - 1, used only without max_new_tokens), min_new_tokens,
// min_length (likewise), num_beams, num_return_sequences, do_sample, early_stopping (true/false;
// "never" reads as false), temperature, top_k, top_p, repetition_penalty, length_penalty,
// no_repeat_ngram_size, and the keys the field table reads under transformers' names (table_keys in
// generation_config.cpp: encoder_no_repeat_ngram_size, encoder_repetition_penalty, bad_words_ids,
// min_p, typical_p, epsilon_cutoff, eta_cutoff, num_beam_groups, diversity_penalty, penalty_alpha;
// with penalty_alpha and no top_k, top_k is transformers' default 50, contrastive search's width).
// Nothing else is dropped in silence: transformers' bookkeeping (bos_token_id,
// transformers_version, _from_model_config, use_cache, ...) changes no output and is skipped, and so
// is a setting T5 Studio does not apply holding transformers' neutral value (guidance_scale 1.0,
// token_healing false); any other key is named in `warnings` (its output would differ from
// transformers'). Wrong types or values are one line naming the file and the key.
//
// A model folder's defaults (load_model_generation_defaults) add the task prefix: the prefix of the
// task config.json marks as the default (kDefaultTaskKey, t5s/model_config.h: what a model trained
// by T5 Studio records), so `generate`, `serve` and the app read such a model's inputs as it was
// trained to, unless the caller gives a prefix of its own ("" included). A config listing tasks
// without marking one (t5-small) sets none: its tasks are offered by name.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/model_config.h"

namespace t5s {

struct GenerationConfig {
    bool present = false;  // the file exists
    std::optional<int64_t> decoder_start_token_id, eos_token_id, pad_token_id;
    std::vector<int64_t> listed_eos_token_ids;  // every id of an eos_token_id list (the first is eos_token_id)
    std::optional<int> max_new_tokens, min_new_tokens, num_beams, num_return_sequences, top_k, no_repeat_ngram_size;
    std::optional<bool> do_sample, early_stopping;
    std::optional<float> temperature, top_p, repetition_penalty, length_penalty;
    // transformers' keys that are generation fields of the same name and meaning (t5s/generation_fields.h:
    // encoder_no_repeat_ngram_size, bad_words_ids, min_p, ...), read through the field table: the
    // fields' values, and the names of those the file sets.
    GenerationOptions table_settings;
    std::vector<std::string> table_fields;
    std::optional<std::string> task_prefix;  // the default task's prefix (model folders only)
    std::string task_prefix_source;          // where it comes from, for people: "config.json task 'paraphrase'"
    ModelTasks tasks;                        // every task config.json lists (by name: --task, the app's presets)
    // One line per key present that T5 Studio does not apply, naming the file and the key
    // ("generation_config.json: 'guidance_scale' 1.5 is not applied (not supported yet); ...").
    std::vector<std::string> warnings;
};

// A key of transformers' GenerationConfig that T5 Studio has no option for, by what its value does.
enum class ForeignSetting {
    Unknown,      // not a transformers generation setting either
    Bookkeeping,  // changes no output (transformers_version, use_cache, output_scores, ...)
    Neutral,      // a setting not supported yet, holding the value that turns it off (guidance_scale 1)
    Unsupported,  // a setting not supported yet, with a value that would change the output
};
// `value_json` is the key's value as JSON text ("5", "null", "[[1, 2]]").
ForeignSetting classify_foreign_setting(const std::string& key, const std::string& value_json);
// transformers' length keys counted with the decoder start token: "max_new_tokens" for
// "max_length", "min_new_tokens" for "min_length" (N - 1 new tokens), else "".
std::string new_tokens_name_of(const std::string& length_key);

// Throws t5s::Error(CorruptFile) naming `source` and the key.
GenerationConfig parse_generation_config(const std::string& json_text, const std::string& source);
// A missing file is an empty GenerationConfig (present = false), not an error.
GenerationConfig load_generation_config(const std::filesystem::path& file);

// The defaults of the model in `dir`: its generation_config.json and the task prefix and tasks of
// its config.json. A missing or unreadable config.json adds nothing (the model loader reports it);
// a wrong task key is CorruptFile naming the file.
GenerationConfig load_model_generation_defaults(const std::filesystem::path& dir);
// `config` with the prefix of the task `name` as its task prefix; InvalidArgument naming the tasks
// listed when there is no such task.
GenerationConfig with_task(GenerationConfig config, const std::string& name);

// Sets every field of `options` that the config has and `given` (GenerationOptions field names the
// caller set itself, e.g. "num_beams") does not name.
void apply_generation_config(const GenerationConfig& config, const std::set<std::string>& given, GenerationOptions* options);

// transformers takes decoder_start / eos / pad ids from generation_config.json over config.json's:
// sets them in `model` after checking they are inside its vocabulary (CorruptFile naming `source`).
void apply_generation_token_ids(const GenerationConfig& config, const std::string& source, ModelConfig* model);

// The GenerationOptions fields (JSON names) the config sets: where `info` says a setting comes from.
std::vector<std::string> generation_config_fields(const GenerationConfig& config);

// The fields present, as JSON text (for `info`): {} when none.
std::string generation_config_to_json(const GenerationConfig& config);

}  // namespace t5s
