#include "t5s/generation_config.h"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_text.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/model_config.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

using json = nlohmann::json;

class Reader {
public:
    Reader(const json& j, const std::string& source) : j_(j), source_(source) {}

    // Non-negative integers up to `max`; null reads as absent (transformers writes None as null).
    template <class T>
    void integer(const char* key, std::optional<T>* out, int64_t min, int64_t max) {
        const json* v = find(key);
        if (!v) return;
        const json& x = v->is_array() && !v->empty() && std::string(key) == "eos_token_id" ? (*v)[0] : *v;
        if (!x.is_number_integer()) bad(key, "must be an integer", x);
        if ((x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(max)) || x.get<int64_t>() < min ||
            x.get<int64_t>() > max) {
            out_of_range(key, from_to(static_cast<double>(min), static_cast<double>(max)), x);
        }
        *out = static_cast<T>(x.get<int64_t>());
    }
    // Every entry of a list of token ids (none when the key holds a single id).
    std::vector<int64_t> id_list(const char* key, int64_t max) {
        const json* v = find(key);
        std::vector<int64_t> ids;
        if (!v || !v->is_array()) return ids;
        for (const json& x : *v) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0 ||
                (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(max)))
                bad(key, "entries must be token ids", x);
            ids.push_back(x.get<int64_t>());
        }
        return ids;
    }
    void number(const char* key, std::optional<float>* out, double min_exclusive, double max_inclusive) {
        const json* v = find(key);
        if (!v) return;
        if (!v->is_number()) bad(key, "must be a number", *v);
        const double d = v->get<double>();
        const FieldRange range = above_to(min_exclusive, max_inclusive);
        if (!settings_in_range(range, d)) out_of_range(key, range, *v);
        *out = static_cast<float>(d);
    }
    void boolean(const char* key, std::optional<bool>* out) {
        const json* v = find(key);
        if (!v) return;
        if (v->is_string() && v->get<std::string>() == "never") *out = false;  // HF's third early_stopping value
        else if (v->is_boolean()) *out = v->get<bool>();
        else bad(key, "must be true or false", *v);
    }

private:
    const json* find(const char* key) const {
        auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }
    static std::string shown(const json& v) {
        std::string text = v.dump();
        return text.size() > 40 ? text.substr(0, 40) + "..." : text;
    }
    [[noreturn]] void bad(const char* key, const std::string& rule, const json& v) const {
        throw Error(ErrorCode::CorruptFile, source_ + ": '" + key + "' " + rule + ", got " + shown(v));
    }
    [[noreturn]] void out_of_range(const char* key, const FieldRange& range, const json& v) const {
        throw Error(ErrorCode::CorruptFile, range_message(source_ + ": '" + key + "'", range, shown(v)));
    }
    const json& j_;
    const std::string& source_;
};

// transformers' keys that are generation fields of the same name, type and meaning: read through the
// field table (t5s/generation_fields.h), which checks them as it checks a request's.
const std::set<std::string>& table_keys() {
    // clang-format off
    static const std::set<std::string> kKeys = {"encoder_no_repeat_ngram_size", "encoder_repetition_penalty", "bad_words_ids",
                                                "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff", "num_beam_groups", "diversity_penalty",
                                                "force_words_ids", "penalty_alpha",
                                                "suppress_tokens", "begin_suppress_tokens", "forced_bos_token_id", "forced_eos_token_id",
                                                "sequence_bias", "exponential_decay_length_penalty", "renormalize_logits", "max_time",
                                                "stop_strings"};
    // clang-format on
    return kKeys;
}

// The table keys `j` sets (null reads as absent), as GenerationConfig's table_settings and table_fields.
void read_table_keys(const json& j, const std::string& source, GenerationConfig* g) {
    json picked = json::object();
    for (const std::string& key : table_keys()) {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null()) continue;
        if (key == "sequence_bias" && it->is_object() && it->empty()) continue;  // {}: none, as this file used to take it
        picked[key] = *it;
        g->table_fields.push_back(key);
    }
    try {
        g->table_settings = generation_options_from_json(picked.dump());
    } catch (const Error& e) {
        throw Error(ErrorCode::CorruptFile, source + ": " + e.what());
    }
    if (const std::string outside = field_range_error(g->table_settings); !outside.empty())
        throw Error(ErrorCode::CorruptFile, source + ": " + outside);
}

// The keys parse_generation_config applies.
bool is_applied_key(const std::string& key) {
    if (table_keys().count(key)) return true;
    // clang-format off
    static const std::set<std::string> kApplied = {
        "decoder_start_token_id", "eos_token_id", "pad_token_id", "max_new_tokens", "max_length", "min_new_tokens", "min_length",
        "num_beams", "num_return_sequences", "top_k", "no_repeat_ngram_size", "do_sample", "early_stopping", "temperature",
        "top_p", "repetition_penalty", "length_penalty"};
    // clang-format on
    return kApplied.count(key) > 0;
}

// transformers' GenerationConfig keys that change no output of a T5 generate(): metadata, caching,
// what generate() returns, assisted decoding (the same output, faster), compilation.
bool is_bookkeeping_key(const std::string& key) {
    // clang-format off
    static const std::set<std::string> kBookkeeping = {
        "_from_model_config", "transformers_version", "_commit_hash", "bos_token_id", "use_cache", "cache_implementation",
        "cache_config", "return_legacy_cache", "prefill_chunk_size", "output_attentions", "output_hidden_states",
        "output_scores", "output_logits", "return_dict_in_generate", "num_assistant_tokens", "num_assistant_tokens_schedule",
        "assistant_confidence_threshold", "prompt_lookup_num_tokens", "max_matching_ngram_size", "assistant_early_exit",
        "assistant_lookbehind", "target_lookbehind", "compile_config", "disable_compile", "is_assistant", "low_memory"};
    // clang-format on
    return kBookkeeping.count(key) > 0;
}

// The generation settings of transformers T5 Studio does not apply yet, each with the values that
// turn it off (transformers' defaults: none of them changes the output).
const std::map<std::string, std::vector<json>>& unsupported_settings() {
    static const std::map<std::string, std::vector<json>> kUnsupported = {{"constraints", {}},
                                                                          {"remove_invalid_values", {false}},
                                                                          {"token_healing", {false}},
                                                                          {"guidance_scale", {1.0}},
                                                                          {"dola_layers", {}},
                                                                          {"watermarking_config", {}},
                                                                          {"forced_decoder_ids", {json::array()}}};
    return kUnsupported;
}

std::string shown_value(const json& v) {
    std::string shown = v.dump();
    return shown.size() > 40 ? shown.substr(0, 40) + "..." : shown;
}

// One warning per key of `j` that T5 Studio does not apply and that may change the output.
std::vector<std::string> unapplied_key_warnings(const json& j, const std::string& source) {
    std::vector<std::string> warnings;
    for (const auto& [key, value] : j.items()) {
        if (is_applied_key(key)) continue;
        const ForeignSetting kind = classify_foreign_setting(key, value.dump());
        if (kind == ForeignSetting::Bookkeeping || kind == ForeignSetting::Neutral) continue;
        warnings.push_back(source + ": '" + key + "' " + shown_value(value) + " is not applied (" +
                           (kind == ForeignSetting::Unsupported ? "T5 Studio does not support it yet"
                                                                : "not a generation setting T5 Studio knows") +
                           "): the output may differ from transformers'");
    }
    // transformers stops at any id of an eos_token_id list; the engine ends a candidate at the first only.
    const auto eos = j.find("eos_token_id");
    if (eos != j.end() && eos->is_array() && eos->size() > 1)
        warnings.push_back(source + ": 'eos_token_id' lists " + std::to_string(eos->size()) + " ids; only the first, " +
                           shown_value((*eos)[0]) + ", ends a candidate: the output may differ from transformers'");
    return warnings;
}

}  // namespace

ForeignSetting classify_foreign_setting(const std::string& key, const std::string& value_json) {
    if (is_bookkeeping_key(key)) return ForeignSetting::Bookkeeping;
    const auto& unsupported = unsupported_settings();
    const auto it = unsupported.find(key);
    if (it == unsupported.end()) return ForeignSetting::Unknown;
    const json value = json::parse(value_json, nullptr, /*allow_exceptions=*/false);
    if (value.is_null()) return ForeignSetting::Neutral;  // transformers' None: off
    for (const json& neutral : it->second)
        if (value == neutral || (value.is_number() && neutral.is_number() && value.get<double>() == neutral.get<double>()))
            return ForeignSetting::Neutral;
    return ForeignSetting::Unsupported;
}

std::string new_tokens_name_of(const std::string& length_key) {
    if (length_key == "max_length") return "max_new_tokens";
    if (length_key == "min_length") return "min_new_tokens";
    return "";
}

GenerationConfig parse_generation_config(const std::string& json_text, const std::string& source) {
    const json j = parse_json_text(json_text, source);
    if (!j.is_object()) throw Error(ErrorCode::CorruptFile, source + ": expected a JSON object");
    GenerationConfig g;
    g.present = true;
    Reader r(j, source);
    constexpr int64_t kMaxId = int64_t{1} << 31, kMaxTokens = 1 << 30;
    r.integer("decoder_start_token_id", &g.decoder_start_token_id, 0, kMaxId);
    r.integer("eos_token_id", &g.eos_token_id, 0, kMaxId);
    g.listed_eos_token_ids = r.id_list("eos_token_id", kMaxId);
    r.integer("pad_token_id", &g.pad_token_id, 0, kMaxId);
    r.integer("max_new_tokens", &g.max_new_tokens, 1, kMaxTokens);
    std::optional<int> max_length, min_length;
    r.integer("max_length", &max_length, 2, kMaxTokens);
    if (!g.max_new_tokens && max_length) g.max_new_tokens = *max_length - 1;  // the decoder start token counts
    r.integer("min_new_tokens", &g.min_new_tokens, 0, kMaxTokens);
    r.integer("min_length", &min_length, 0, kMaxTokens);
    if (!g.min_new_tokens && min_length) g.min_new_tokens = std::max(0, *min_length - 1);
    r.integer("num_beams", &g.num_beams, 1, 1 << 16);
    r.integer("num_return_sequences", &g.num_return_sequences, 1, 1 << 16);
    r.integer("top_k", &g.top_k, 0, kMaxId);
    r.integer("no_repeat_ngram_size", &g.no_repeat_ngram_size, 0, kMaxTokens);
    r.boolean("do_sample", &g.do_sample);
    r.boolean("early_stopping", &g.early_stopping);
    r.number("temperature", &g.temperature, 0.0, 1e6);
    r.number("top_p", &g.top_p, 0.0, 1.0);
    r.number("repetition_penalty", &g.repetition_penalty, 0.0, 1e6);
    r.number("length_penalty", &g.length_penalty, -1e6, 1e6);
    read_table_keys(j, source, &g);
    // transformers' top_k is 50 where the file names none, ours 0: with penalty_alpha, that top_k is
    // contrastive search's width (the output depends on it), so the folder gets transformers' 50.
    if (g.table_settings.penalty_alpha > 0.0f && !g.top_k) g.top_k = 50;
    g.warnings = unapplied_key_warnings(j, source);
    return g;
}

GenerationConfig load_generation_config(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return {};
    if (!std::filesystem::is_regular_file(file, ec)) throw Error(ErrorCode::CorruptFile, file.string() + ": not a regular file");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, file.string() + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_generation_config(ss.str(), file.string());
}

GenerationConfig load_model_generation_defaults(const std::filesystem::path& dir) {
    GenerationConfig g = load_generation_config(dir / "generation_config.json");
    const std::filesystem::path config = dir / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) return g;
    std::ifstream in(config, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return g;
    g.tasks = parse_model_tasks(ss.str(), config.string());
    if (const ModelTask* t = find_task(g.tasks, g.tasks.default_task)) {
        g.task_prefix = t->prefix;
        g.task_prefix_source = "config.json task '" + t->name + "' (" + kDefaultTaskKey + ")";
    }
    return g;
}

GenerationConfig with_task(GenerationConfig g, const std::string& name) {
    const ModelTask* t = find_task(g.tasks, name);
    if (!t) {
        std::string listed;
        for (const ModelTask& task : g.tasks.tasks) listed += (listed.empty() ? "" : ", ") + task.name;
        throw Error(ErrorCode::InvalidArgument, "no task '" + name + "': the model's config.json lists " +
                                                    (listed.empty() ? std::string("no tasks") : "the tasks " + listed));
    }
    g.task_prefix = t->prefix;
    g.task_prefix_source = "--task " + name;
    return g;
}

// The GenerationOptions fields a model folder's defaults set, each a std::optional of the same name
// in GenerationConfig: one list for what apply_generation_config applies and what
// generation_config_fields reports as applied (`info`'s sources).
// clang-format off
#define T5S_MODEL_DEFAULT_FIELDS(X)                                                                                 \
    X(max_new_tokens) X(min_new_tokens) X(num_beams) X(num_return_sequences) X(top_k) X(no_repeat_ngram_size)     \
    X(do_sample) X(early_stopping) X(temperature) X(top_p) X(repetition_penalty) X(length_penalty) X(task_prefix)
// clang-format on

void apply_generation_config(const GenerationConfig& g, const std::set<std::string>& given, GenerationOptions* o) {
#define T5S_APPLY(field) \
    if (g.field && !given.count(#field)) o->field = *g.field;
    T5S_MODEL_DEFAULT_FIELDS(T5S_APPLY)
#undef T5S_APPLY
    std::vector<std::string> table_fields;
    for (const std::string& name : g.table_fields)
        if (!given.count(name)) table_fields.push_back(name);
    *o = with_named_fields(*o, g.table_settings, table_fields);
}

void apply_generation_token_ids(const GenerationConfig& g, const std::string& source, ModelConfig* m) {
    auto take = [&](const std::optional<int64_t>& id, const char* key, int64_t* out) {
        if (!id) return;
        if (*id >= m->vocab_size) {
            throw Error(ErrorCode::CorruptFile, source + ": '" + key + "' " + std::to_string(*id) +
                                                    " is outside the vocabulary (config.json vocab_size " +
                                                    std::to_string(m->vocab_size) + ")");
        }
        *out = *id;
    };
    take(g.decoder_start_token_id, "decoder_start_token_id", &m->decoder_start_token_id);
    take(g.eos_token_id, "eos_token_id", &m->eos_token_id);
    for (int64_t id : g.listed_eos_token_ids) {
        int64_t ignored = 0;
        take(id, "eos_token_id", &ignored);  // the others are not used, but a list naming no token is corrupt
    }
    take(g.pad_token_id, "pad_token_id", &m->pad_token_id);
}

std::vector<std::string> generation_config_fields(const GenerationConfig& g) {
    std::vector<std::string> out;
#define T5S_LIST(field) \
    if (g.field) out.push_back(#field);
    T5S_MODEL_DEFAULT_FIELDS(T5S_LIST)
#undef T5S_LIST
    out.insert(out.end(), g.table_fields.begin(), g.table_fields.end());
    return out;
}
#undef T5S_MODEL_DEFAULT_FIELDS

std::string generation_config_to_json(const GenerationConfig& g) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
// clang-format off
#define T5S_SHOW(field) \
    if (g.field) j[#field] = *g.field;
    T5S_SHOW(decoder_start_token_id) T5S_SHOW(eos_token_id) T5S_SHOW(pad_token_id) T5S_SHOW(max_new_tokens)
    T5S_SHOW(min_new_tokens) T5S_SHOW(num_beams) T5S_SHOW(num_return_sequences) T5S_SHOW(do_sample)
    T5S_SHOW(early_stopping) T5S_SHOW(temperature) T5S_SHOW(top_k) T5S_SHOW(top_p) T5S_SHOW(repetition_penalty)
    T5S_SHOW(length_penalty) T5S_SHOW(no_repeat_ngram_size)
#undef T5S_SHOW
        // clang-format on
        const nlohmann::ordered_json table = nlohmann::ordered_json::parse(generation_options_to_json(g.table_settings));
    for (const std::string& name : g.table_fields) j[name] = table[name];
    return j.dump();
}

}  // namespace t5s
