#include <algorithm>
#include <set>

#include "t5s/error.h"
#include "t5s/lora.h"

namespace t5s {
namespace {

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

bool matches_target(const std::string& path, const std::string& target) {
    if (target == "all-linear" || path == target) return true;
    return path.size() > target.size() && path.compare(path.size() - target.size(), target.size(), target) == 0 &&
           path[path.size() - target.size() - 1] == '.';
}

}  // namespace

std::vector<LoraLinear> lora_linear_modules(const ModelConfig& c) {
    const int64_t d = c.d_model, inner = c.inner_dim(), f = c.d_ff;
    std::vector<LoraLinear> out;
    auto attention = [&](const std::string& p) {
        for (const char* n : {"q", "k", "v"}) out.push_back({p + n, inner, d});
        out.push_back({p + "o", d, inner});
    };
    auto feed_forward = [&](const std::string& p) {
        if (c.is_gated_act) {
            out.push_back({p + "wi_0", f, d});
            out.push_back({p + "wi_1", f, d});
        } else {
            out.push_back({p + "wi", f, d});
        }
        out.push_back({p + "wo", d, f});
    };
    for (int64_t i = 0; i < c.num_layers; ++i) {
        const std::string b = "encoder.block." + std::to_string(i);
        attention(b + ".layer.0.SelfAttention.");
        feed_forward(b + ".layer.1.DenseReluDense.");
    }
    for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
        const std::string b = "decoder.block." + std::to_string(i);
        attention(b + ".layer.0.SelfAttention.");
        attention(b + ".layer.1.EncDecAttention.");
        feed_forward(b + ".layer.2.DenseReluDense.");
    }
    std::sort(out.begin(), out.end(), [](const LoraLinear& a, const LoraLinear& b) { return a.path < b.path; });
    return out;
}

std::vector<std::string> lora_target_names(const ModelConfig& config) {
    if (config.is_gated_act) return {"q", "k", "v", "o", "wi_0", "wi_1", "wo"};
    return {"q", "k", "v", "o", "wi", "wo"};
}

std::vector<std::string> parse_lora_targets(const std::string& text, const ModelConfig& config) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        if (!name.empty()) out.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (out.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "--lora-targets: empty; valid: " + join(lora_target_names(config)) + ", all-linear");
    lora_module_paths(config, out, "--lora-targets");
    return out;
}

std::vector<std::string> lora_module_paths(const ModelConfig& config, const std::vector<std::string>& targets,
                                           const std::string& where) {
    const auto modules = lora_linear_modules(config);
    std::set<std::string> selected;
    for (const auto& target : targets) {
        bool any = false;
        for (const auto& m : modules)
            if (matches_target(m.path, target)) selected.insert(m.path), any = true;
        if (!any) {
            throw Error(ErrorCode::InvalidArgument, where + ": unknown LoRA target '" + target +
                                                        "'; valid: " + join(lora_target_names(config)) + ", all-linear");
        }
    }
    return {selected.begin(), selected.end()};
}

int64_t lora_trainable_parameters(const ModelConfig& config, int64_t r, const std::vector<std::string>& targets) {
    const auto paths = lora_module_paths(config, targets, "target_modules");
    const std::set<std::string> chosen(paths.begin(), paths.end());
    int64_t n = 0;
    for (const auto& m : lora_linear_modules(config))
        if (chosen.count(m.path)) n += r * (m.in + m.out);
    return n;
}

}  // namespace t5s
