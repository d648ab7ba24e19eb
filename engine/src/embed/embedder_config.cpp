#include "embed/embedder_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/file_io.h"
#include "t5s/embedder.h"
#include "t5s/error.h"
#include "t5s/settings_fields.h"

namespace t5s::embed_detail {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

[[noreturn]] void unsupported(const std::string& what, const fs::path& file) {
    throw Error(ErrorCode::Unsupported, "unsupported: " + what + " in " + file.string());
}

[[noreturn]] void corrupt(const fs::path& file, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, file.string() + ": " + what);
}

json read_json(const fs::path& file, std::vector<std::string>& files) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw Error(ErrorCode::FileNotFound, file.string() + ": file not found");
    json j;
    try {
        j = json::parse(read_text(file));
    } catch (const json::exception& e) {
        corrupt(file, std::string("invalid JSON (") + e.what() + ")");
    }
    files.push_back(file.string());
    return j;
}

int int_field(const json& j, const char* key, const fs::path& file, int fallback = -1) {
    if (!j.contains(key) || j[key].is_null()) {
        if (fallback >= 0) return fallback;
        corrupt(file, std::string("missing field '") + key + "'");
    }
    if (!j[key].is_number_integer() || j[key].get<long long>() < 0 || j[key].get<long long>() > (1LL << 30)) {
        corrupt(file, std::string("field '") + key + "' must be a non-negative integer");
    }
    return j[key].get<int>();
}

bool bool_field(const json& j, const char* key, const fs::path& file, bool fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) corrupt(file, std::string("field '") + key + "' must be true or false");
    return j[key].get<bool>();
}

std::string string_field(const json& j, const char* key, const fs::path& file, const std::string& fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) corrupt(file, std::string("field '") + key + "' must be a string");
    return j[key].get<std::string>();
}

EncoderConfig read_encoder_config(const fs::path& file, std::vector<std::string>& files) {
    const json j = read_json(file, files);
    if (!j.is_object()) corrupt(file, "not a JSON object");
    EncoderConfig c;
    c.file = file;
    const std::string type = string_field(j, "model_type", file, "");
    if (type == "bert") c.architecture = "bert";
    else if (type == "xlm-roberta") c.architecture = "xlm-roberta";
    else unsupported("model_type '" + type + "' (supported: bert, xlm-roberta)", file);
    const std::string act = string_field(j, "hidden_act", file, "gelu");
    if (act != "gelu") unsupported("hidden_act '" + act + "' (supported: gelu)", file);
    const std::string pos = string_field(j, "position_embedding_type", file, "absolute");
    if (pos != "absolute") unsupported("position_embedding_type '" + pos + "'", file);
    if (bool_field(j, "is_decoder", file, false)) unsupported("is_decoder true", file);
    c.vocab_size = int_field(j, "vocab_size", file);
    c.hidden_size = int_field(j, "hidden_size", file);
    c.num_layers = int_field(j, "num_hidden_layers", file);
    c.num_heads = int_field(j, "num_attention_heads", file);
    c.intermediate_size = int_field(j, "intermediate_size", file);
    c.max_position_embeddings = int_field(j, "max_position_embeddings", file);
    c.type_vocab_size = int_field(j, "type_vocab_size", file, 2);
    c.pad_token_id = int_field(j, "pad_token_id", file, c.architecture == "bert" ? 0 : 1);
    if (j.contains("layer_norm_eps") && j["layer_norm_eps"].is_number()) c.layer_norm_eps = j["layer_norm_eps"].get<double>();
    if (c.hidden_size == 0 || c.num_heads == 0 || c.hidden_size % c.num_heads != 0) {
        corrupt(file, "hidden_size must be a positive multiple of num_attention_heads");
    }
    if (c.vocab_size == 0 || c.type_vocab_size == 0 || c.intermediate_size == 0) {
        corrupt(file, "vocab_size, type_vocab_size and intermediate_size must be positive");
    }
    c.position_offset = c.architecture == "xlm-roberta" ? c.pad_token_id + 1 : 0;
    if (c.max_position_embeddings <= c.position_offset + 2) corrupt(file, "max_position_embeddings too small");
    return c;
}

// Classic: pooling_mode_<x>_token(s) flags; sentence-transformers 5: "pooling_mode": "mean" or a list.
std::string read_pooling(const fs::path& file, int hidden_size, std::vector<std::string>& files) {
    const json j = read_json(file, files);
    if (!j.is_object()) corrupt(file, "not a JSON object");
    std::vector<std::string> modes;
    if (j.contains("pooling_mode")) {
        const json& m = j["pooling_mode"];
        if (m.is_string()) modes.push_back(m.get<std::string>());
        else if (m.is_array())
            for (const auto& x : m) modes.push_back(x.is_string() ? x.get<std::string>() : x.dump());
        else corrupt(file, "field 'pooling_mode' must be a string or a list");
    } else {
        static const std::pair<const char*, const char*> kFlags[] = {
            {"pooling_mode_cls_token", "cls"},
            {"pooling_mode_mean_tokens", "mean"},
            {"pooling_mode_max_tokens", "max"},
            {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"},
            {"pooling_mode_weightedmean_tokens", "weightedmean"},
            {"pooling_mode_lasttoken", "lasttoken"}};
        for (const auto& [key, name] : kFlags)
            if (bool_field(j, key, file, false)) modes.push_back(name);
    }
    if (modes.empty()) corrupt(file, "no pooling mode set");
    if (modes.size() > 1) {
        std::string all;
        for (const auto& m : modes) all += (all.empty() ? "" : "+") + m;
        unsupported("pooling " + all + " (one mode at a time)", file);
    }
    if (modes[0] != "mean" && modes[0] != "cls" && modes[0] != "max") unsupported("pooling " + modes[0], file);
    const char* dim_key = j.contains("word_embedding_dimension") ? "word_embedding_dimension" : "embedding_dimension";
    const int dim = int_field(j, dim_key, file, hidden_size);
    if (dim != hidden_size) {
        corrupt(file, std::string(dim_key) + " " + std::to_string(dim) + " differs from the encoder's hidden_size " +
                          std::to_string(hidden_size));
    }
    return modes[0];
}

DenseConfig read_dense(const fs::path& dir, int in_dim, std::vector<std::string>& files) {
    const fs::path file = dir / "config.json";
    const json j = read_json(file, files);
    if (!j.is_object()) corrupt(file, "not a JSON object");
    DenseConfig d;
    d.dir = dir;
    d.in_features = int_field(j, "in_features", file);
    d.out_features = int_field(j, "out_features", file);
    d.bias = bool_field(j, "bias", file, true);
    const std::string act = string_field(j, "activation_function", file, "torch.nn.modules.activation.Tanh");
    if (act == "torch.nn.modules.activation.Tanh") d.tanh = true;
    else if (act != "torch.nn.modules.linear.Identity")
        unsupported("Dense activation_function '" + act + "' (supported: Tanh, Identity)", file);
    if (d.in_features != in_dim) {
        corrupt(file, "in_features " + std::to_string(d.in_features) + " but the module before gives " + std::to_string(in_dim));
    }
    if (d.out_features == 0) corrupt(file, "out_features must be positive");
    return d;
}

// "sentence_transformers.models.Pooling", "sentence_transformers.sentence_transformer.modules.pooling.Pooling", ...
std::string module_kind(const std::string& type) {
    const size_t dot = type.rfind('.');
    return dot == std::string::npos ? type : type.substr(dot + 1);
}

fs::path module_dir(const fs::path& root, const json& m, const fs::path& modules_file) {
    const std::string path = string_field(m, "path", modules_file, "");
    if (path.find("..") != std::string::npos || (!path.empty() && path[0] == '/')) {
        corrupt(modules_file, "module path '" + path + "' must stay inside the folder");
    }
    const fs::path dir = path.empty() ? root : root / path;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw Error(ErrorCode::FileNotFound, dir.string() + ": module folder named in " + modules_file.string() + " not found");
    }
    return dir;
}

void read_transformer_settings(EmbedderSpec& spec) {
    const fs::path file = spec.transformer_dir / "sentence_bert_config.json";
    std::error_code ec;
    if (!fs::exists(file, ec)) return;
    const json j = read_json(file, spec.files);
    if (!j.is_object()) corrupt(file, "not a JSON object");
    spec.max_seq_length = int_field(j, "max_seq_length", file, 0);
    if (spec.max_seq_length == 1) corrupt(file, range_message("max_seq_length", at_least(2, ">= 2, or 0 (none given)"), 1));
    spec.do_lower_case = bool_field(j, "do_lower_case", file, false);
}

}  // namespace

EmbedderSpec read_embedder_spec(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": embedder folder not found");
    EmbedderSpec spec;
    const fs::path modules_file = dir / "modules.json";
    const json modules = read_json(modules_file, spec.files);
    if (!modules.is_array() || modules.empty()) corrupt(modules_file, "expected a non-empty list of modules");
    int dim = 0;
    for (size_t i = 0; i < modules.size(); ++i) {
        const json& m = modules[i];
        if (!m.is_object()) corrupt(modules_file, "module " + std::to_string(i) + " is not an object");
        const std::string kind = module_kind(string_field(m, "type", modules_file, ""));
        const bool first = i == 0, after_pooling = !spec.pooling.empty();
        if (kind == "Transformer" && first) {
            spec.transformer_dir = module_dir(dir, m, modules_file);
            spec.encoder = read_encoder_config(spec.transformer_dir / "config.json", spec.files);
            read_transformer_settings(spec);
            dim = spec.encoder.hidden_size;
        } else if (kind == "Pooling" && i == 1) {
            spec.pooling = read_pooling(module_dir(dir, m, modules_file) / "config.json", dim, spec.files);
        } else if (kind == "Dense" && after_pooling && !spec.normalize) {
            spec.dense.push_back(read_dense(module_dir(dir, m, modules_file), dim, spec.files));
            dim = spec.dense.back().out_features;
        } else if (kind == "Normalize" && after_pooling && !spec.normalize) {
            spec.normalize = true;
        } else {
            unsupported("module " + std::to_string(i) + " '" + string_field(m, "type", modules_file, "") +
                            "' at this position (supported: Transformer, Pooling, Dense..., Normalize)",
                        modules_file);
        }
    }
    if (spec.pooling.empty()) unsupported("a pipeline without a Pooling module after the Transformer", modules_file);
    return spec;
}

}  // namespace t5s::embed_detail

namespace t5s {

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) {
        throw Error(ErrorCode::InvalidArgument,
                    "cosine_similarity: embeddings of sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()));
    }
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        dot += static_cast<double>(a[i]) * b[i];
        na += static_cast<double>(a[i]) * a[i];
        nb += static_cast<double>(b[i]) * b[i];
    }
    if (na == 0 || nb == 0) return 0;
    return std::clamp(dot / std::sqrt(na * nb), -1.0, 1.0);
}

}  // namespace t5s
