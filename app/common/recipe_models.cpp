// The step models of recipes (common/recipe_models.h).
#include "common/recipe_models.h"

#include "common/runtime_flags.h"
#include "t5s/error.h"
#include "t5s/recipe_memory.h"

namespace t5s::cli {

RecipeModels::RecipeModels(std::filesystem::path model_dir, RuntimeOptions runtime)
    : model_dir_(std::move(model_dir)), runtime_(std::move(runtime)) {}

// ("", "") for a step on the loaded model as it is.
std::pair<std::string, std::string> RecipeModels::key_of(const RecipeStep& step) const {
    if (step.model.empty() && !step.adapter) return {"", ""};
    const std::filesystem::path dir = step.model.empty() ? model_dir_ : step.model;
    return {dir.string(), step.adapter ? step.adapter->string() : ""};
}

void RecipeModels::load_for(const Recipe& recipe, const Model& loaded) {
    Recipe unloaded = recipe;  // only the steps whose models are not resident yet count against the memory
    unloaded.steps.clear();
    for (const auto& step : recipe.steps) {
        const auto key = key_of(step);
        if (!key.first.empty() && !models_.count(key)) unloaded.steps.push_back(step);
    }
    if (unloaded.steps.empty()) return;
    check_recipe_fits(unloaded, loaded);
    for (const auto& step : recipe.steps) {
        const auto key = key_of(step);
        if (key.first.empty() || models_.count(key)) continue;
        models_[key].model = Model::load(key.first, with_adapter(runtime_, key.second));
    }
}

const Model* RecipeModels::find(const RecipeStep& step) const {
    const auto it = models_.find(key_of(step));
    return it == models_.end() ? nullptr : it->second.model.get();
}

std::mutex& RecipeModels::turn(const Model& model) const {
    for (const auto& [key, loaded] : models_)
        if (loaded.model.get() == &model) return *loaded.turn;
    throw Error(ErrorCode::InvalidArgument, "recipe: a model that no step loaded");
}

}  // namespace t5s::cli
