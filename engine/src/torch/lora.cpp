#include "torch/lora.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <set>

#include "base/file_io.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/safetensors.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kPrefix = "base_model.model.";
constexpr const char* kSuffixA = ".lora_A.weight";
constexpr const char* kSuffixB = ".lora_B.weight";

std::string shape_text(at::IntArrayRef s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

// module path -> [out, in] for every linear layer LoRA may adapt.
std::map<std::string, std::vector<int64_t>> linear_shapes(const ModelConfig& config) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& m : lora_linear_modules(config)) out[m.path] = {m.out, m.in};
    return out;
}

bool set_in_json(const json& cfg, const char* key) {
    if (!cfg.contains(key)) return false;
    const json& v = cfg[key];
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_object() || v.is_array() || v.is_string()) return !v.empty() && v != "";
    return true;
}

void reject_unsupported(const json& cfg, const fs::path& file) {
    // Options that change the math or the module set; present and non-empty means we would
    // compute something other than PEFT.
    static const char* const kKeys[] = {"use_dora",
                                        "modules_to_save",
                                        "layers_to_transform",
                                        "layers_pattern",
                                        "rank_pattern",
                                        "alpha_pattern",
                                        "fan_in_fan_out",
                                        "layer_replication",
                                        "lora_bias",
                                        "use_qalora",
                                        "trainable_token_indices",
                                        "target_parameters",
                                        "exclude_modules",
                                        "alora_invocation_tokens",
                                        "use_bdlora",
                                        "megatron_config",
                                        "arrow_config"};
    for (const char* key : kKeys)
        if (set_in_json(cfg, key))
            throw Error(ErrorCode::Unsupported, std::string("unsupported: ") + key + " in " + file.string());
    if (cfg.contains("bias") && cfg["bias"] != "none")
        throw Error(ErrorCode::Unsupported, "unsupported: bias " + cfg["bias"].dump() + " in " + file.string());
    if (cfg.value("peft_type", std::string("LORA")) != "LORA")
        throw Error(ErrorCode::Unsupported, "unsupported: peft_type " + cfg["peft_type"].dump() + " in " + file.string());
}

at::Tensor to_fp32_tensor(const TensorView& v, const fs::path& file) {
    at::ScalarType t;
    switch (v.dtype) {
        case DType::F32: t = at::kFloat; break;
        case DType::F16: t = at::kHalf; break;
        case DType::BF16: t = at::kBFloat16; break;
        default:
            throw Error(ErrorCode::Unsupported,
                        file.string() + ": " + v.name + ": dtype " + to_string(v.dtype) + " is not a float type");
    }
    at::Tensor out = at::empty(v.shape, at::TensorOptions().dtype(t));
    if (v.nbytes) std::memcpy(out.data_ptr(), v.data, v.nbytes);
    return out.to(at::kFloat);
}

}  // namespace

double LoraSettings::scale() const { return rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r); }

int64_t LoraAdapter::parameter_count() const {
    int64_t n = 0;
    for (const auto& [path, m] : modules) n += m.a.numel() + m.b.numel();
    return n;
}

LoraSettings read_lora_config(const fs::path& dir) {
    const fs::path file = dir / "adapter_config.json";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": adapter folder not found");
    if (!fs::exists(file, ec))
        throw Error(ErrorCode::FileNotFound, dir.string() + ": no adapter_config.json in the adapter folder");
    json cfg;
    try {
        cfg = json::parse(read_text(file));
    } catch (const json::exception& e) {
        throw Error(ErrorCode::CorruptFile, file.string() + ": not valid JSON (" + e.what() + ")");
    }
    if (!cfg.is_object()) throw Error(ErrorCode::CorruptFile, file.string() + ": not a JSON object");
    LoraSettings s;
    try {
        reject_unsupported(cfg, file);
        s.r = cfg.at("r").get<int64_t>();
        s.alpha = cfg.value("lora_alpha", 8.0);
        s.dropout = cfg.value("lora_dropout", 0.0);
        s.rslora = cfg.value("use_rslora", false);
        if (cfg.contains("base_model_name_or_path") && cfg["base_model_name_or_path"].is_string())
            s.base_model = cfg["base_model_name_or_path"].get<std::string>();
        const json& t = cfg.at("target_modules");
        if (t.is_string()) s.targets = {t.get<std::string>()};
        else s.targets = t.get<std::vector<std::string>>();
    } catch (const json::exception& e) {
        throw Error(ErrorCode::CorruptFile, file.string() + ": " + e.what());
    }
    if (s.r <= 0) throw Error(ErrorCode::CorruptFile, range_message(file.string() + ": r", at_least(1), s.r));
    if (!settings_in_range(from_below(0, 1), s.dropout))
        throw Error(ErrorCode::CorruptFile, range_message(file.string() + ": lora_dropout", from_below(0, 1), s.dropout));
    return s;
}

LoraAdapter load_lora_adapter(const fs::path& dir, const ModelConfig& config) {
    LoraAdapter adapter;
    adapter.settings = read_lora_config(dir);
    const fs::path file = dir / "adapter_model.safetensors";
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        const bool bin = fs::exists(dir / "adapter_model.bin", ec);
        throw Error(bin ? ErrorCode::Unsupported : ErrorCode::FileNotFound,
                    dir.string() + (bin ? ": adapter_model.bin (pickle) is not read; save the adapter with safe_serialization"
                                        : ": no adapter_model.safetensors in the adapter folder"));
    }
    const auto shapes = linear_shapes(config);
    auto st = SafetensorsFile::open(file);
    for (const auto& [name, view] : st->tensors()) {
        const size_t n = std::strlen(kSuffixA);  // same length as kSuffixB
        const bool is_a = name.size() > n && name.compare(name.size() - n, n, kSuffixA) == 0;
        const bool is_b = name.size() > n && name.compare(name.size() - n, n, kSuffixB) == 0;
        if (name.rfind(kPrefix, 0) != 0 || (!is_a && !is_b))
            throw Error(ErrorCode::Unsupported,
                        file.string() + ": unsupported tensor " + name + " (only lora_A / lora_B weights)");
        const std::string path = name.substr(std::strlen(kPrefix), name.size() - std::strlen(kPrefix) - n);
        auto it = shapes.find(path);
        if (it == shapes.end())
            throw Error(ErrorCode::CorruptFile, file.string() + ": " + name + ": no such linear layer in the base model");
        const std::vector<int64_t> want = is_a ? std::vector<int64_t>{adapter.settings.r, it->second[1]}
                                               : std::vector<int64_t>{it->second[0], adapter.settings.r};
        if (view.shape != want) {
            throw Error(ErrorCode::InvalidArgument, file.string() + ": " + name + " has shape " + shape_text(view.shape) +
                                                        " but the base model needs " + shape_text(want));
        }
        (is_a ? adapter.modules[path].a : adapter.modules[path].b) = to_fp32_tensor(view, file);
    }
    for (const auto& [path, m] : adapter.modules) {
        if (!m.a.defined() || !m.b.defined())
            throw Error(ErrorCode::CorruptFile, file.string() + ": " + kPrefix + path + " has only one of lora_A / lora_B");
    }
    if (adapter.modules.empty()) throw Error(ErrorCode::CorruptFile, file.string() + ": no LoRA tensors");
    return adapter;
}

void save_lora_adapter(const fs::path& dir, const LoraAdapter& adapter) {
    fs::create_directories(dir);
    const LoraSettings& s = adapter.settings;
    std::vector<at::Tensor> keep;
    std::vector<TensorToWrite> out;
    for (const auto& [path, m] : adapter.modules) {
        for (const auto& [suffix, t] : {std::pair<const char*, at::Tensor>{kSuffixA, m.a}, {kSuffixB, m.b}}) {
            at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
            keep.push_back(c);
            out.push_back({kPrefix + path + suffix, DType::F32, std::vector<int64_t>(c.sizes().begin(), c.sizes().end()),
                           c.data_ptr(), static_cast<size_t>(c.numel()) * sizeof(float)});
        }
    }
    write_safetensors(dir / "adapter_model.safetensors", out);
    const json targets = s.targets.size() == 1 && s.targets[0] == "all-linear" ? json("all-linear") : json(s.targets);
    json cfg = {{"peft_type", "LORA"},
                {"task_type", "SEQ_2_SEQ_LM"},
                {"r", s.r},
                {"lora_alpha", s.alpha},
                {"lora_dropout", s.dropout},
                {"target_modules", targets},
                {"bias", "none"},
                {"use_rslora", s.rslora},
                {"use_dora", false},
                {"fan_in_fan_out", false},
                {"inference_mode", true},
                {"init_lora_weights", true},
                {"modules_to_save", nullptr},
                {"layers_to_transform", nullptr},
                {"layers_pattern", nullptr},
                {"rank_pattern", json::object()},
                {"alpha_pattern", json::object()},
                {"revision", nullptr},
                {"base_model_name_or_path", s.base_model.empty() ? json(nullptr) : json(s.base_model)}};
    write_file_atomic(dir / "adapter_config.json", cfg.dump(2) + "\n");
}

LoraAdapter init_lora_adapter(const ModelConfig& config, const LoraSettings& settings, int64_t seed) {
    LoraAdapter adapter;
    adapter.settings = settings;
    const auto shapes = linear_shapes(config);
    at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
    for (const std::string& path : lora_module_paths(config, settings.targets, "target_modules")) {
        const auto& shape = shapes.at(path);
        const double bound = 1.0 / std::sqrt(static_cast<double>(shape[1]));
        LoraModule m;
        m.a = at::empty({settings.r, shape[1]}, at::kFloat).uniform_(-bound, bound, gen);
        m.b = at::zeros({shape[0], settings.r}, at::kFloat);
        adapter.modules[path] = m;
    }
    return adapter;
}

void merge_lora_into(std::map<std::string, at::Tensor>& params, const LoraAdapter& adapter) {
    const double scale = adapter.settings.scale();
    for (const auto& [path, m] : adapter.modules) {
        at::Tensor& w = params.at(path + ".weight");
        at::Tensor delta = at::matmul(m.b.to(at::kFloat), m.a.to(at::kFloat)) * scale;
        w = (w.to(at::kFloat) + delta.to(w.device())).to(w.scalar_type());
    }
}

}  // namespace t5s
