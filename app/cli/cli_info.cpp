// t5studio info --model DIR [--json] [--dtype D] [--device D] [--threads N]
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"

namespace t5s::cli {
namespace {

// The tasks config.json lists and the prefix `generate` and `serve` apply without --prefix, with
// where it comes from: a default prefix is never applied unseen.
void add_tasks(const GenerationConfig& g, nlohmann::json* j) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const ModelTask& t : g.tasks.tasks)
        tasks.push_back({{"name", t.name}, {"prefix", t.prefix}, {"default", t.name == g.tasks.default_task}});
    (*j)["tasks"] = tasks;
    (*j)["task_prefix"] =
        g.task_prefix ? nlohmann::json{{"prefix", *g.task_prefix}, {"source", g.task_prefix_source}} : nlohmann::json(nullptr);
}

std::string tasks_text(const GenerationConfig& g) {
    std::string text;
    for (const ModelTask& t : g.tasks.tasks)
        text +=
            (text.empty() ? "" : ", ") + t.name + " \"" + t.prefix + "\"" + (t.name == g.tasks.default_task ? " (default)" : "");
    return text.empty() ? "none listed" : text + " (generate --task NAME)";
}

std::string prefix_text(const GenerationConfig& g) {
    if (!g.task_prefix) return "none by default (--prefix TEXT or --task NAME)";
    return "\"" + *g.task_prefix + "\" by default, from " + g.task_prefix_source + " (--prefix \"\" turns it off)";
}

// The settings `generate` and `serve` start from, each with where it comes from: the model's
// generation_config.json (or config.json's default task, for the prefix) or T5 Studio's default.
nlohmann::json effective_settings(const GenerationConfig& g) {
    GenerationOptions o;
    apply_generation_config(g, {}, &o);
    const std::vector<std::string> from_model = generation_config_fields(g);
    const nlohmann::json values = nlohmann::json::parse(generation_options_to_json(o));
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, value] : values.items()) {
        const bool model = std::find(from_model.begin(), from_model.end(), name) != from_model.end();
        const std::string source = !model                  ? "built-in default"
                                   : name == "task_prefix" ? g.task_prefix_source
                                                           : "generation_config.json";
        out[name] = {{"value", value}, {"source", source}};
    }
    return out;
}

// The settings the model sets ("num_beams 4, max_new_tokens 20"): the others are built-in defaults.
std::string model_settings_text(const nlohmann::json& settings) {
    std::string text;
    for (const auto& [name, s] : settings.items())
        if (s["source"] != "built-in default" && name != "task_prefix")
            text += (text.empty() ? "" : ", ") + name + " " + s["value"].dump();
    return (text.empty() ? std::string("all built-in defaults")
                         : text + " from generation_config.json; the rest built-in defaults") +
           " (info --json lists each)";
}

}  // namespace

const RuntimeFlags kInfoRuntime{Device::Cpu};

const CommandSpec kInfoSpec = {
    "info",
    "describe a model folder: architecture, parameters, dtype, files, recommended settings",
    {
        {"model", "DIR", "model folder (config.json, model.safetensors or pytorch_model.bin, spiece.model)", kModel},
        kInfoRuntime.flags(),
        {"measure-batch", "", "measure the largest safe batch for 64-token inputs and outputs (runs a few generations)"},
        {"json", "", "print one JSON document on stdout"},
    }};

int run_info(const Argv& argv) {
    Args args(argv, kInfoSpec);
    const RuntimeOptions runtime = kInfoRuntime.read(args);
    auto model = Model::load(args.require("model"), runtime);
    nlohmann::json j = to_json(model->info());
    DeviceProfile profile = recommend_profile(runtime.device);
    // Largest safe batch by measurement (a few short generations), for 64-token inputs and outputs.
    if (args.has("measure-batch")) profile.max_batch = measure_max_batch(*model, 64, 64);
    j["recommended"] = profile_json(profile);
    add_tasks(model->info().generation_config, &j);
    const nlohmann::json settings = effective_settings(model->info().generation_config);
    j["settings"] = settings;
    const std::vector<std::string>& warnings = model->info().generation_config.warnings;
    for (const std::string& w : warnings) std::cerr << "t5studio info: warning: " << w << "\n";
    if (!warnings.empty()) j["warnings"] = warnings;
    if (args.has("json")) {
        print_json(j);
        return 0;
    }
    const ModelInfo& i = model->info();
    std::cout << "model        " << i.dir.string() << "\n"
              << "type         " << i.model_type << ", " << i.variant << "\n"
              << "layers       " << i.config.num_layers << " encoder + " << i.config.num_decoder_layers << " decoder, d_model "
              << i.config.d_model << ", d_ff " << i.config.d_ff << ", " << i.config.num_heads << " heads x d_kv " << i.config.d_kv
              << "\n"
              << "parameters   " << i.parameter_count << "\n"
              << "stored dtype " << i.stored_dtype << "\n"
              << "runs as      " << i.precision << " on " << i.device << " (" << i.threads << " threads), weights "
              << i.weight_bytes / (1024.0 * 1024.0) << " MiB, " << i.matmul_kernel << "\n"
              << "cpu class    " << i.cpu_class
              << (i.cpu_class == i.cpu_class_detected ? std::string() : " (detected " + i.cpu_class_detected + ")") << "\n"
              << "cpu kernels  ";
    for (size_t k = 0; k < i.kernels.size(); ++k)
        std::cout << (k ? "; " : "") << i.kernels[k].first << " " << i.kernels[k].second;
    std::cout << "\n"
              << "generation   "
              << (i.generation_config.present ? "generation_config.json " + generation_config_to_json(i.generation_config)
                                              : std::string("no generation_config.json"))
              << "\n"
              << "settings     " << model_settings_text(settings) << "\n"
              << "tasks        " << tasks_text(i.generation_config) << "\n"
              << "prefix       " << prefix_text(i.generation_config) << "\n"
              << "vocab        model " << i.config.vocab_size << ", tokenizer " << i.tokenizer_vocab << "\n"
              << "recommended  " << to_string(profile.precision) << " on " << profile.name << ": " << profile.reason
              << (profile.max_batch ? ", max batch " + std::to_string(profile.max_batch) : std::string()) << "\n"
              << "files        ";
    for (const auto& f : i.files) std::cout << f << " ";
    std::cout << "\n";
    return 0;
}

}  // namespace t5s::cli
