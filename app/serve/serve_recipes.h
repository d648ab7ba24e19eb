#pragma once
// serve's augmentation recipes (t5s/recipe.h): the configured ones (--recipe NAME=FILE, --recipes
// DIR) read and checked at start, before the server binds, and their step models loaded once
// beside the replicas (t5s/recipe_step_models.h); and a request's "recipe" resolved: the NAME of a
// configured one, or an inline recipe object. An inline recipe comes from a client, so it may not
// name a `model` or `adapter` (the server loads no path a client chooses): its steps run on the
// served model, with serve's adapter.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/serve_config.h"
#include "t5s/recipe.h"
#include "t5s/recipe_step_models.h"

namespace t5s::serve {

// A request's recipe: `label` names it in metrics ("NAME", or "inline"); `record_json` in the
// history's settings JSON: {"name", "file", "sha256"} for a configured one (t5s::recipe_record_json),
// {"name": "inline", "recipe": {...}} for an inline one (its steps' names only past 4 KiB).
struct RequestRecipe {
    std::shared_ptr<const Recipe> recipe;
    std::string label;
    std::string record_json;
};

class ServeRecipes {
public:
    // Reads and checks every configured recipe: a malformed NAME=FILE or a repeated NAME is a
    // UsageError; a bad file an Error of one line naming it. labelstudio_recipe must be one of them.
    explicit ServeRecipes(const ServeConfig& config);

    // Loads the step models of every configured recipe (each distinct model + adapter once), each
    // recipe's checked first against the memory free where `loaded` (a replica's model) runs.
    void load_models(const Model& loaded, const RuntimeOptions& runtime);
    const RecipeStepModels* models() const { return models_.get(); }

    // The request's "recipe" value: a configured NAME (else InvalidArgument "unknown recipe") or an
    // inline object (at most kMaxRecipeBytes; no "model" or "adapter": InvalidArgument naming it).
    RequestRecipe resolve(const nlohmann::json& value) const;
    // A configured recipe by name; its `recipe` null when none has it.
    RequestRecipe find(const std::string& name) const;
    std::vector<std::string> names() const;

private:
    void add(const std::string& name, const std::string& file);
    std::map<std::string, RequestRecipe> recipes_;
    std::unique_ptr<RecipeStepModels> models_;
};

}  // namespace t5s::serve
