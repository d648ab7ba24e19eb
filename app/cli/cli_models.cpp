// t5studio models [--dir DIR ...] [--json]: the T5-family models and sentence encoders in the
// Hugging Face cache and in the given folders (a few levels down, with the LoRA adapters there and
// their bases), each labelled with where it was found, with the memory each needs next to this machine's.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/args.h"
#include "common/json_output.h"
#include "t5s/hub.h"
#include "t5s/process_memory.h"

namespace t5s::cli {

const CommandSpec kModelsSpec = {
    "models",
    "list the T5 models and sentence encoders in the Hugging Face cache (and in --dir folders)",
    {
        {"dir", "DIR", "also list the model and LoRA adapter folders in DIR, down to 4 levels (or DIR itself when it is one)",
         kRepeatable},
        {"cache-dir", "DIR", "cache folder (default $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)"},
        {"json", "", "one JSON document on stdout: {\"cache\", \"available_bytes\", \"models\": [...]}"},
    }};

namespace {

std::string size_text(int64_t bytes) {
    char b[32];
    if (bytes >= (int64_t(1) << 30)) std::snprintf(b, sizeof b, "%.1f GiB", double(bytes) / double(int64_t(1) << 30));
    else std::snprintf(b, sizeof b, "%.0f MiB", double(bytes) / double(1 << 20));
    return b;
}

std::string params_text(int64_t p) {
    char b[32];
    if (p >= 1000000000) std::snprintf(b, sizeof b, "%.2fB", double(p) / 1e9);
    else std::snprintf(b, sizeof b, "%.1fM", double(p) / 1e6);
    return b;
}

// "  (LoRA adapter for BASE)", with where the base is or that it was not found; "" for models.
std::string adapter_note(const nlohmann::json& r) {
    if (r["kind"] != "adapter") return "";
    const nlohmann::json& base = r["base"];
    const std::string name = base["name"].get<std::string>().empty() ? "an unnamed base" : base["name"].get<std::string>();
    return "  (LoRA adapter for " + name + (base["dir"].is_null() ? ", not found" : ": " + base["dir"].get<std::string>()) + ")";
}

}  // namespace

int run_models(const Argv& argv) {
    Args args(argv, kModelsSpec);
    const std::filesystem::path cache = args.has("cache-dir") ? std::filesystem::path(args.get("cache-dir")) : hub::cache_dir();
    std::vector<std::filesystem::path> dirs;
    for (const std::string& d : args.all("dir")) dirs.emplace_back(d);
    const std::vector<hub::StoredModel> models = hub::list_models(cache, dirs, /*adapters=*/true);
    const int64_t available = host_available_bytes();
    nlohmann::json rows = nlohmann::json::array();
    for (const hub::StoredModel& m : models) {
        nlohmann::json mem;
        for (const auto& [name, bytes] : {std::pair<const char*, int>{"fp32", 4}, {"bf16", 2}, {"int8", 1}}) {
            const int64_t need = hub::estimated_run_bytes(m.parameters, bytes);
            mem[name] = {{"bytes", need}, {"fit", hub::fit_label(need, available)}};
        }
        rows.push_back({{"name", m.name},
                        {"revision", m.revision},
                        {"commit", m.commit},
                        {"dir", m.dir.string()},
                        {"kind", m.kind},
                        {"architecture", m.architecture},
                        {"parameters", m.parameters},
                        {"disk_bytes", m.disk_bytes},
                        {"complete", m.complete},
                        {"memory", mem},
                        {"found_in", m.found_in}});
        if (m.kind == "adapter")
            rows.back()["base"] = {{"name", m.base},
                                   {"dir", m.base_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.base_dir.string())}};
    }
    if (args.has("json")) {
        print_json({{"cache", cache.string()}, {"available_bytes", available}, {"models", rows}});
        return 0;
    }
    std::printf("%-40s %-8s %-10s %-12s %9s %9s  %-18s %-18s %-18s\n", "NAME", "FOUND IN", "REVISION", "ARCH", "PARAMS", "DISK",
                "FP32", "BF16", "INT8");
    size_t in_cache = 0;
    for (const nlohmann::json& r : rows) {
        std::string mem[3];
        int k = 0;
        for (const char* n : {"fp32", "bf16", "int8"})
            mem[k++] = size_text(r["memory"][n]["bytes"].get<int64_t>()) + " " + r["memory"][n]["fit"].get<std::string>();
        const std::string rev = r["revision"].get<std::string>().empty() ? r["commit"].get<std::string>().substr(0, 8)
                                                                         : r["revision"].get<std::string>();
        const bool cached = r["found_in"] == "cache";
        in_cache += cached;
        std::printf("%-40s %-8s %-10s %-12s %9s %9s  %-18s %-18s %-18s%s%s\n", r["name"].get<std::string>().c_str(),
                    cached ? "cache" : "--dir", rev.c_str(),
                    (r["architecture"].get<std::string>() + (r["kind"] == "encoder" ? "/enc" : "")).c_str(),
                    params_text(r["parameters"].get<int64_t>()).c_str(), size_text(r["disk_bytes"].get<int64_t>()).c_str(),
                    mem[0].c_str(), mem[1].c_str(), mem[2].c_str(), r["complete"].get<bool>() ? "" : "  (no weights)",
                    adapter_note(r).c_str());
    }
    std::printf("%zu model(s): %zu in the Hugging Face cache %s, %zu in --dir folders; %s of memory available\n", models.size(),
                in_cache, cache.string().c_str(), models.size() - in_cache, size_text(available).c_str());
    return 0;
}

}  // namespace t5s::cli
