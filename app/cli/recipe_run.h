#pragma once
// `generate --recipe FILE`: the recipe read before any model loads, each distinct step model (and
// adapter) loaded once beside the command's, and each batch of texts run through the recipe
// (t5s/recipe_runner.h). The routes of the batch last run go into its JSON results.
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "t5s/recipe_runner.h"

namespace t5s::cli {

class RecipeRun {
public:
    explicit RecipeRun(const std::filesystem::path& file);  // reads and checks it (one-line errors)

    // Loads every step model the recipe names with `runtime` (its adapter: the step's, else none);
    // a step with an adapter but no model gets `model_dir` with that adapter. Steps with neither
    // run on `loaded`.
    void load_models(const Model& loaded, const std::filesystem::path& model_dir, const RuntimeOptions& runtime);

    // One batch through the recipe; remembers its routes for add_routes.
    std::vector<GenerationResult> run(const Embedder* embedder, const std::vector<std::string>& texts,
                                      const std::vector<std::vector<Span>>& spans, const GenerationOptions& options);

    // Result k of the batch last run: each candidate (and each dropped one, when listed) gains its
    // "route": [{"step": name, "text": ...}, ...].
    void add_routes(size_t k, nlohmann::json* result) const;

    const Recipe& recipe() const { return recipe_; }

private:
    const Model& model_for(const RecipeStep& step) const;

    Recipe recipe_;
    const Model* loaded_ = nullptr;
    std::filesystem::path model_dir_;  // the command's --model
    std::map<std::pair<std::string, std::string>, std::unique_ptr<Model>> models_;  // (model dir, adapter dir)
    std::vector<RecipeResult> last_;
};

}  // namespace t5s::cli
