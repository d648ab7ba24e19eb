#pragma once
// `t5studio serve`'s settings, declared once: the struct and its field table (t5s/settings_fields.h)
// from which serve's flags, --help and range checks (cli_serve.cpp) and the settings /health
// reports are derived. Adding a setting: its field here, its row in serve_fields(); then its use.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "t5s/learning.h"
#include "t5s/settings_fields.h"

namespace t5s::serve {

struct ServeConfig {
    std::string model_dir;
    std::string adapter;   // LoRA adapter folder (PEFT format) applied to every replica; empty: none
    std::string embedder;  // sentence-transformers folder for the similarity score; empty: none
    std::string host = "127.0.0.1";
    int port = 8000;
    std::string api_key;  // empty = none
    int max_batch = 64;
    int max_queue = 256;
    std::string dtype = "fp32", device = "auto";
    std::vector<std::string> devices;  // --devices; empty = one replica on --device
    int threads = 0;
    int replicas = 1;
    std::string history;
    double drain_timeout_s = 30.0;
    // The learning loop and the Label Studio ML backend (serve/learner.h, serve/labelstudio.cpp).
    std::string learn_dir;  // versions folder; empty: no learning (Label Studio predictions still work)
    // The rounds' settings: --learn-every, --learn-max-steps and --learn-max-time set `every`,
    // `max_steps` and `max_time_s` (JSON learn_every, learn_max_steps, learn_max_time_s); the rest keep
    // the loop's defaults. Its threads are serve's --threads (Service).
    LearningRoundSettings learn;
    // The task prefix of every input, resolved as `generate` resolves --task/--prefix (Service):
    // --task NAME (a task of the model's config.json) or --task-prefix TEXT ("" included: no
    // prefix) over the model's default task. task_prefix_given tells "" given from "" unset.
    std::string task;
    std::string task_prefix;
    bool task_prefix_given = false;  // set by the flags' reader; not a setting of its own
    std::string basic_auth;          // "user:password" Label Studio sends (HTTP Basic); empty: none
    // Who may reach the server (serve/request_guard.h): browser origins and Host names besides the
    // loopback ones, and how long a client may take to send one request.
    std::vector<std::string> allow_origins;  // "scheme://host[:port]" or "*"; empty: no browser page
    std::vector<std::string> allow_hosts;    // Host names/addresses; "*": any
    double read_timeout_s = 20;
    // Augmentation recipes requests may name (serve/serve_recipes.h): "NAME=FILE" each, and a
    // folder whose every *.json is one (NAME: the file's stem); Label Studio's /predict runs
    // labelstudio_recipe when set.
    std::vector<std::string> recipes;
    std::string recipes_dir;
    std::string labelstudio_recipe;
};

using ServeMember =
    std::variant<std::string ServeConfig::*, int ServeConfig::*, int64_t ServeConfig::*, double ServeConfig::*,
                 std::vector<std::string> ServeConfig::*, int64_t LearningRoundSettings::*, double LearningRoundSettings::*>;
using ServeField = SettingsField<ServeMember>;

}  // namespace t5s::serve

namespace t5s {
template <>
inline LearningRoundSettings& settings_part<LearningRoundSettings, serve::ServeConfig>(serve::ServeConfig& c) {
    return c.learn;
}
}  // namespace t5s

namespace t5s::serve {

// Every setting, in the order of `serve --help`.
const std::vector<ServeField>& serve_fields();
// Every setting but the secrets (the API key, the Basic credentials), by its JSON name.
nlohmann::json serve_config_to_json(const ServeConfig& config);
// The first setting outside its range ("--port must be in [0, 65535] (got 70000)"), "" when all are inside.
std::string serve_config_error(const ServeConfig& config);

}  // namespace t5s::serve
