// generate --recipe (cli/recipe_run.h).
#include "cli/recipe_run.h"

namespace t5s::cli {

RecipeRun::RecipeRun(const std::filesystem::path& file) : recipe_(load_recipe(file)) {}

void RecipeRun::load_models(const Model& loaded, const RuntimeOptions& runtime) {
    loaded_ = &loaded;
    models_ = std::make_unique<RecipeStepModels>(runtime);
    models_->load_for(recipe_, loaded);
}

std::vector<GenerationResult> RecipeRun::run(const Embedder* embedder, const std::vector<std::string>& texts,
                                             const std::vector<std::vector<Span>>& spans,
                                             const GenerationOptions& options) const {
    RecipeRunners runners;
    runners.model_for = [this](const RecipeStep& s) -> const Model& {
        const Model* own = models_->find(s);
        return own ? *own : *loaded_;
    };
    return run_recipe(recipe_, runners, *loaded_, embedder, texts, spans, options);
}

}  // namespace t5s::cli
