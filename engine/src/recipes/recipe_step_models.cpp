// The step models of recipes (t5s/recipe_step_models.h).
#include "t5s/recipe_step_models.h"

#include <exception>
#include <optional>
#include <vector>

#include "t5s/error.h"
#include "t5s/recipe_memory.h"

namespace t5s {

RecipeStepModels::RecipeStepModels(RuntimeOptions runtime, StepModelLoader load)
    : runtime_(std::move(runtime)), load_(std::move(load)) {
    if (!load_) load_ = [](const std::filesystem::path& dir, const RuntimeOptions& o) { return Model::load(dir, o); };
}

RecipeStepModels::Key RecipeStepModels::key_of(const RecipeStep& step) const {
    const std::optional<RecipeModelLoad> load = step_model_load(step, loaded_dir_);
    return load ? Key{load->model.string(), load->adapter.string()} : Key{};
}

void RecipeStepModels::load_for(const Recipe& recipe, const Model& loaded) {
    loaded_dir_ = loaded.info().dir;
    Recipe unloaded = recipe;  // only the steps whose models are not resident yet count against the memory
    unloaded.steps.clear();
    for (const RecipeStep& step : recipe.steps) {
        const Key key = key_of(step);
        if (!key.first.empty() && !models_.count(key)) unloaded.steps.push_back(step);
    }
    if (unloaded.steps.empty()) return;
    check_recipe_fits(unloaded, loaded);
    std::vector<Key> added;
    try {
        for (const RecipeStep& step : unloaded.steps) {
            const Key key = key_of(step);
            if (models_.count(key)) continue;  // an earlier step of this call loaded it
            load_step(recipe, step, key);
            added.push_back(key);
        }
    } catch (...) {
        for (const Key& key : added) models_.erase(key);
        throw;
    }
}

void RecipeStepModels::load_step(const Recipe& recipe, const RecipeStep& step, const Key& key) {
    const std::string where = "recipe " + recipe.file + ": step '" + step.name + "': ";
    RuntimeOptions options = runtime_;
    options.adapter = key.second;
    std::unique_ptr<Model> model;
    try {
        model = load_(key.first, options);
    } catch (const Error& e) {
        throw Error(e.code(), where + e.what());
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Internal, where + e.what());
    }
    if (!model) throw Error(ErrorCode::Internal, where + "no model for " + key.first);
    models_[key].model = std::move(model);
}

const Model* RecipeStepModels::find(const RecipeStep& step) const {
    const auto it = models_.find(key_of(step));
    return it == models_.end() ? nullptr : it->second.model.get();
}

std::mutex& RecipeStepModels::turn(const Model& model) const {
    for (const auto& [key, loaded] : models_)
        if (loaded.model.get() == &model) return *loaded.turn;
    throw Error(ErrorCode::InvalidArgument, "recipe: a model that no step loaded");
}

void RecipeStepModels::clear() {
    models_.clear();
    loaded_dir_.clear();
}

}  // namespace t5s
