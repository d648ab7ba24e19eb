// The workspace's recipe without GL: the shipped recipes listed and chosen, the editor's text
// checked as typed (the parser's one line), a generation sending the text as it is now, a bad
// recipe refused before anything is sent, Save as through the engine's io lane, the route of each
// candidate kept in the list and the step of a running recipe from Progress; the batch panel
// sending the workspace's recipe with its rows (a bad one refused first) and each row's route.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "controller.h"
#include "recording_controller.h"
#include "settings.h"

using namespace t5s;
using namespace t5s::ui;

namespace {

const std::filesystem::path kRecipes = std::filesystem::path(T5S_SOURCE_ROOT) / "assets" / "recipes";

struct Fake : test::RecordingController {
    Fake() {
        load();
        c.state().ws.source = "I like green tea.";
        c.workspace().list_recipes(kRecipes);
    }
    RecipeVm& recipe() { return c.state().ws.recipe; }
};

// The source's one candidate, come by a two-step route.
GenerationResult routed_result() {
    GenerationResult r;
    r.input = "I like green tea.";
    Candidate c;
    c.text = "I like tea.";
    c.route = {{"pivot", "我喜欢茶。"}, {"back", "I like tea."}};
    r.candidates = {c};
    return r;
}

}  // namespace

TEST_CASE("recipes: the shipped ones are listed; one chosen is read, checked and sent with the generation", "[ui][recipe]") {
    Fake f;
    REQUIRE_FALSE(f.recipe().shipped.empty());
    const std::string bt = (kRecipes / "demo-back-translation-zh.json").string();
    CHECK(std::find(f.recipe().shipped.begin(), f.recipe().shipped.end(), bt) != f.recipe().shipped.end());

    // None: a plain generation.
    f.c.perform(Action::Generate);
    REQUIRE(f.last<Generate>());
    CHECK_FALSE(f.last<Generate>()->recipe.has_value());
    f.c.apply(GenerationDone{f.c.state().ws.job, {}, {}, {}, {}});

    f.c.workspace().choose_recipe(bt);
    CHECK(f.recipe().error.empty());
    CHECK(f.recipe().steps == "steps: pivot > back; candidates: back");
    CHECK_FALSE(f.recipe().text.empty());
    f.recipe().text += " ";  // an unsaved edit is what runs
    f.c.perform(Action::Generate);
    const Generate* g = f.last<Generate>();
    REQUIRE(g->recipe.has_value());
    CHECK(g->recipe->json == f.recipe().text);
    CHECK(g->recipe->file == bt);
    CHECK(g->recipe->base_dir == kRecipes);

    // The running recipe's step, then candidates with their routes.
    const JobId job = f.c.state().ws.job;
    f.c.apply(Progress{job, 1, 2});
    CHECK(f.recipe().step == 1);
    CHECK(f.recipe().total == 2);
    const GenerationResult r = routed_result();
    f.c.apply(GenerationDone{job, {r}, {0}, {}, {}});
    REQUIRE(f.c.state().ws.list.size() == 1);
    CHECK(route_steps(f.c.state().ws.list.items()[0].route) == "pivot > back");
    CHECK(f.c.state().ws.list.items()[0].route[0].text == "我喜欢茶。");

    f.c.workspace().choose_recipe("");
    CHECK_FALSE(f.recipe().active());
}

TEST_CASE("recipes: a bad text shows the parser's one line and no generation is sent", "[ui][recipe]") {
    Fake f;
    f.recipe().text = R"({"steps": [{"name": "pivot", "num_bemas": 2}], "candidates": ["pivot"]})";
    f.c.workspace().check_recipe();
    CHECK(f.recipe().error.find("num_bemas") != std::string::npos);
    CHECK(f.recipe().error.find("(untitled)") != std::string::npos);
    CHECK(f.recipe().error.find('\n') == std::string::npos);
    f.c.perform(Action::Generate);
    CHECK(f.count<Generate>() == 0);
    CHECK(f.c.state().ws.error == f.recipe().error);

    f.recipe().text = "{not json";
    f.c.workspace().check_recipe();
    CHECK_FALSE(f.recipe().error.empty());
    f.recipe().text = R"({"steps": [{"name": "a"}], "candidates": ["a"]})";
    f.c.workspace().check_recipe();  // fixed as typed: the message goes
    CHECK(f.recipe().error.empty());
    f.c.perform(Action::Generate);
    CHECK(f.count<Generate>() == 1);

    f.c.workspace().choose_recipe((kRecipes / "no-such.json").string());
    CHECK(f.recipe().error.find("no-such.json") != std::string::npos);
}

TEST_CASE("recipes: Save as writes the text through the engine and the file becomes the chosen one", "[ui][recipe]") {
    Fake f;
    f.recipe().text = R"({"steps": [{"name": "a"}], "candidates": ["a"]})";
    f.c.workspace().save_recipe_as("/tmp/mine.json");
    const WriteTextFile* w = f.last<WriteTextFile>();
    REQUIRE(w);
    CHECK(w->path == "/tmp/mine.json");
    CHECK(w->content == f.recipe().text);
    f.c.apply(FileWritten{f.recipe().save_job, "/tmp/mine.json"});
    CHECK(f.recipe().save_job == 0);
    CHECK(f.recipe().path == "/tmp/mine.json");
    CHECK(f.recipe().saved_text == f.recipe().text);
    CHECK(f.recipe().error.empty());
}

TEST_CASE("recipes: files opened or saved are the picker's recent ones, kept in the settings; none is chosen at start",
          "[ui][recipe]") {
    Fake f;
    const std::string shipped = (kRecipes / "demo-back-translation-zh.json").string();
    f.c.workspace().choose_recipe(shipped);
    CHECK(f.recipe().recent.empty());  // listed among the shipped ones already
    f.recipe().text = R"({"steps": [{"name": "a"}], "candidates": ["a"]})";
    f.c.workspace().save_recipe_as("/tmp/one.json");
    f.c.apply(FileWritten{f.recipe().save_job, "/tmp/one.json"});
    f.c.workspace().save_recipe_as("/tmp/two.json");
    f.c.apply(FileWritten{f.recipe().save_job, "/tmp/two.json"});
    f.c.workspace().save_recipe_as("/tmp/one.json");
    f.c.apply(FileWritten{f.recipe().save_job, "/tmp/one.json"});
    CHECK(f.recipe().recent == std::vector<std::string>{"/tmp/one.json", "/tmp/two.json"});

    std::string warning;
    UiState fresh = test::after_restart(f.c.state(), &warning);
    CHECK(warning.empty());
    CHECK(fresh.ws.recipe.recent == f.recipe().recent);
    CHECK_FALSE(fresh.ws.recipe.active());
}

TEST_CASE("recipes: the batch panel sends the workspace's recipe with the rows; rows keep their routes", "[ui][recipe]") {
    Fake f;
    auto& b = f.c.state().batch;
    b.path = "/data/rows.txt";
    f.c.load_dataset();
    const JobId dataset = f.c.state().batch.dataset_job;
    f.c.apply(DatasetLoaded{dataset, b.path, {}, "", {"I like green tea.", "The weather is nice today."}});
    REQUIRE(b.rows.size() == 2);

    // None: a plain batch, under the file's name.
    f.c.start_batch();
    REQUIRE(f.last<BatchAugment>());
    CHECK_FALSE(f.last<BatchAugment>()->recipe.has_value());
    CHECK(f.last<BatchAugment>()->name == "rows.txt");
    f.c.apply(JobFinished{b.job, "batch", "2 of 2 rows done"});

    const std::string bt = (kRecipes / "demo-back-translation-zh.json").string();
    f.c.workspace().choose_recipe(bt);
    f.c.start_batch();
    const BatchAugment* cmd = f.last<BatchAugment>();
    REQUIRE(cmd->recipe.has_value());
    CHECK(cmd->recipe->json == f.recipe().text);
    CHECK(cmd->recipe->file == bt);
    CHECK(cmd->name == "rows.txt via demo-back-translation-zh.json");  // plain rows done are not skipped
    REQUIRE(b.phase == BatchPhase::Running);

    const GenerationResult r = routed_result();
    f.c.apply(BatchRowDone{b.job, 0, r, 0});
    REQUIRE(b.results.size() == 2);
    CHECK(b.results[0].first == "I like tea.");
    CHECK(route_steps(b.results[0].route) == "pivot > back");
    CHECK(b.results[1].route.empty());
    f.c.apply(JobFinished{b.job, "batch", "2 of 2 rows done"});

    // A bad recipe: the editor's one line, and no batch is sent.
    const int sent = f.count<BatchAugment>();
    f.recipe().text = R"({"steps": [{"name": "pivot", "num_bemas": 2}], "candidates": ["pivot"]})";
    f.c.start_batch();
    CHECK(f.count<BatchAugment>() == sent);
    CHECK(b.error.find("num_bemas") != std::string::npos);
    CHECK(b.error.find('\n') == std::string::npos);
}
