#include "t5s/model_config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_text.h"
#include "t5s/error.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, source + ": " + what);
}

std::string type_name(const json& v) {
    if (v.is_number_float()) return "a non-integer or out-of-range number";
    if (v.is_number()) return "the number " + v.dump();
    return std::string(v.type_name()) == "null" ? "null" : std::string("a ") + v.type_name();
}

[[noreturn]] void wrong_type(const std::string& source, const char* key, const char* expected, const json& v) {
    fail(source, std::string("'") + key + "' must be " + expected + ", got " + type_name(v));
}

// Sizes above this cannot be a T5 checkpoint (and products of them would overflow int64).
constexpr int64_t kMaxDim = int64_t{1} << 31;

// A size: a positive integer. Absent keys take the T5Config default; null is an error except
// where T5Config itself reads None as "use the default" (`null_is_default`).
int64_t get_positive(const json& j, const char* key, int64_t fallback, const std::string& source, bool null_is_default = false) {
    if (!j.contains(key) || (null_is_default && j[key].is_null())) return fallback;
    const json& v = j[key];
    if (!v.is_number_integer()) wrong_type(source, key, "a positive integer", v);
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxDim) : v.get<int64_t>() > kMaxDim) {
        fail(source, std::string("'") + key + "' is " + v.dump() + ", more than the largest size T5 Studio accepts (" +
                         std::to_string(kMaxDim) + ")");
    }
    const int64_t n = v.get<int64_t>();
    if (n <= 0) fail(source, range_message(std::string("'") + key + "'", above(0), static_cast<double>(n)));
    return n;
}

// A token id; transformers also writes eos_token_id as a list (the first one is the model's).
int64_t get_id(const json& j, const char* key, int64_t fallback, const std::string& source) {
    if (!j.contains(key)) return fallback;
    const json& v = j[key].is_array() && !j[key].empty() ? j[key][0] : j[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxDim))) {
        wrong_type(source, key, "a token id (an integer inside the vocabulary)", v);
    }
    return v.get<int64_t>();
}

// Every id of an id list (eos_token_id may be one) inside the vocabulary, not only the first.
void check_id_list(const json& j, const char* key, int64_t vocab_size, const std::string& source) {
    if (!j.contains(key) || !j[key].is_array()) return;
    for (size_t i = 0; i < j[key].size(); ++i) {
        const json& v = j[key][i];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size) {
            fail(source, std::string("'") + key + "' entry " + std::to_string(i) + " (" + v.dump() +
                             ") must be a token id inside the vocabulary (0.." + std::to_string(vocab_size - 1) + ")");
        }
    }
}

double get_number(const json& j, const char* key, double fallback, const std::string& source) {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_number()) wrong_type(source, key, "a number", j[key]);
    return j[key].get<double>();
}

std::string get_string(const json& j, const char* key, const std::string& fallback, const std::string& source) {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_string()) wrong_type(source, key, "a string", j[key]);
    return j[key].get<std::string>();
}

bool get_bool(const json& j, const char* key, bool fallback, const std::string& source) {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_boolean()) wrong_type(source, key, "true or false", j[key]);
    return j[key].get<bool>();
}

// 1 + the largest N of the tensors named "<prefix>N.…" (0 when there are none).
int64_t count_blocks(const std::map<std::string, std::vector<int64_t>>& shapes, const std::string& prefix) {
    int64_t blocks = 0;
    for (auto it = shapes.lower_bound(prefix); it != shapes.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        int64_t n = 0;
        size_t i = prefix.size();
        for (; i < it->first.size() && i < prefix.size() + 9 && std::isdigit(static_cast<unsigned char>(it->first[i])); ++i) {
            n = n * 10 + (it->first[i] - '0');
        }
        if (i > prefix.size()) blocks = std::max(blocks, n + 1);
    }
    return blocks;
}

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string r = "[";
    for (size_t i = 0; i < shape.size(); ++i) r += (i ? "," : "") + std::to_string(shape[i]);
    return r + "]";
}

}  // namespace

ModelConfig parse_model_config(const std::string& json_text, const std::string& source) {
    const json j = parse_json_text(json_text, source);
    if (!j.is_object()) fail(source, "expected a JSON object");

    ModelConfig c;
    c.raw_json = json_text;
    c.model_type = get_string(j, "model_type", "t5", source);
    if (c.model_type != "t5" && c.model_type != "mt5") {
        throw Error(ErrorCode::Unsupported,
                    source + ": model_type '" + c.model_type + "' is not supported (T5 Studio runs 't5' and 'mt5' checkpoints)");
    }
    if (j.contains("architectures") && j["architectures"].is_array()) {
        for (const auto& a : j["architectures"]) {
            const std::string arch = a.is_string() ? a.get<std::string>() : "";
            if (arch != "T5ForConditionalGeneration" && arch != "MT5ForConditionalGeneration" && arch != "T5Model" &&
                arch != "MT5Model" && arch != "T5WithLMHeadModel") {
                throw Error(ErrorCode::Unsupported, source + ": architecture '" + arch + "' is not supported");
            }
        }
    }
    c.vocab_size = get_positive(j, "vocab_size", c.vocab_size, source);
    c.d_model = get_positive(j, "d_model", c.d_model, source);
    c.d_kv = get_positive(j, "d_kv", c.d_kv, source);
    c.d_ff = get_positive(j, "d_ff", c.d_ff, source);
    c.num_layers = get_positive(j, "num_layers", c.num_layers, source);
    c.num_decoder_layers = get_positive(j, "num_decoder_layers", c.num_layers, source, /*null_is_default=*/true);
    c.num_heads = get_positive(j, "num_heads", c.num_heads, source);
    c.relative_attention_num_buckets =
        get_positive(j, "relative_attention_num_buckets", c.relative_attention_num_buckets, source);
    c.relative_attention_max_distance =
        get_positive(j, "relative_attention_max_distance", c.relative_attention_max_distance, source);
    c.n_positions = get_positive(j, "n_positions", 0, source, /*null_is_default=*/true);
    c.dropout_rate = get_number(j, "dropout_rate", c.dropout_rate, source);
    c.layer_norm_epsilon = get_number(j, "layer_norm_epsilon", c.layer_norm_epsilon, source);
    constexpr FieldRange kDropouts = from_below(0, 1), kEpsilons{0, 1, true, true};  // [0, 1) and (0, 1)
    if (!settings_in_range(kDropouts, c.dropout_rate)) fail(source, range_message("'dropout_rate'", kDropouts, c.dropout_rate));
    if (!settings_in_range(kEpsilons, c.layer_norm_epsilon))
        fail(source, range_message("'layer_norm_epsilon'", kEpsilons, c.layer_norm_epsilon));
    // mT5 configs default tie_word_embeddings to false; T5 to true.
    c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", c.model_type != "mt5", source);
    c.pad_token_id = get_id(j, "pad_token_id", 0, source);
    c.eos_token_id = get_id(j, "eos_token_id", 1, source);
    c.decoder_start_token_id = get_id(j, "decoder_start_token_id", c.pad_token_id, source);
    c.tasks = parse_model_tasks(json_text, source);
    if (j.contains("torch_dtype") && j["torch_dtype"].is_string()) c.torch_dtype = j["torch_dtype"].get<std::string>();
    else if (j.contains("dtype") && j["dtype"].is_string()) c.torch_dtype = j["dtype"].get<std::string>();

    // feed_forward_proj exactly as T5Config interprets it.
    c.feed_forward_proj = get_string(j, "feed_forward_proj", c.model_type == "mt5" ? "gated-gelu" : "relu", source);
    std::vector<std::string> parts;
    {
        std::stringstream ss(c.feed_forward_proj);
        std::string part;
        while (std::getline(ss, part, '-')) parts.push_back(part);
    }
    if (parts.empty() || parts.size() > 2 || (parts.size() == 2 && parts[0] != "gated")) {
        throw Error(ErrorCode::Unsupported, source + ": feed_forward_proj '" + c.feed_forward_proj +
                                                "' is not valid (expected 'ACT' or 'gated-ACT', e.g. 'relu', 'gated-gelu')");
    }
    c.is_gated_act = parts[0] == "gated";
    c.dense_act_fn = parts.back();
    if (c.feed_forward_proj == "gated-gelu") c.dense_act_fn = "gelu_new";
    static const char* kActs[] = {"relu", "gelu", "gelu_new", "silu", "swish", "gelu_pytorch_tanh", "tanh", "sigmoid"};
    bool known = false;
    for (const char* a : kActs) known |= c.dense_act_fn == a;
    if (!known) {
        throw Error(ErrorCode::Unsupported, source + ": feed_forward_proj '" + c.feed_forward_proj + "' uses activation '" +
                                                c.dense_act_fn + "', which is not supported");
    }
    if (c.decoder_start_token_id < 0 || c.decoder_start_token_id >= c.vocab_size || c.eos_token_id < 0 ||
        c.eos_token_id >= c.vocab_size || c.pad_token_id < 0 || c.pad_token_id >= c.vocab_size) {
        fail(source, "token ids (pad_token_id " + std::to_string(c.pad_token_id) + ", eos_token_id " +
                         std::to_string(c.eos_token_id) + ", decoder_start_token_id " + std::to_string(c.decoder_start_token_id) +
                         ") must be inside the vocabulary (0.." + std::to_string(c.vocab_size - 1) + ")");
    }
    check_id_list(j, "eos_token_id", c.vocab_size, source);
    return c;
}

ModelConfig load_model_config(const std::filesystem::path& config_json) {
    std::ifstream in(config_json, std::ios::binary);
    if (!in) {
        throw Error(ErrorCode::FileNotFound, config_json.string() + ": cannot open (missing or unreadable)");
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_model_config(ss.str(), config_json.string());
}

void check_config_against_tensors(const ModelConfig& c, const std::map<std::string, std::vector<int64_t>>& shapes,
                                  const std::string& where) {
    auto mismatch = [&](const std::string& what) { throw Error(ErrorCode::CorruptFile, where + ": " + what); };
    const int64_t encoder_blocks = count_blocks(shapes, "encoder.block."),
                  decoder_blocks = count_blocks(shapes, "decoder.block.");
    // More blocks than the config uses is what transformers loads too (with a warning); fewer is not.
    if (encoder_blocks < c.num_layers) {
        mismatch("missing tensor 'encoder.block." + std::to_string(encoder_blocks) +
                 ".layer.0.SelfAttention.q.weight' (config.json num_layers is " + std::to_string(c.num_layers) +
                 " but the checkpoint has " + std::to_string(encoder_blocks) + " encoder blocks)");
    }
    if (decoder_blocks < c.num_decoder_layers) {
        mismatch("missing tensor 'decoder.block." + std::to_string(decoder_blocks) +
                 ".layer.0.SelfAttention.q.weight' (config.json num_decoder_layers is " + std::to_string(c.num_decoder_layers) +
                 " but the checkpoint has " + std::to_string(decoder_blocks) + " decoder blocks)");
    }
    const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
        {"shared.weight", {c.vocab_size, c.d_model}},
        {"encoder.embed_tokens.weight", {c.vocab_size, c.d_model}},
        {"decoder.embed_tokens.weight", {c.vocab_size, c.d_model}},
        {"lm_head.weight", {c.vocab_size, c.d_model}},
        {"encoder.block.0.layer.0.SelfAttention.q.weight", {c.inner_dim(), c.d_model}},
        {"encoder.block.0.layer.0.SelfAttention.o.weight", {c.d_model, c.inner_dim()}},
        {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {c.relative_attention_num_buckets, c.num_heads}},
        {"decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {c.relative_attention_num_buckets, c.num_heads}},
        {c.is_gated_act ? "encoder.block.0.layer.1.DenseReluDense.wi_0.weight"
                        : "encoder.block.0.layer.1.DenseReluDense.wi.weight",
         {c.d_ff, c.d_model}},
        {"encoder.block.0.layer.1.DenseReluDense.wo.weight", {c.d_model, c.d_ff}},
    };
    for (const auto& [name, shape] : expected) {
        auto it = shapes.find(name);
        if (it != shapes.end() && it->second != shape) {
            mismatch("tensor '" + name + "' has shape " + shape_text(it->second) + " but config.json implies " +
                     shape_text(shape));
        }
    }
}

std::string model_config_to_json(const ModelConfig& c) {
    json j = json::object();
    if (!c.raw_json.empty()) {
        try {
            j = json::parse(c.raw_json);
        } catch (...) {
            j = json::object();
        }
    }
    j["architectures"] = {c.model_type == "mt5" ? "MT5ForConditionalGeneration" : "T5ForConditionalGeneration"};
    j["model_type"] = c.model_type;
    j["vocab_size"] = c.vocab_size;
    j["d_model"] = c.d_model;
    j["d_kv"] = c.d_kv;
    j["d_ff"] = c.d_ff;
    j["num_layers"] = c.num_layers;
    j["num_decoder_layers"] = c.num_decoder_layers;
    j["num_heads"] = c.num_heads;
    j["relative_attention_num_buckets"] = c.relative_attention_num_buckets;
    j["relative_attention_max_distance"] = c.relative_attention_max_distance;
    j["dropout_rate"] = c.dropout_rate;
    j["layer_norm_epsilon"] = c.layer_norm_epsilon;
    if (c.n_positions > 0) j["n_positions"] = c.n_positions;
    j["feed_forward_proj"] = c.feed_forward_proj;
    j["tie_word_embeddings"] = c.tie_word_embeddings;
    j["decoder_start_token_id"] = c.decoder_start_token_id;
    j["eos_token_id"] = c.eos_token_id;
    j["pad_token_id"] = c.pad_token_id;
    j["is_encoder_decoder"] = true;
    j["torch_dtype"] = "float32";
    for (const ModelTask& t : c.tasks.tasks) {
        json& entry = j["task_specific_params"][t.name];
        if (!entry.is_object()) entry = json::object();
        entry["prefix"] = t.prefix;  // the entry's other settings (max_length, ...) stay
    }
    if (c.tasks.default_task.empty()) j.erase(kDefaultTaskKey);
    else j[kDefaultTaskKey] = c.tasks.default_task;
    return j.dump(2) + "\n";
}

ModelTasks parse_model_tasks(const std::string& json_text, const std::string& source) {
    const json j = parse_json_text(json_text, source);
    ModelTasks out;
    if (!j.is_object()) return out;
    if (auto it = j.find("task_specific_params"); it != j.end() && it->is_object()) {
        for (const auto& [name, entry] : it->items()) {
            if (!entry.is_object() || !entry.contains("prefix") || !entry["prefix"].is_string()) continue;
            out.tasks.push_back({name, entry["prefix"].get<std::string>()});
        }
    }
    if (auto it = j.find(kDefaultTaskKey); it != j.end() && !it->is_null()) {
        if (!it->is_string()) wrong_type(source, kDefaultTaskKey, "a task name", *it);
        out.default_task = it->get<std::string>();
        if (!find_task(out, out.default_task))
            fail(source, std::string("'") + kDefaultTaskKey + "' names '" + out.default_task +
                             "', which task_specific_params does not list with a \"prefix\"");
    }
    return out;
}

const ModelTask* find_task(const ModelTasks& tasks, const std::string& name) {
    for (const ModelTask& t : tasks.tasks)
        if (t.name == name) return &t;
    return nullptr;
}

std::string task_name_for_prefix(const std::string& prefix) {
    std::string name;
    bool gap = false;
    for (unsigned char ch : prefix) {
        if (std::isalnum(ch)) {
            if (gap && !name.empty()) name += '_';
            name += static_cast<char>(std::tolower(ch));
            gap = false;
        } else if (ch < 0x80) {
            gap = true;  // spaces and punctuation separate words; other scripts' bytes are dropped
        }
    }
    return name.empty() ? "task" : name;
}

ModelConfig with_training_task(ModelConfig config, const std::string& prefix) {
    ModelTasks& t = config.tasks;
    if (prefix.empty()) {
        t.default_task.clear();
        return config;
    }
    const std::string name = task_name_for_prefix(prefix);
    bool listed = false;
    for (ModelTask& task : t.tasks)
        if (task.name == name) task.prefix = prefix, listed = true;
    if (!listed) t.tasks.push_back({name, prefix});
    t.default_task = name;
    return config;
}

}  // namespace t5s
