#include "common/json_output.h"

#include "common/span_json.h"

#include <iostream>

#include "t5s/device.h"
#include "t5s/error.h"
#include "t5s/score_names.h"

namespace t5s::cli {

void print_json(const nlohmann::json& j) {
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::cout.flush();
}

nlohmann::json to_json(const ModelInfo& i) {
    const ModelConfig& c = i.config;
    nlohmann::json kernels = nlohmann::json::object();  // kernel -> choice (t5s/kernel_policy.h)
    for (const auto& [name, choice] : i.kernels) kernels[name] = choice;
    return {
        {"model_dir", i.dir.string()},
        {"model_type", i.model_type},
        {"variant", i.variant},
        {"architecture",
         {{"d_model", c.d_model},
          {"d_kv", c.d_kv},
          {"d_ff", c.d_ff},
          {"num_heads", c.num_heads},
          {"num_layers", c.num_layers},
          {"num_decoder_layers", c.num_decoder_layers},
          {"relative_attention_num_buckets", c.relative_attention_num_buckets},
          {"relative_attention_max_distance", c.relative_attention_max_distance},
          {"feed_forward_proj", c.feed_forward_proj},
          {"dense_act_fn", c.dense_act_fn},
          {"tie_word_embeddings", c.tie_word_embeddings},
          {"layer_norm_epsilon", c.layer_norm_epsilon},
          {"decoder_start_token_id", c.decoder_start_token_id},
          {"eos_token_id", c.eos_token_id},
          {"pad_token_id", c.pad_token_id}}},
        {"parameter_count", i.parameter_count},
        {"stored_dtype", i.stored_dtype},
        {"precision", i.precision},
        {"device", i.device},
        {"threads", i.threads},
        {"weight_bytes", i.weight_bytes},
        {"matmul_kernel", i.matmul_kernel},
        {"cpu_class", i.cpu_class},
        {"cpu_class_detected", i.cpu_class_detected},
        {"kernels", kernels},
        {"vocab_size", c.vocab_size},
        {"tokenizer_vocab_size", i.tokenizer_vocab},
        {"files", i.files},
        {"content_hash", i.content_hash},
        {"generation_config", nlohmann::json::parse(generation_config_to_json(i.generation_config))},
    };
}

}  // namespace t5s::cli

namespace t5s::cli {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json result_json(const GenerationResult& r, bool keep_dropped) {
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& c : r.candidates) {
        nlohmann::json j = {{"text", c.text}, {"ids", c.ids}, {"score", c.score}};
        add_candidate_scores(c, &j);
        if (!r.spans.empty()) add_candidate_spans(c, &j);
        add_candidate_route(c, &j);
        cands.push_back(std::move(j));
    }
    nlohmann::json j = {{"input", r.input}, {"candidates", cands}};
    if (!r.spans.empty()) j["spans"] = spans_to_json(r.spans);
    if (r.seed >= 0) j["seed"] = r.seed;
    add_result_scores(r, keep_dropped, &j);
    return j;
}

void add_candidate_spans(const Candidate& c, nlohmann::json* j) {
    (*j)["spans"] = spans_to_json(c.spans);
    (*j)["forced_spans"] = c.forced_spans;
}

void add_candidate_scores(const Candidate& c, nlohmann::json* j) {
    for_each_score(c.scores, [&](const char* name, const std::optional<double>& value) { (*j)[name] = optional_number(value); });
}

void add_candidate_route(const Candidate& c, nlohmann::json* j) {
    if (!c.route.empty()) (*j)["route"] = route_to_json(c.route);
}

void add_result_scores(const GenerationResult& r, bool keep_dropped, nlohmann::json* j) {
    (*j)["diversity"] = optional_number(r.diversity);
    if (!keep_dropped) return;
    nlohmann::json dropped = nlohmann::json::array();
    for (const auto& d : r.dropped) {
        nlohmann::json c = {{"text", d.candidate.text}, {"score", d.candidate.score}, {"reason", to_string(d.reason)}};
        add_candidate_scores(d.candidate, &c);
        add_candidate_route(d.candidate, &c);
        dropped.push_back(std::move(c));
    }
    (*j)["dropped"] = std::move(dropped);
}

nlohmann::json profile_json(const DeviceProfile& p) {
    return {{"device", to_string(p.device)}, {"name", p.name},           {"precision", to_string(p.precision)},
            {"free_bytes", p.free_bytes},    {"max_batch", p.max_batch}, {"reason", p.reason}};
}

}  // namespace t5s::cli
