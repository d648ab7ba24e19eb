// A Generate that carries a recipe (t5s/engine_thread.h: Generate::recipe), on the model lane: the
// recipe and its step models come from recipe_models (kept while the recipe is unchanged), and
// run_recipe runs the steps with this job's control, so Cancel stops the step running and every
// decoding step reports GenerationStep as a plain generation does.
#include "engine_thread/engine_impl.h"
#include "t5s/recipe_runner.h"

namespace t5s::detail {

std::vector<GenerationResult> EngineImpl::generate_recipe(Job& job, const Generate& cmd, const GenerationOptions& options) {
    const Recipe& recipe = recipe_models.prepare(*cmd.recipe, *model, model_runtime, config.model_factory);
    GenerationControl& control = job.generation();
    const JobId id = job.id();
    const int64_t steps = int64_t(recipe.steps.size());
    RecipeRunners runners{[&](const RecipeStep& step) -> const Model& {
                              // run_recipe asks for a step's model just before running it: "step k of n".
                              const int64_t index = int64_t(&step - recipe.steps.data());
                              job.set_progress(index, steps);
                              emit(Progress{id, index, steps});
                              return recipe_models.model_for(step);
                          },
                          {},
                          &control};
    const std::shared_ptr<const Embedder> scorer = embedder;  // as generate_texts: a new one may load meanwhile
    return run_recipe(recipe, runners, *model, scorer.get(), cmd.texts, cmd.spans, options);
}

}  // namespace t5s::detail
