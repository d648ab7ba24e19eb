// serve's field table (serve/serve_config.h). Flag names, help lines and defaults are contracts
// (`t5studio serve --help`); every flag with a range refuses values outside it (a usage error).
// A help line states its default as {default}, filled from ServeConfig{} (t5s/help_defaults.h).
#include "serve/serve_config.h"

#include "t5s/settings_json.h"

namespace t5s::serve {
namespace {

using C = ServeConfig;
using Round = LearningRoundSettings;  // ServeConfig::learn
constexpr FlagUse kModelFlag = FlagUse::Model, kRuntime = FlagUse::Runtime, kCustom = FlagUse::Custom;

constexpr auto row = settings_checked_row<ServeMember>;

std::vector<ServeField> serve_rows() {
    return {
        row("model_dir", &C::model_dir, "model", "DIR", "model folder").via(kModelFlag),
        row("adapter", &C::adapter, "adapter", "DIR", "LoRA adapter folder (PEFT format) applied to the model"),
        row("embedder", &C::embedder, "embedder", "DIR",
            "sentence-embedding model (sentence-transformers folder): similarity score, filters and rank")
            .via(kModelFlag),
        row("host", &C::host, "host", "H", "address to listen on (default {default}; others need --api-key-file)"),
        row("port", &C::port, "port", "P", "TCP port (default {default}; 0 = a free one, printed)", from_to(0, 65535)),
        row("api_key", &C::api_key, "api-key-file", "F", "file holding the Bearer key clients must send")
            .via(kCustom)
            .kept_secret(),
        row("max_batch", &C::max_batch, "max-batch", "N", "rows (candidates, beams) per decoding step (default {default})",
            from_to(1, 1 << 16)),
        row("max_queue", &C::max_queue, "max-queue", "N", "requests waiting before 503 (default {default})", from_to(1, 1 << 20)),
        row("dtype", &C::dtype, "dtype", "D", "").via(kRuntime),  // serve's runtime group: --dtype, --device, --threads
        row("device", &C::device, "device", "D", "").via(kRuntime),
        row("threads", &C::threads, "threads", "N", "", at_least(0)).via(kRuntime),
        row("replicas", &C::replicas, "replicas", "N",
            "model replicas on the CPU, shortest queue first, sharing --threads (default {default})", from_to(1, 64)),
        row("devices", &C::devices, "devices", "LIST", "one replica per device, e.g. cuda:0,cuda:1 (or cpu)").via(kCustom),
        row("history", &C::history, "history", "PATH", "record every served request in this history"),
        row("drain_timeout_s", &C::drain_timeout_s, "drain-timeout", "S",
            "on SIGTERM/SIGINT, seconds to finish requests (default {default})", at_least(0, ">= 0 seconds")),
        row("learn_dir", &C::learn_dir, "learn-dir", "DIR",
            "learning loop: adapter versions folder (needs --history); annotations train the next version"),
        row("learn_every", &Round::every, "learn-every", "N",
            "new annotated pairs per automatic learning round (default {default}; 0 = only on request)", at_least(0)),
        row("learn_max_steps", &Round::max_steps, "learn-max-steps", "N",
            "optimizer steps of a learning round, at most (default {default})", at_least(1)),
        row("learn_max_time_s", &Round::max_time_s, "learn-max-time", "S",
            "seconds of training of a learning round, at most (default {default})", at_least(0, ">= 0 seconds")),
        row("task", &C::task, "task", "NAME",
            "use the prefix of this task of the model's config.json (task_specific_params; `info` lists them) instead of "
            "--task-prefix"),
        row("task_prefix", &C::task_prefix, "task-prefix", "TEXT",
            "task prefix of every input (e.g. \"paraphrase: \"): /augment's default, Label Studio predictions and the learning "
            "loop's pairs (default: the model's default task's, as generate; \"\" none; /health shows it and its source)"),
        row("basic_auth", &C::basic_auth, "basic-auth-file", "F",
            "file holding USER:PASSWORD that clients such as Label Studio send as HTTP Basic (on every route but the probes, "
            "like the Bearer key)")
            .via(kCustom)
            .kept_secret(),
        row("allow_origins", &C::allow_origins, "allow-origin", "ORIGIN",
            "a web page origin (e.g. http://localhost:8080) whose browser requests are served (default: none; a request "
            "with another Origin header gets 403)"),
        row("allow_hosts", &C::allow_hosts, "allow-host", "NAME",
            "a Host header name clients may use besides localhost, loopback addresses and --host (\"*\": any; default: none; "
            "another Host gets 403; bound to 0.0.0.0 or ::, any Host is served)"),
        row("read_timeout_s", &C::read_timeout_s, "read-timeout", "S",
            "seconds a client has to send one request's headers and body, else 408 (default {default})", from_to(0.1, 3600)),
        row("recipes", &C::recipes, "recipe", "NAME=FILE",
            "an augmentation recipe (docs/recipes.md) that requests run with \"recipe\": \"NAME\"; read, checked and its step "
            "models loaded at start"),
        row("recipes_dir", &C::recipes_dir, "recipes", "DIR",
            "every *.json of this folder as --recipe NAME=FILE, NAME the file's stem"),
        row("labelstudio_recipe", &C::labelstudio_recipe, "labelstudio-recipe", "NAME",
            "Label Studio's /predict runs this configured recipe; each prediction lists its candidates' routes"),
    };
}

}  // namespace

const std::vector<ServeField>& serve_fields() {
    static const std::vector<ServeField> fields = serve_rows();
    return fields;
}

nlohmann::json serve_config_to_json(const ServeConfig& config) { return settings_to_json(serve_fields(), config); }

std::string serve_config_error(const ServeConfig& config) { return settings_first_range_error(serve_fields(), config); }

}  // namespace t5s::serve
