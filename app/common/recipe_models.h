#pragma once
// The models of recipe steps that run on a model or adapter of their own (t5s/recipe.h), each
// distinct (model folder, adapter folder) loaded once, however many steps and recipes name it.
// `generate --recipe` keeps one for its recipe, `serve` one for all its configured recipes.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "t5s/model.h"
#include "t5s/recipe.h"

namespace t5s::cli {

class RecipeModels {
public:
    // `model_dir`: the command's --model, which a step with an adapter but no model runs on (with
    // that adapter); `runtime`: how every step model loads (its adapter: the step's, else none).
    RecipeModels(std::filesystem::path model_dir, RuntimeOptions runtime);

    // Loads the models `recipe`'s steps name that are not loaded yet, after checking that they fit
    // in the memory free where `loaded` (the command's model) runs (t5s/recipe_memory.h: an
    // OutOfMemory error naming the recipe and each model, before any loads).
    void load_for(const Recipe& recipe, const Model& loaded);
    // The model of a step with a model or adapter of its own (loaded by load_for); null for a step
    // on the loaded model.
    const Model* find(const RecipeStep& step) const;
    // Held while a generation runs on `model` (one of find's): serve runs one at a time per model,
    // so that requests on a step model queue instead of multiplying its activations.
    std::mutex& turn(const Model& model) const;
    size_t size() const { return models_.size(); }

private:
    struct Loaded {
        std::unique_ptr<Model> model;
        std::unique_ptr<std::mutex> turn = std::make_unique<std::mutex>();
    };
    std::pair<std::string, std::string> key_of(const RecipeStep& step) const;

    std::filesystem::path model_dir_;
    RuntimeOptions runtime_;
    std::map<std::pair<std::string, std::string>, Loaded> models_;  // (model dir, adapter dir)
};

}  // namespace t5s::cli
