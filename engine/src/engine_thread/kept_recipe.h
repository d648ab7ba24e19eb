#pragma once
// The recipe a Generate carries (RecipeSource, t5s/engine_thread.h) with its step models, owned by
// the model lane: parsed and loaded once, then kept while the recipe's text, its folder and the
// loaded model stay the same, so the next request with the same recipe loads nothing. The step
// models (t5s/recipe_step_models.h) load through the engine's model factory with the loaded
// model's runtime (device, precision, threads).
#include <filesystem>
#include <optional>
#include <string>

#include "t5s/engine_thread.h"
#include "t5s/recipe.h"
#include "t5s/recipe_step_models.h"

namespace t5s::detail {

class KeptRecipe {
public:
    // The recipe of `source`, its step models loaded beside `loaded`. Throws the parser's one-line
    // Error, or a step model's load error with the recipe and the step named; a failed prepare
    // keeps nothing.
    const Recipe& prepare(const RecipeSource& source, const Model& loaded, const RuntimeOptions& runtime,
                          const ModelFactory& factory);
    // The model a step runs on (prepare first): its own, else the loaded model as it is.
    const Model& model_for(const RecipeStep& step) const;
    // Frees the recipe and its step models (the loaded model changed or went away).
    void clear();

private:
    std::string source_key_;  // what the kept recipe was made from
    std::optional<Recipe> recipe_;
    const Model* loaded_ = nullptr;
    std::optional<RecipeStepModels> models_;
};

// The recipe's text, folder and name as parse_recipe takes them: `json` as given, else `file`'s
// content (at most kMaxRecipeBytes); base_dir defaults to the file's folder.
Recipe read_recipe_source(const RecipeSource& source);

}  // namespace t5s::detail
