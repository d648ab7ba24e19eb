// A request through a recipe on one replica (serve/recipe_request.h).
#include "serve/recipe_request.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "serve/service.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/recipe_runner.h"

namespace t5s::serve {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(50);

// Why a running request stops: the client went away, its timeout passed, the drain timeout passed.
struct Stop {
    Service& svc;
    const std::function<bool()>& gone;
    std::optional<Clock::time_point> deadline;

    bool timed_out() const { return deadline && Clock::now() >= *deadline; }
    bool now() const { return svc.recipes_cancelled() || timed_out() || (gone && gone()); }
};

// Every setting by name: a step's settings are complete, not the scheduler's defaults with some
// fields on top.
const std::vector<std::string>& every_field() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& f : generation_fields()) out.push_back(f.json);
        return out;
    }();
    return names;
}

// One step on the served model: one scheduled request with all the step's texts, waited for, and
// cancelled when the request stops.
std::vector<GenerationResult> scheduled_step(Service& svc, Replica& replica, const std::vector<std::string>& texts,
                                             const GenerationOptions& o, const Stop& stop) {
    struct Wait {
        std::mutex mutex;
        std::condition_variable cv;
        std::optional<RequestOutcome> outcome;
    };
    auto wait = std::make_shared<Wait>();
    ServeRequest request;
    request.texts = texts;
    request.options = o;
    request.named = every_field();
    RequestEvents events;
    events.on_done = [wait, &svc, &replica](const RequestOutcome& outcome) {
        svc.record_step(replica, outcome);
        std::lock_guard<std::mutex> lock(wait->mutex);
        wait->outcome = outcome;
        wait->cv.notify_all();
    };
    const std::shared_ptr<Job> job = svc.submit(replica, std::move(request), std::move(events));
    if (!job) throw Error(ErrorCode::Cancelled, svc.draining() ? "the server is shutting down" : "the queue is full");
    std::unique_lock<std::mutex> lock(wait->mutex);
    bool cancelled = false;
    while (!wait->cv.wait_for(lock, kPoll, [&] { return wait->outcome.has_value(); })) {
        if (!cancelled && stop.now()) {
            cancelled = true;  // its rows leave the batch at the next step; on_done still comes
            replica.scheduler->cancel(job->id());
        }
    }
    const RequestOutcome& outcome = *wait->outcome;
    if (outcome.error) throw Error(outcome.error->code, outcome.error->message);
    return outcome.results;
}

// One step on a model of its own: generate_scored there, one generation at a time per model.
std::vector<GenerationResult> own_model_step(const RecipeStepModels& models, const Model& model, const Embedder* embedder,
                                             const std::vector<std::string>& texts, const GenerationOptions& o,
                                             const Stop& stop) {
    std::lock_guard<std::mutex> turn(models.turn(model));
    if (stop.now()) throw Error(ErrorCode::Cancelled, "request cancelled");
    GenerationControl control;
    auto last_check = Clock::now();
    control.on_step = [&](const StepInfo&) {  // on this thread, after every decoding step
        if (Clock::now() - last_check < kPoll) return;
        last_check = Clock::now();
        if (stop.now()) control.cancel = true;
    };
    return generate_scored(model, embedder, texts, {}, o, &control);
}

}  // namespace

RecipeOutcome run_recipe_request(Service& svc, Replica& replica, const Recipe& recipe, const ServeRequest& request,
                                 const std::function<bool()>& gone) {
    const auto start = Clock::now();
    Stop stop{svc, gone, std::nullopt};
    if (request.timeout_s > 0)
        stop.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(request.timeout_s));
    RecipeOutcome out;
    out.options = with_named_fields(svc.defaults()->get(), request.options, request.named);
    const Model& served = *replica.model;
    const RecipeStepModels* models = svc.recipes().models();
    RecipeRunners runners;
    runners.model_for = [&](const RecipeStep& step) -> const Model& {
        const Model* own = models ? models->find(step) : nullptr;
        if (own) return *own;
        if (!step.model.empty() || step.adapter)  // an inline recipe names neither; a configured one's are loaded
            throw Error(ErrorCode::InvalidArgument,
                        "recipe " + recipe.file + ": step '" + step.name + "': its model is not loaded");
        return served;
    };
    runners.generate = [&](const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                           const GenerationOptions& o) {
        if (&model == &served) return scheduled_step(svc, replica, texts, o, stop);
        return own_model_step(*models, model, embedder, texts, o, stop);
    };
    try {
        out.results = run_recipe(recipe, runners, served, replica.embedder, request.texts, request.spans, out.options);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::Cancelled && stop.timed_out())
            throw Error(ErrorCode::Cancelled, "request timed out (timeout_s)");
        throw;
    }
    out.total_s = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
}

}  // namespace t5s::serve
