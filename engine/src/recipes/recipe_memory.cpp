// A recipe's step models counted before they load (t5s/recipe_memory.h).
#include "t5s/recipe_memory.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "t5s/error.h"
#include "t5s/hub.h"

namespace t5s {
namespace {

// config.json is ours to read but may be missing or odd: an unknown size counts 0, and loading the
// model then names the problem itself.
int64_t estimated_bytes(const std::filesystem::path& model_dir, int bytes_per_weight) {
    std::ifstream in(model_dir / "config.json", std::ios::binary);
    if (!in) return 0;
    std::string text;
    constexpr size_t kMaxConfigBytes = 1 << 20;
    text.resize(kMaxConfigBytes);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    const int64_t parameters = hub::parameters_from_config(text);
    return parameters > 0 ? hub::estimated_run_bytes(parameters, bytes_per_weight) : 0;
}

std::string gigabytes(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / 1e9);
    return buf;
}

}  // namespace

std::optional<RecipeModelLoad> step_model_load(const RecipeStep& step, const std::filesystem::path& loaded_model_dir) {
    if (step.model.empty() && !step.adapter) return std::nullopt;
    return RecipeModelLoad{step.model.empty() ? loaded_model_dir : step.model, step.adapter.value_or(""), 0};
}

std::vector<RecipeModelLoad> recipe_model_loads(const Recipe& recipe, const std::filesystem::path& loaded_model_dir,
                                                int bytes_per_weight) {
    std::vector<RecipeModelLoad> loads;
    std::set<std::pair<std::string, std::string>> seen;
    for (const RecipeStep& step : recipe.steps) {
        std::optional<RecipeModelLoad> load = step_model_load(step, loaded_model_dir);
        if (!load || !seen.insert({load->model.string(), load->adapter.string()}).second) continue;
        load->bytes = estimated_bytes(load->model, bytes_per_weight);
        loads.push_back(std::move(*load));
    }
    return loads;
}

void check_recipe_memory(const Recipe& recipe, const std::vector<RecipeModelLoad>& loads, int64_t available_bytes,
                         const std::string& device) {
    int64_t total = 0;
    std::string each;
    for (const RecipeModelLoad& load : loads) {
        total += load.bytes;
        each += (each.empty() ? "" : ", ") + load.model.string() + (load.adapter.empty() ? "" : " + " + load.adapter.string()) +
                " " + (load.bytes > 0 ? gigabytes(load.bytes) : "(size unknown)");
    }
    if (available_bytes <= 0 || total <= available_bytes) return;
    throw Error(ErrorCode::OutOfMemory, "recipe " + recipe.file + ": its step models need about " + gigabytes(total) + " (" +
                                            each + ") but only " + gigabytes(available_bytes) + " are free on " + device +
                                            " beside the loaded model; use fewer distinct models or a lower precision");
}

}  // namespace t5s
