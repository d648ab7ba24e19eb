#pragma once
// Running an augmentation recipe (t5s/recipe.h) over a batch of texts. Each step runs over all its
// inputs as one batched generation (generate_scored: the one generation path); a step with several
// outputs per input fans out, and the next step takes every one of them. The candidate steps'
// outputs are pooled per source and judged against the ORIGINAL source with the request's settings:
// invalid text, lost spans, no_copy, distinct, the scores, the filters, the ranking and
// near_duplicate, as generate_scored judges its own candidates. Every candidate that passes is kept
// (the recipe's steps decide how many there are); each carries its route (t5s/route.h).
//
// Protected spans (the request's protect / protect_regex and the spans given with a text) are
// masked once in the source; every leg keeps their sentinels (keep_sentinels), so the pivot text
// carries them, and the candidates get the spans back at the end. A candidate that lost one is
// dropped as "lost_span".
#include <functional>
#include <string>
#include <vector>

#include "t5s/candidate_scores.h"
#include "t5s/recipe.h"
#include "t5s/spans.h"

namespace t5s {

// The model a step runs on: the loaded model for a step without model or adapter of its own.
using RecipeModelFor = std::function<const Model&(const RecipeStep&)>;
// How one step's texts are generated, all of them as one request: generate_scored by default;
// `serve` passes its scheduler, so a step is one scheduled request beside the others.
using RecipeGenerate = std::function<std::vector<GenerationResult>(const Model&, const Embedder*, const std::vector<std::string>&,
                                                                   const GenerationOptions&)>;

struct RecipeRunners {
    RecipeModelFor model_for;
    RecipeGenerate generate;               // empty: generate_scored(model, embedder, texts, {}, options, control)
    GenerationControl* control = nullptr;  // with the default generate: cancel and progress of every step
};

// `options`: the request's settings (the base of every step's, and the judge's); `judge`: the model
// whose back_score judges the candidates (the loaded one, with options.task_prefix); `embedder` may
// be null (then similarity filters and ranking are refused, as in generate_scored). `spans`: empty,
// or one list per text. Errors name the recipe file and the step. Each candidate (and each dropped
// one) carries its route (Candidate::route).
std::vector<GenerationResult> run_recipe(const Recipe& recipe, const RecipeRunners& runners, const Model& judge,
                                         const Embedder* embedder, const std::vector<std::string>& texts,
                                         const std::vector<std::vector<Span>>& spans, const GenerationOptions& options);

}  // namespace t5s
