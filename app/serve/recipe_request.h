#pragma once
// One request run through a recipe (serve/serve_recipes.h) on one replica, on the caller's thread.
// A step on the served model is ONE request on the replica's scheduler carrying all the step's
// texts, batched beside the other clients' requests (RecipeRunners::generate); a step on a model of
// its own runs with generate_scored on that model, one at a time per model (RecipeStepModels::turn),
// so that concurrent requests queue there instead of multiplying its activations. The judge is the
// replica's model. The request's settings (the server's defaults with the request's fields) are
// the base of every step's, as the command's flags are for `generate --recipe`.
#include <functional>
#include <vector>

#include "t5s/recipe.h"
#include "t5s/scheduler.h"

namespace t5s::serve {

class Service;
struct Replica;

struct RecipeOutcome {
    std::vector<GenerationResult> results;  // one per text, each candidate with its route
    GenerationOptions options;              // the request's settings
    double total_s = 0.0;
};

// `gone` is polled while a step runs (every few tens of ms): true cancels the request (the client
// went away). The server's drain timeout and the request's timeout_s cancel it too. Throws
// t5s::Error with the request's or the step's code: InvalidArgument for bad settings, Cancelled
// ("request timed out (timeout_s)" past its timeout), OutOfMemory...
RecipeOutcome run_recipe_request(Service& svc, Replica& replica, const Recipe& recipe, const ServeRequest& request,
                                 const std::function<bool()>& gone);

}  // namespace t5s::serve
