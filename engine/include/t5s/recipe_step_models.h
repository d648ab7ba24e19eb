#pragma once
// The models of recipe steps that run on a model or adapter of their own (t5s/recipe.h): each
// distinct (model folder, adapter folder), keyed as recipe_model_loads lists them, loaded once
// however many steps and recipes name it, after one memory check (check_recipe_fits) of what is not
// loaded yet. The one home of step models: `generate --recipe` keeps one for its recipe, `serve` one
// for all its configured recipes, the desktop's engine thread one for the recipe it keeps; each
// loads through its own loader. Torch-free interface (t5s_engine).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "t5s/model.h"
#include "t5s/recipe.h"

namespace t5s {

// Loads a model folder with these options (the engine thread's ModelFactory has this shape).
using StepModelLoader = std::function<std::unique_ptr<Model>(const std::filesystem::path& dir, const RuntimeOptions& options)>;

class RecipeStepModels {
public:
    // `runtime`: how every step model loads, with the step's adapter (else none: a model of its own
    // starts bare); `load`: the loader, empty = Model::load.
    explicit RecipeStepModels(RuntimeOptions runtime, StepModelLoader load = {});

    // Loads the models `recipe`'s steps name that are not loaded yet, beside `loaded` (a step with an
    // adapter but no model gets a copy of loaded's folder with that adapter): first checked together
    // against the memory free where `loaded` runs (Error(OutOfMemory) naming the recipe and each
    // model, before any loads), then each load's error rethrown naming the recipe and the step. A
    // failed call keeps none of its own loads. Every call is beside the same loaded model (clear()
    // before loading beside another).
    void load_for(const Recipe& recipe, const Model& loaded);
    // The model of a step with a model or adapter of its own (loaded by load_for); null for a step
    // on the loaded model.
    const Model* find(const RecipeStep& step) const;
    // Held while a generation runs on `model` (one of find's): serve runs one at a time per model,
    // so that requests on a step model queue instead of multiplying its activations.
    std::mutex& turn(const Model& model) const;
    size_t size() const { return models_.size(); }
    // Frees every step model (the loaded model changed or went away).
    void clear();

private:
    using Key = std::pair<std::string, std::string>;  // (model folder, adapter folder); empty: a step on the loaded model
    struct Loaded {
        std::unique_ptr<Model> model;
        std::unique_ptr<std::mutex> turn = std::make_unique<std::mutex>();
    };
    Key key_of(const RecipeStep& step) const;
    void load_step(const Recipe& recipe, const RecipeStep& step, const Key& key);

    RuntimeOptions runtime_;
    StepModelLoader load_;
    std::filesystem::path loaded_dir_;
    std::map<Key, Loaded> models_;
};

}  // namespace t5s
