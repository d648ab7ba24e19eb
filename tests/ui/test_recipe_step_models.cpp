// A recipe's step models (t5s/recipe_step_models.h) on the fake model, model-free: one load per
// distinct (model, adapter), whatever number of steps or recipes name it; a step with only an
// adapter is a second copy of the loaded model's folder with that adapter; each step model has a
// turn of its own; a failed load names the recipe and the step and keeps none of that call's loads.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../test_support.h"
#include "fake_model.h"
#include "t5s/error.h"
#include "t5s/recipe_step_models.h"

using namespace t5s;
namespace fs = std::filesystem;

namespace {

// The folders: "served" (the loaded model), "other" (a model of its own) and "lora" (an adapter);
// the fake models need only that they exist.
struct Folders {
    test::TempDir dir{"step_models"};
    Folders() {
        fs::create_directories(dir / "served");
        fs::create_directories(dir / "other");
        fs::create_directories(dir / "lora");
    }
    Recipe recipe(const std::string& text, const std::string& name) const { return parse_recipe(text, name, dir.path()); }
};

// Loads fake models and records each (folder, adapter) asked for.
struct RecordingLoader {
    std::vector<std::pair<fs::path, fs::path>> loads;
    StepModelLoader loader() {
        return [this](const fs::path& model_dir, const RuntimeOptions& o) {
            loads.emplace_back(model_dir, o.adapter);
            return make_fake_model(model_dir, o, 0);
        };
    }
};

const std::string kShared = R"({"steps": [
  {"name": "pivot", "model": "other"},
  {"name": "back", "from": "pivot", "model": "other"},
  {"name": "tuned", "from": "back", "adapter": "lora"},
  {"name": "plain", "from": "tuned"}],
 "candidates": ["plain"]})";

}  // namespace

TEST_CASE("recipe step models: a model two steps name loads once, an adapter-only step is a second copy",
          "[recipe][step_models]") {
    const Folders folders;
    const Recipe recipe = folders.recipe(kShared, "shared.json");
    RecordingLoader recording;
    RecipeStepModels models(RuntimeOptions{}, recording.loader());
    const auto loaded = make_fake_model(folders.dir / "served", RuntimeOptions{}, 0);
    models.load_for(recipe, *loaded);

    REQUIRE(recording.loads.size() == 2);
    CHECK(recording.loads[0] == std::make_pair(folders.dir / "other", fs::path()));  // a model of its own starts bare
    CHECK(recording.loads[1] == std::make_pair(loaded->info().dir, folders.dir / "lora"));
    CHECK(models.size() == 2);
    const Model* pivot = models.find(recipe.steps[0]);
    const Model* tuned = models.find(recipe.steps[2]);
    REQUIRE(pivot);
    REQUIRE(tuned);
    CHECK(models.find(recipe.steps[1]) == pivot);
    CHECK(tuned != pivot);
    CHECK(tuned->info().dir == loaded->info().dir);
    CHECK(models.find(recipe.steps[3]) == nullptr);  // runs on the loaded model
    CHECK(&models.turn(*pivot) != &models.turn(*tuned));
    CHECK_THROWS_AS(models.turn(*loaded), Error);

    // Another recipe naming a loaded model loads only what is new.
    const Recipe more =
        folders.recipe(R"({"steps": [{"name": "a", "model": "other"}, {"name": "b", "model": "other", "adapter": "lora"}],
                                           "candidates": ["b"]})",
                       "more.json");
    models.load_for(more, *loaded);
    REQUIRE(recording.loads.size() == 3);
    CHECK(recording.loads[2] == std::make_pair(folders.dir / "other", folders.dir / "lora"));
    CHECK(models.find(more.steps[0]) == pivot);

    models.clear();
    CHECK(models.size() == 0);
    CHECK(models.find(recipe.steps[0]) == nullptr);
}

TEST_CASE("recipe step models: a failed load names the recipe and the step and keeps none of its call's loads",
          "[recipe][step_models]") {
    const Folders folders;
    const auto loaded = make_fake_model(folders.dir / "served", RuntimeOptions{}, 0);
    RecordingLoader recording;
    RecipeStepModels models(RuntimeOptions{}, [&](const fs::path& model_dir, const RuntimeOptions& o) -> std::unique_ptr<Model> {
        if (!o.adapter.empty()) throw Error(ErrorCode::CorruptFile, "adapter " + o.adapter.string() + ": no adapter_config.json");
        return recording.loader()(model_dir, o);
    });
    models.load_for(folders.recipe(R"({"steps": [{"name": "first", "model": "other"}], "candidates": ["first"]})", "first.json"),
                    *loaded);
    REQUIRE(models.size() == 1);

    fs::create_directories(folders.dir / "third");
    const Recipe bad = folders.recipe(R"({"steps": [
      {"name": "again", "model": "other"}, {"name": "new", "model": "third"}, {"name": "tuned", "adapter": "lora"}],
      "candidates": ["tuned"]})",
                                      "bad.json");
    try {
        models.load_for(bad, *loaded);
        FAIL("the adapter's load error should have come through");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::CorruptFile);
        const std::string message = e.what();
        CHECK_THAT(message,
                   Catch::StartsWith("recipe bad.json: step 'tuned': adapter ") && Catch::Contains("no adapter_config.json"));
        CHECK(message.find('\n') == std::string::npos);
    }
    CHECK(recording.loads.size() == 2);  // "other" once, then "third"
    CHECK(models.size() == 1);           // "third" went with the failed call
    CHECK(models.find(bad.steps[1]) == nullptr);
    CHECK(models.find(bad.steps[0]) != nullptr);  // loaded by the call before, kept
}
