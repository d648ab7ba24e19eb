#include "t5s/model_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "t5s/error.h"

namespace t5s {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, source + ": " + what);
}

int64_t get_positive(const json& j, const char* key, int64_t fallback, const std::string& source) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number_integer()) fail(source, std::string("'") + key + "' must be an integer");
    int64_t v = j[key].get<int64_t>();
    if (v <= 0) fail(source, std::string("'") + key + "' must be > 0, got " + std::to_string(v));
    return v;
}

int64_t get_id(const json& j, const char* key, int64_t fallback, const std::string& source) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (j[key].is_array() && !j[key].empty() && j[key][0].is_number_integer()) return j[key][0].get<int64_t>();
    if (!j[key].is_number_integer()) fail(source, std::string("'") + key + "' must be an integer");
    return j[key].get<int64_t>();
}

double get_number(const json& j, const char* key, double fallback, const std::string& source) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number()) fail(source, std::string("'") + key + "' must be a number");
    return j[key].get<double>();
}

}  // namespace

ModelConfig parse_model_config(const std::string& json_text, const std::string& source) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::parse_error& e) {
        fail(source, std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object()) fail(source, "expected a JSON object");

    ModelConfig c;
    c.raw_json = json_text;
    c.model_type = j.value("model_type", std::string("t5"));
    if (c.model_type != "t5" && c.model_type != "mt5") {
        throw Error(ErrorCode::Unsupported, source + ": model_type '" + c.model_type +
                                                "' is not supported (T5 Studio runs 't5' and 'mt5' checkpoints)");
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
    c.num_decoder_layers = get_positive(j, "num_decoder_layers", c.num_layers, source);
    c.num_heads = get_positive(j, "num_heads", c.num_heads, source);
    c.relative_attention_num_buckets = get_positive(j, "relative_attention_num_buckets", c.relative_attention_num_buckets, source);
    c.relative_attention_max_distance = get_positive(j, "relative_attention_max_distance", c.relative_attention_max_distance, source);
    c.dropout_rate = get_number(j, "dropout_rate", c.dropout_rate, source);
    c.layer_norm_epsilon = get_number(j, "layer_norm_epsilon", c.layer_norm_epsilon, source);
    if (c.dropout_rate < 0 || c.dropout_rate >= 1) fail(source, "'dropout_rate' must be in [0, 1)");
    if (c.layer_norm_epsilon <= 0) fail(source, "'layer_norm_epsilon' must be > 0");
    // mT5 configs default tie_word_embeddings to false; T5 to true.
    c.tie_word_embeddings = j.value("tie_word_embeddings", c.model_type != "mt5");
    c.pad_token_id = get_id(j, "pad_token_id", 0, source);
    c.eos_token_id = get_id(j, "eos_token_id", 1, source);
    c.decoder_start_token_id = get_id(j, "decoder_start_token_id", c.pad_token_id, source);
    if (j.contains("torch_dtype") && j["torch_dtype"].is_string()) c.torch_dtype = j["torch_dtype"].get<std::string>();
    else if (j.contains("dtype") && j["dtype"].is_string()) c.torch_dtype = j["dtype"].get<std::string>();

    // feed_forward_proj exactly as T5Config interprets it.
    c.feed_forward_proj = j.value("feed_forward_proj", std::string(c.model_type == "mt5" ? "gated-gelu" : "relu"));
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
        throw Error(ErrorCode::Unsupported, source + ": feed_forward_proj '" + c.feed_forward_proj +
                                                "' uses activation '" + c.dense_act_fn + "', which is not supported");
    }
    if (c.decoder_start_token_id < 0 || c.decoder_start_token_id >= c.vocab_size ||
        c.eos_token_id < 0 || c.eos_token_id >= c.vocab_size || c.pad_token_id < 0 || c.pad_token_id >= c.vocab_size) {
        fail(source, "token ids (pad/eos/decoder_start) must be inside the vocabulary");
    }
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
    j["feed_forward_proj"] = c.feed_forward_proj;
    j["tie_word_embeddings"] = c.tie_word_embeddings;
    j["decoder_start_token_id"] = c.decoder_start_token_id;
    j["eos_token_id"] = c.eos_token_id;
    j["pad_token_id"] = c.pad_token_id;
    j["is_encoder_decoder"] = true;
    j["torch_dtype"] = "float32";
    return j.dump(2) + "\n";
}

}  // namespace t5s
