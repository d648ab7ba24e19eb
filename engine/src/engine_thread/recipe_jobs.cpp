// Recipes on the model lane: a Generate that carries one (t5s/engine_thread.h: Generate::recipe) and
// each row batch of a BatchAugment that does. The recipe and its step models come from
// kept_recipe (kept while the recipe is unchanged, so a batch loads them once), and run_recipe
// runs the steps with the job's control, so Cancel stops the step running and every decoding step
// reaches the job's on_step as a plain generation's does.
#include "engine_thread/engine_impl.h"
#include "t5s/recipe_runner.h"

namespace t5s::detail {

std::vector<GenerationResult> EngineImpl::run_recipe_texts(Job& job, const RecipeSource& source,
                                                           const std::vector<std::string>& texts,
                                                           const std::vector<std::vector<Span>>& spans,
                                                           const GenerationOptions& options,
                                                           const std::function<void(int64_t, int64_t)>& on_step_start) {
    const Recipe& recipe = kept_recipe.prepare(source, *model, model_runtime, config.model_factory);
    const int64_t steps = int64_t(recipe.steps.size());
    RecipeRunners runners{[&](const RecipeStep& step) -> const Model& {
                              // run_recipe asks for a step's model just before running it.
                              if (on_step_start) on_step_start(int64_t(&step - recipe.steps.data()), steps);
                              return kept_recipe.model_for(step);
                          },
                          {},
                          &job.generation()};
    const std::shared_ptr<const Embedder> scorer = embedder;  // as generate_texts: a new one may load meanwhile
    return run_recipe(recipe, runners, *model, scorer.get(), texts, spans, options);
}

std::vector<GenerationResult> EngineImpl::generate_recipe(Job& job, const Generate& cmd, const GenerationOptions& options) {
    const JobId id = job.id();
    return run_recipe_texts(job, *cmd.recipe, cmd.texts, cmd.spans, options, [&](int64_t index, int64_t steps) {
        job.set_progress(index, steps);  // "step k of n"
        emit(Progress{id, index, steps});
    });
}

}  // namespace t5s::detail
