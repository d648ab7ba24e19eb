#pragma once
// `generate --recipe FILE`: the recipe read before any model loads, each distinct step model (and
// adapter) loaded once beside the command's (t5s/recipe_step_models.h), and each batch of texts run
// through the recipe (t5s/recipe_runner.h); each candidate carries its route.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "t5s/recipe_runner.h"
#include "t5s/recipe_step_models.h"

namespace t5s::cli {

class RecipeRun {
public:
    explicit RecipeRun(const std::filesystem::path& file);  // reads and checks it (one-line errors)

    // Loads every step model the recipe names with `runtime` (its adapter: the step's, else none);
    // a step with an adapter but no model gets loaded's folder with that adapter. Steps with
    // neither run on `loaded`.
    void load_models(const Model& loaded, const RuntimeOptions& runtime);

    // One batch through the recipe.
    std::vector<GenerationResult> run(const Embedder* embedder, const std::vector<std::string>& texts,
                                      const std::vector<std::vector<Span>>& spans, const GenerationOptions& options) const;

    const Recipe& recipe() const { return recipe_; }

private:
    Recipe recipe_;
    const Model* loaded_ = nullptr;
    std::unique_ptr<RecipeStepModels> models_;
};

}  // namespace t5s::cli
