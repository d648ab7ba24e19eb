// generate --recipe (cli/recipe_run.h).
#include "cli/recipe_run.h"

#include "common/runtime_flags.h"

namespace t5s::cli {
namespace {

// The (model, adapter) a step runs on; ("", "") is the loaded model as it is.
std::pair<std::string, std::string> model_key(const RecipeStep& step, const std::filesystem::path& model_dir) {
    if (step.model.empty() && !step.adapter) return {"", ""};
    const std::filesystem::path dir = step.model.empty() ? model_dir : step.model;
    return {dir.string(), step.adapter ? step.adapter->string() : ""};
}

nlohmann::json route_json(const Route& route) {
    nlohmann::json legs = nlohmann::json::array();
    for (const auto& leg : route) legs.push_back({{"step", leg.step}, {"text", leg.text}});
    return legs;
}

}  // namespace

RecipeRun::RecipeRun(const std::filesystem::path& file) : recipe_(load_recipe(file)) {}

void RecipeRun::load_models(const Model& loaded, const std::filesystem::path& model_dir, const RuntimeOptions& runtime) {
    loaded_ = &loaded;
    model_dir_ = model_dir;
    for (const auto& step : recipe_.steps) {
        const auto key = model_key(step, model_dir);
        if (key.first.empty() || models_.count(key)) continue;
        models_[key] = Model::load(key.first, with_adapter(runtime, key.second));
    }
}

const Model& RecipeRun::model_for(const RecipeStep& step) const {
    const auto it = models_.find(model_key(step, model_dir_));
    return it == models_.end() ? *loaded_ : *it->second;
}

std::vector<GenerationResult> RecipeRun::run(const Embedder* embedder, const std::vector<std::string>& texts,
                                             const std::vector<std::vector<Span>>& spans, const GenerationOptions& options) {
    last_ = run_recipe(recipe_, [this](const RecipeStep& s) -> const Model& { return model_for(s); }, *loaded_, embedder, texts, spans,
                       options);
    std::vector<GenerationResult> out;
    for (const auto& r : last_) out.push_back(r.result);
    return out;
}

void RecipeRun::add_routes(size_t k, nlohmann::json* result) const {
    const RecipeResult& r = last_.at(k);
    nlohmann::json& candidates = (*result)["candidates"];
    for (size_t c = 0; c < candidates.size() && c < r.routes.size(); ++c) candidates[c]["route"] = route_json(r.routes[c]);
    if (!result->contains("dropped")) return;
    nlohmann::json& dropped = (*result)["dropped"];
    for (size_t d = 0; d < dropped.size() && d < r.dropped_routes.size(); ++d)
        if (!r.dropped_routes[d].empty()) dropped[d]["route"] = route_json(r.dropped_routes[d]);
}

}  // namespace t5s::cli
