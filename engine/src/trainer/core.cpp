#include "trainer/core.h"

#include <ATen/autocast_mode.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <set>

#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "torch/weight_loader.h"

namespace t5s {
namespace fs = std::filesystem;

namespace {

TrainableModel finish(ModelConfig config, std::map<std::string, at::Tensor> params) {
    TrainableModel m;
    m.config = std::move(config);
    std::set<const void*> seen;
    for (auto& [name, t] : params) {
        if (!t.requires_grad()) t.requires_grad_(true);
        if (!seen.insert(t.unsafeGetTensorImpl()).second) continue;
        m.named.push_back({name, t, name.find("layer_norm") == std::string::npos});
    }
    m.params = params;
    m.net = std::make_unique<T5Network>(m.config, std::move(params));
    return m;
}

}  // namespace

TrainableModel load_trainable(const fs::path& dir, at::Device device) {
    ModelConfig config = load_model_config(dir / "config.json");
    LoadedWeights loaded = load_checkpoint_tensors(dir);
    auto params = select_t5_parameters(loaded, config, loaded.files.empty() ? dir.string() : loaded.files.back());
    loaded.tensors.clear();
    std::map<const void*, at::Tensor> converted;  // keep ties: one converted tensor per source tensor
    for (auto& [name, t] : params) {
        const void* key = t.unsafeGetTensorImpl();
        auto it = converted.find(key);
        if (it == converted.end()) it = converted.emplace(key, t.to(device, at::kFloat).contiguous().clone()).first;
        t = it->second;
    }
    return finish(std::move(config), std::move(params));
}

std::shared_ptr<LoraAdapter> make_lora_trainable(TrainableModel& m, LoraAdapter adapter, at::Device device, Precision base) {
    for (auto& [name, t] : m.params) t.requires_grad_(false);
    if (base != Precision::Fp32) {
        const at::ScalarType held = base == Precision::Bf16 ? at::kBFloat16 : base == Precision::Fp16 ? at::kHalf : at::kChar;
        m.net->hold_frozen_base(held);
        for (auto it = m.params.begin(); it != m.params.end();)
            it = m.net->params().count(it->first) ? std::next(it) : m.params.erase(it);
    }
    auto shared = std::make_shared<LoraAdapter>(std::move(adapter));
    m.named.clear();
    for (auto& [path, mod] : shared->modules) {
        mod.a = mod.a.to(device, at::kFloat).contiguous().requires_grad_(true);
        mod.b = mod.b.to(device, at::kFloat).contiguous().requires_grad_(true);
        m.named.push_back({"base_model.model." + path + ".lora_A.weight", mod.a, true});
        m.named.push_back({"base_model.model." + path + ".lora_B.weight", mod.b, true});
    }
    m.net->set_adapter(shared.get());
    return shared;
}

TrainableModel init_trainable(const ModelConfig& c, uint64_t seed, at::Device device) {
    at::Generator gen = at::detail::createCPUGenerator(seed);
    const double factor = 1.0;
    std::map<std::string, at::Tensor> params;
    for (const auto& [name, shape] : t5_parameter_shapes(c)) {
        at::Tensor t = at::empty(shape, at::kFloat);
        auto normal = [&](double std) { t.normal_(0.0, std, gen); };
        auto ends = [&](const std::string& s) {
            return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
        };
        if (name.find("layer_norm") != std::string::npos) t.fill_(factor * 1.0);
        else if (name == "shared.weight" || name == "lm_head.weight") normal(factor * 1.0);
        else if (ends(".wi.weight") || ends(".wi_0.weight") || ends(".wi_1.weight"))
            normal(factor * std::pow(double(c.d_model), -0.5));
        else if (ends(".wo.weight")) normal(factor * std::pow(double(c.d_ff), -0.5));
        else if (ends(".q.weight")) normal(factor * std::pow(double(c.d_model * c.d_kv), -0.5));
        else if (ends(".k.weight") || ends(".v.weight")) normal(factor * std::pow(double(c.d_model), -0.5));
        else if (ends(".o.weight")) normal(factor * std::pow(double(c.num_heads * c.d_kv), -0.5));
        else if (ends("relative_attention_bias.weight")) normal(factor * std::pow(double(c.d_model), -0.5));
        else throw Error(ErrorCode::Internal, "no initialiser for " + name);
        params[name] = t.to(device);
    }
    return finish(c, std::move(params));
}

Batch make_batch_from_ids(const std::vector<std::vector<int>>& sources, const std::vector<std::vector<int>>& targets,
                          at::Device device) {
    Batch b;
    const int64_t B = static_cast<int64_t>(sources.size());
    size_t S = 1, T = 1;
    for (const auto& s : sources) S = std::max(S, s.size());
    for (const auto& t : targets) T = std::max(T, t.size());
    at::Tensor ids = at::zeros({B, static_cast<int64_t>(S)}, at::kLong);
    at::Tensor mask = at::zeros({B, static_cast<int64_t>(S)}, at::kLong);
    at::Tensor labels = at::full({B, static_cast<int64_t>(T)}, -100, at::kLong);
    auto pi = ids.accessor<int64_t, 2>();
    auto pm = mask.accessor<int64_t, 2>();
    auto pl = labels.accessor<int64_t, 2>();
    for (int64_t r = 0; r < B; ++r) {
        for (size_t j = 0; j < sources[r].size(); ++j) pi[r][j] = sources[r][j], pm[r][j] = 1;
        for (size_t j = 0; j < targets[r].size(); ++j) pl[r][j] = targets[r][j];
        b.source_tokens += static_cast<int64_t>(sources[r].size());
        b.target_tokens += static_cast<int64_t>(targets[r].size());
    }
    b.input_ids = ids.to(device);
    b.attention_mask = mask.to(device);
    b.labels = labels.to(device);
    return b;
}

Batch make_batch(const std::vector<TokenizedPair>& data, const std::vector<int64_t>& rows, at::Device device) {
    std::vector<std::vector<int>> s, t;
    for (int64_t r : rows) s.push_back(data[r].source), t.push_back(data[r].target);
    return make_batch_from_ids(s, t, device);
}

AutocastGuard::AutocastGuard(at::Device device, TrainPrecision precision) {
    if (precision == TrainPrecision::Fp32) return;
    active_ = true;
    type_ = device.type();
    prev_enabled_ = at::autocast::is_autocast_enabled(type_);
    prev_dtype_ = at::autocast::get_autocast_dtype(type_);
    at::autocast::set_autocast_enabled(type_, true);
    at::autocast::set_autocast_dtype(type_, precision == TrainPrecision::Bf16 ? at::kBFloat16 : at::kHalf);
    at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
    if (!active_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(type_, prev_enabled_);
    at::autocast::set_autocast_dtype(type_, prev_dtype_);
}

at::Tensor forward_loss(const T5Network& net, const Batch& b, TrainPrecision precision) {
    AutocastGuard autocast(net.device(), precision);
    at::Tensor enc = net.encode(b.input_ids, b.attention_mask);
    at::Tensor dec = net.decode(net.shift_right(b.labels), enc, b.attention_mask);
    at::Tensor logits = net.lm_logits(dec);
    return T5Network::loss(logits, b.labels);
}

TokenizedPair tokenize_pair(const Tokenizer& tok, const std::string& source, const std::string& target, int max_source_len,
                            int max_target_len) {
    TokenizedPair p;
    p.source = tok.encode(source);
    p.target = tok.encode(target);
    p.full_source_len = static_cast<int64_t>(p.source.size());
    p.full_target_len = static_cast<int64_t>(p.target.size());
    auto cut = [&](std::vector<int>& ids, int max_len) {
        if (static_cast<int>(ids.size()) > max_len) {
            ids.resize(static_cast<size_t>(max_len));
            ids.back() = tok.eos_id();
        }
    };
    cut(p.source, max_source_len);
    cut(p.target, max_target_len);
    return p;
}

}  // namespace t5s
