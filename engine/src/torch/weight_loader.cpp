#include "torch/weight_loader.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "t5s/error.h"
#include "t5s/safetensors.h"
#include "torch/mapped_tensor.h"

namespace t5s {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Integer or boolean buffers that checkpoints carry beside the weights and that we never read:
// BERT's embeddings.position_ids / token_type_ids, GPT-style attention masks, batch-norm counters.
bool is_known_buffer(const std::string& name) {
    auto ends_with = [&](const std::string& suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    for (const char* suffix : {"position_ids", "token_type_ids", "num_batches_tracked", "attention_mask", ".attn.bias",
                               ".attn.masked_bias", ".masked_bias"}) {
        if (ends_with(suffix)) return true;
    }
    return false;
}

[[noreturn]] void not_a_weight(const fs::path& file, const std::string& name, const std::string& dtype) {
    throw Error(ErrorCode::Unsupported, file.string() + ": tensor '" + name + "' has dtype " + dtype +
                                            ", expected a floating-point weight (F32, F16, BF16)");
}

// A tensor of its own holding `view`'s bytes; the file pages it was read from leave this process's
// memory at once (keeping them as well doubled the load-time peak: t5-small fp32 file 242 MB +
// copies 242 MB). A later read of the mapping would fault them back in.
at::Tensor copy_of_view(const TensorView& view, at::ScalarType type) {
    at::Tensor t = at::empty(view.shape, at::TensorOptions().dtype(type));
    if (!view.nbytes) return t;
    std::memcpy(t.data_ptr(), view.data, view.nbytes);  // byte copy: the mapping may be unaligned
    drop_file_pages(view.data, view.nbytes);
    return t;
}

// The torch type of a stored weight; nullopt for a known buffer (skipped); throws for any other.
std::optional<at::ScalarType> to_torch(DType d, const fs::path& file, const std::string& name) {
    switch (d) {
        case DType::F32: return at::kFloat;
        case DType::F16: return at::kHalf;
        case DType::BF16: return at::kBFloat16;
        case DType::F64: return at::kDouble;
        default:
            if (is_known_buffer(name)) return std::nullopt;
            not_a_weight(file, name, to_string(d));
    }
}

void read_safetensors(const fs::path& file, WeightStorage storage, LoadedWeights& out) {
    auto st = SafetensorsFile::open(file);
    for (const auto& [name, view] : st->tensors()) {
        const std::optional<at::ScalarType> type = to_torch(view.dtype, file, name);
        if (!type) continue;
        at::Tensor t;
        if (storage == WeightStorage::Mapped && view.nbytes) t = map_tensor_view(st, view, *type);
        if (!t.defined()) t = copy_of_view(view, *type);
        out.tensors[name] = t;
    }
    out.files.push_back(file.string());
}

void read_torch_bin(const fs::path& file, LoadedWeights& out) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, file.string() + ": cannot open");
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    c10::IValue value;
    try {
        value = torch::jit::pickle_load(bytes);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        msg = msg.substr(0, msg.find('\n'));
        throw Error(ErrorCode::CorruptFile, file.string() + ": not a readable torch.save state dict (" + msg + ")");
    }
    if (!value.isGenericDict()) throw Error(ErrorCode::CorruptFile, file.string() + ": expected a state dict (name -> tensor)");
    for (const auto& item : value.toGenericDict()) {
        if (!item.key().isString() || !item.value().isTensor()) continue;
        const std::string& name = item.key().toStringRef();
        const at::Tensor& t = item.value().toTensor();
        if (!t.is_floating_point()) {
            if (is_known_buffer(name)) continue;
            not_a_weight(file, name, c10::toString(t.scalar_type()));
        }
        out.tensors[name] = t;
    }
    out.files.push_back(file.string());
}

std::vector<fs::path> shards_from_index(const fs::path& index) {
    std::ifstream in(index);
    if (!in) throw Error(ErrorCode::FileNotFound, index.string() + ": cannot open");
    json j;
    try {
        in >> j;
    } catch (const json::exception& e) {
        throw Error(ErrorCode::CorruptFile, index.string() + ": invalid JSON (" + e.what() + ")");
    }
    if (!j.contains("weight_map") || !j["weight_map"].is_object()) {
        throw Error(ErrorCode::CorruptFile, index.string() + ": no 'weight_map' object");
    }
    std::set<std::string> names;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
        if (!it.value().is_string())
            throw Error(ErrorCode::CorruptFile, index.string() + ": weight_map values must be file names");
        const std::string shard = it.value().get<std::string>();
        if (shard.find('/') != std::string::npos || shard == "..") {
            throw Error(ErrorCode::CorruptFile, index.string() + ": shard name '" + shard + "' must be a plain file name");
        }
        names.insert(shard);
    }
    std::vector<fs::path> files;
    for (const auto& n : names) files.push_back(index.parent_path() / n);
    return files;
}

std::string dtype_name(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return "F32";
        case at::kHalf: return "F16";
        case at::kBFloat16: return "BF16";
        case at::kDouble: return "F64";
        default: return c10::toString(t);
    }
}

std::string shape_str(at::IntArrayRef s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

}  // namespace

LoadedWeights load_checkpoint_tensors(const fs::path& dir, WeightStorage storage) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": model directory not found");
    LoadedWeights out;
    const fs::path st = dir / "model.safetensors", st_index = dir / "model.safetensors.index.json";
    const fs::path bin = dir / "pytorch_model.bin", bin_index = dir / "pytorch_model.bin.index.json";
    if (fs::exists(st)) {
        read_safetensors(st, storage, out);
    } else if (fs::exists(st_index)) {
        for (const auto& f : shards_from_index(st_index)) read_safetensors(f, storage, out);
        out.files.insert(out.files.begin(), st_index.string());
    } else if (fs::exists(bin)) {
        read_torch_bin(bin, out);
    } else if (fs::exists(bin_index)) {
        for (const auto& f : shards_from_index(bin_index)) {
            if (!fs::exists(f))
                throw Error(ErrorCode::FileNotFound, f.string() + ": shard listed in " + bin_index.string() + " is missing");
            read_torch_bin(f, out);
        }
        out.files.insert(out.files.begin(), bin_index.string());
    } else {
        throw Error(ErrorCode::FileNotFound, dir.string() +
                                                 ": no weights (model.safetensors, model.safetensors.index.json, "
                                                 "pytorch_model.bin or pytorch_model.bin.index.json)");
    }
    std::set<std::string> dtypes;
    for (const auto& [name, t] : out.tensors) dtypes.insert(dtype_name(t.scalar_type()));
    for (const auto& d : dtypes) out.stored_dtypes += (out.stored_dtypes.empty() ? "" : "+") + d;
    return out;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> t5_parameter_shapes(const ModelConfig& c) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> s;
    const int64_t d = c.d_model, inner = c.inner_dim(), ff = c.d_ff, h = c.num_heads, nb = c.relative_attention_num_buckets;
    s.push_back({"shared.weight", {c.vocab_size, d}});
    auto attention = [&](const std::string& p, bool bias) {
        s.push_back({p + ".q.weight", {inner, d}});
        s.push_back({p + ".k.weight", {inner, d}});
        s.push_back({p + ".v.weight", {inner, d}});
        s.push_back({p + ".o.weight", {d, inner}});
        if (bias) s.push_back({p + ".relative_attention_bias.weight", {nb, h}});
    };
    auto feed_forward = [&](const std::string& p) {
        if (c.is_gated_act) {
            s.push_back({p + ".DenseReluDense.wi_0.weight", {ff, d}});
            s.push_back({p + ".DenseReluDense.wi_1.weight", {ff, d}});
        } else {
            s.push_back({p + ".DenseReluDense.wi.weight", {ff, d}});
        }
        s.push_back({p + ".DenseReluDense.wo.weight", {d, ff}});
        s.push_back({p + ".layer_norm.weight", {d}});
    };
    for (int64_t i = 0; i < c.num_layers; ++i) {
        const std::string b = "encoder.block." + std::to_string(i);
        attention(b + ".layer.0.SelfAttention", i == 0);
        s.push_back({b + ".layer.0.layer_norm.weight", {d}});
        feed_forward(b + ".layer.1");
    }
    s.push_back({"encoder.final_layer_norm.weight", {d}});
    for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
        const std::string b = "decoder.block." + std::to_string(i);
        attention(b + ".layer.0.SelfAttention", i == 0);
        s.push_back({b + ".layer.0.layer_norm.weight", {d}});
        attention(b + ".layer.1.EncDecAttention", false);
        s.push_back({b + ".layer.1.layer_norm.weight", {d}});
        feed_forward(b + ".layer.2");
    }
    s.push_back({"decoder.final_layer_norm.weight", {d}});
    if (!c.tie_word_embeddings) s.push_back({"lm_head.weight", {c.vocab_size, d}});
    return s;
}

std::map<std::string, at::Tensor> select_t5_parameters(LoadedWeights& loaded, const ModelConfig& config,
                                                       const std::string& where) {
    auto& t = loaded.tensors;
    // Real checkpoints omit the aliases of shared.weight; accept whichever copy is present.
    if (!t.count("shared.weight")) {
        for (const char* alias : {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}) {
            if (t.count(alias)) {
                t["shared.weight"] = t[alias];
                break;
            }
        }
    }
    if (config.tie_word_embeddings && !t.count("shared.weight") && t.count("lm_head.weight"))
        t["shared.weight"] = t["lm_head.weight"];
    // Sizes from config.json are checked against the tensors first: a num_layers of 10^12 would
    // otherwise enumerate 10^12 block names before the first missing one is noticed.
    std::map<std::string, std::vector<int64_t>> table;
    for (const auto& [name, tensor] : t) table[name] = tensor.sizes().vec();
    check_config_against_tensors(config, table, where);
    std::map<std::string, at::Tensor> params;
    for (const auto& [name, shape] : t5_parameter_shapes(config)) {
        auto it = t.find(name);
        if (it == t.end()) throw Error(ErrorCode::CorruptFile, where + ": missing tensor '" + name + "'");
        if (it->second.sizes() != at::IntArrayRef(shape)) {
            throw Error(ErrorCode::CorruptFile, where + ": tensor '" + name + "' has shape " + shape_str(it->second.sizes()) +
                                                    " but config.json implies " + shape_str(shape));
        }
        params[name] = it->second;
    }
    return params;
}

}  // namespace t5s
