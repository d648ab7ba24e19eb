#pragma once
// Running an augmentation recipe (t5s/recipe.h) over a batch of texts. Each step runs over all its
// inputs as one batched generation (generate_scored: the one generation path); a step with several
// outputs per input fans out, and the next step takes every one of them. The candidate steps'
// outputs are pooled per source and judged against the ORIGINAL source with the request's settings:
// invalid text, lost spans, no_copy, distinct, the scores, the filters, the ranking and
// near_duplicate, as generate_scored judges its own candidates. Every candidate that passes is kept
// (the recipe's steps decide how many there are); each carries its route.
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

// One leg of a candidate's way: the step and the text it produced (spans restored).
struct RouteLeg {
    std::string step;
    std::string text;
};
using Route = std::vector<RouteLeg>;

struct RecipeResult {
    GenerationResult result;          // as generate_scored gives: input, candidates, dropped, spans, seed
    std::vector<Route> routes;        // per candidate of result.candidates
    std::vector<Route> dropped_routes;  // per entry of result.dropped
};

// The model a step runs on: the loaded model for a step without model or adapter of its own.
using RecipeModelFor = std::function<const Model&(const RecipeStep&)>;

// `options`: the request's settings (the base of every step's, and the judge's); `judge`: the model
// whose back_score judges the candidates (the loaded one, with options.task_prefix); `embedder` may
// be null (then similarity filters and ranking are refused, as in generate_scored). `spans`: empty,
// or one list per text. Errors name the recipe file and the step.
std::vector<RecipeResult> run_recipe(const Recipe& recipe, const RecipeModelFor& model_for, const Model& judge, const Embedder* embedder,
                                     const std::vector<std::string>& texts, const std::vector<std::vector<Span>>& spans,
                                     const GenerationOptions& options);

}  // namespace t5s
