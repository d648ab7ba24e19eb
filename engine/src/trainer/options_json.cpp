// TrainingOptions <-> JSON: what the history stores for a run, so that a run cut off by closing the
// app can be resumed with the settings it started with.
#include <nlohmann/json.hpp>

#include "enum_json.h"
#include "t5s/error.h"
#include "t5s/trainer.h"

namespace t5s {

namespace {

// Every field by its C++ name; X(name) for plain values.
#define T5S_TRAINING_FIELDS(X)                                                                                   \
    X(model_dir) X(init_config) X(vocab_size) X(data_file) X(extra_data_files) X(eval_file) X(eval_split)         \
    X(max_eval_pairs) X(out_dir) X(steps) X(epochs) X(batch_size) X(grad_accum) X(lr) X(warmup_steps)             \
    X(weight_decay) X(adam_beta1) X(adam_beta2) X(adam_eps) X(max_grad_norm) X(dropout)                         \
    X(gradient_checkpointing) X(threads) X(max_source_len) X(max_target_len) X(group_by_length) X(seed)         \
    X(eval_every) X(save_every) X(keep_last) X(patience) X(sample_count) X(sample_max_new_tokens) X(resume)      \
    X(max_time_s) X(auto_reduce_batch_on_oom) X(log_file) X(log_every) X(save_dtype_bf16) X(dist_timeout_s)   \
    X(lora) X(lora_r) X(lora_alpha) X(lora_dropout) X(lora_targets) X(lora_rslora) X(adapter_dir) X(merge_adapter)   \
    X(optimizer) X(schedule) X(precision) X(lora_base_precision) X(device)

}  // namespace

std::string training_options_to_json(const TrainingOptions& o) {
    nlohmann::json j;
#define T5S_PUT(f) j[#f] = o.f;
    T5S_TRAINING_FIELDS(T5S_PUT)
#undef T5S_PUT
    j["source_field"] = o.data.source_field;
    j["target_field"] = o.data.target_field;
    j["on_bad_row"] = o.data.on_bad_row;
    j["source_prefix"] = o.data.source_prefix;
    return j.dump();
}

TrainingOptions training_options_from_json(const std::string& text) {
    TrainingOptions o;
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        if (!j.is_object()) throw Error(ErrorCode::InvalidArgument, "training options: expected a JSON object");
#define T5S_GET(f) \
    if (j.contains(#f)) j.at(#f).get_to(o.f);
        T5S_TRAINING_FIELDS(T5S_GET)
#undef T5S_GET
        if (j.contains("source_field")) o.data.source_field = j.at("source_field").get<std::string>();
        if (j.contains("target_field")) o.data.target_field = j.at("target_field").get<std::string>();
        if (j.contains("on_bad_row")) j.at("on_bad_row").get_to(o.data.on_bad_row);
        if (j.contains("source_prefix")) o.data.source_prefix = j.at("source_prefix").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("training options: ") + e.what());
    }
    return o;
}

}  // namespace t5s
