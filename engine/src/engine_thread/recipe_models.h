#pragma once
// The recipe a Generate carries (RecipeSource, t5s/engine_thread.h) with its step models, owned by
// the model lane: parsed and loaded once, then kept while the recipe's text, its folder and the
// loaded model stay the same, so the next request with the same recipe loads nothing. Every
// distinct step model (and model + adapter) is loaded once, through the engine's model factory and
// with the loaded model's runtime (device, precision, threads). The CLI's `generate --recipe`
// (app/cli/recipe_run.*) does the same per command.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "t5s/engine_thread.h"
#include "t5s/recipe.h"

namespace t5s::detail {

class RecipeModels {
public:
    // The recipe of `source`, its step models loaded beside `loaded` (a model of the loaded
    // model's folder for a step with only an adapter). Throws the parser's one-line Error, or a
    // step model's load error with the recipe and the step named; a failed prepare keeps nothing.
    const Recipe& prepare(const RecipeSource& source, const Model& loaded, const RuntimeOptions& runtime, const ModelFactory& factory);
    // The model a step runs on (prepare first): its own, else the loaded model as it is.
    const Model& model_for(const RecipeStep& step) const;
    size_t models_loaded() const { return models_.size(); }
    // Frees the step models (the loaded model changed or went away).
    void clear();

private:
    using ModelKey = std::pair<std::string, std::string>;  // (model folder, adapter folder)
    ModelKey key_of(const RecipeStep& step) const;
    void load_models(const RuntimeOptions& runtime, const ModelFactory& factory);

    std::string source_key_;           // what the kept recipe was made from
    std::optional<Recipe> recipe_;
    const Model* loaded_ = nullptr;
    std::filesystem::path loaded_dir_;
    std::map<ModelKey, std::unique_ptr<Model>> models_;
};

// The recipe's text, folder and name as parse_recipe takes them: `json` as given, else `file`'s
// content (at most kMaxRecipeBytes); base_dir defaults to the file's folder.
Recipe read_recipe_source(const RecipeSource& source);

}  // namespace t5s::detail
