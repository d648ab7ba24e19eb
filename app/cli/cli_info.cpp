// t5studio info --model DIR [--json] [--dtype D] [--device D] [--threads N]
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/json_output.h"

namespace t5s::cli {

const CommandSpec kInfoSpec = {"info", "describe a model folder: architecture, parameters, dtype, files, recommended settings", {
    {"model", "DIR", "model folder (config.json, model.safetensors or pytorch_model.bin, spiece.model)", kModel},
    {"dtype", "D", "precision to load it in: fp32 (default), bf16, fp16 (CUDA only), int8 or auto"},
    {"device", "D", "cpu (default), cuda or auto"},
    {"threads", "N", "CPU threads, 0..1024 (0 = physical cores, the default)"},
    {"measure-batch", "", "measure the largest safe batch for 64-token inputs and outputs (runs a few generations)"},
    {"json", "", "print one JSON document on stdout"},
}};

int run_info(const Argv& argv) {
    Args args(argv, kInfoSpec);
    auto model = Model::load(args.require("model"),
                             runtime_from_flags(args.get("device", "cpu"), args.get("dtype", "fp32"), args.get_threads()));
    nlohmann::json j = to_json(model->info());
    DeviceProfile profile = recommend_profile(parse_device(args.get("device", "cpu")));
    // Largest safe batch by measurement (a few short generations), for 64-token inputs and outputs.
    if (args.has("measure-batch")) profile.max_batch = measure_max_batch(*model, 64, 64);
    j["recommended"] = profile_json(profile);
    if (args.has("json")) {
        print_json(j);
        return 0;
    }
    const ModelInfo& i = model->info();
    std::cout << "model        " << i.dir.string() << "\n"
              << "type         " << i.model_type << ", " << i.variant << "\n"
              << "layers       " << i.config.num_layers << " encoder + " << i.config.num_decoder_layers << " decoder, d_model "
              << i.config.d_model << ", d_ff " << i.config.d_ff << ", " << i.config.num_heads << " heads x d_kv " << i.config.d_kv << "\n"
              << "parameters   " << i.parameter_count << "\n"
              << "stored dtype " << i.stored_dtype << "\n"
              << "runs as      " << i.precision << " on " << i.device << " (" << i.threads << " threads), weights "
              << i.weight_bytes / (1024.0 * 1024.0) << " MiB, " << i.matmul_kernel << "\n"
              << "cpu class    " << i.cpu_class
              << (i.cpu_class == i.cpu_class_detected ? std::string() : " (detected " + i.cpu_class_detected + ")") << "\n"
              << "cpu kernels  ";
    for (size_t k = 0; k < i.kernels.size(); ++k) std::cout << (k ? "; " : "") << i.kernels[k].first << " " << i.kernels[k].second;
    std::cout << "\n"
              << "generation   "
              << (i.generation_config.present ? "generation_config.json " + generation_config_to_json(i.generation_config)
                                              : std::string("no generation_config.json"))
              << "\n"
              << "vocab        model " << i.config.vocab_size << ", tokenizer " << i.tokenizer_vocab << "\n"
              << "recommended  " << to_string(profile.precision) << " on " << profile.name << ": " << profile.reason
              << (profile.max_batch ? ", max batch " + std::to_string(profile.max_batch) : std::string()) << "\n"
              << "files        ";
    for (const auto& f : i.files) std::cout << f << " ";
    std::cout << "\n";
    return 0;
}

}  // namespace t5s::cli
