// Recipes through the engine thread (Generate::recipe, the app's door): on a tiny real checkpoint a
// recipe job gives the candidates and routes run_recipe gives when called directly on the same
// models; the step models load once and stay while the recipe is unchanged; a bad recipe is one
// JobFailed line naming the file and the key; Cancel stops a recipe mid-step. A batch job with a
// greedy two-step recipe gives exactly what its two legs run by hand as batch jobs give, with routes
// in its rows and the history; a batch with a bad recipe fails in one line naming it.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>

#include <unistd.h>

#include "engine_fixtures.h"
#include "t5s/engine_thread.h"
#include "t5s/history_store.h"
#include "t5s/recipe_runner.h"

using namespace t5s;
namespace fs = std::filesystem;

namespace {

const fs::path kModels = fs::path(T5S_TEST_DATA) / "models";
const fs::path kTiny = test::tiny_model_dir();

// Greedy back-translation with fan-out: the pivot gives two outputs per source, the back step runs
// on a model folder of its own (the same tiny checkpoint, relative to the recipe's folder).
const std::string kRecipe = R"({"steps": [
  {"name": "pivot", "prefix": "translate English to German: ", "num_beams": 2, "num_return_sequences": 2},
  {"name": "back", "from": "pivot", "model": "t5v10-tied-relu", "prefix": "translate German to English: "}],
 "candidates": ["back"]})";

// A model factory that loads as the engine would and counts the loads in `*loads`.
ModelFactory counting_factory(std::atomic<int>* loads) {
    return [loads](const fs::path& dir, const RuntimeOptions& o) {
        ++*loads;
        return Model::load(dir, o);
    };
}

struct Events : test::EventLog {
    using EventLog::EventLog;
    // The first event `match` accepts, read until `seconds` passed (then the test fails).
    template <class Match>
    const Event& until(double seconds, Match match) {
        const auto at = find(match, seconds);
        if (!at) FAIL("timed out waiting for an event");
        return all[*at];
    }
    // Waits for the load job's ModelLoaded (its JobFailed fails the test).
    void loaded(JobId load, double seconds) {
        until(seconds, [&](const Event& e) {
            if (auto* f = std::get_if<JobFailed>(&e); f && f->job == load) FAIL("the model did not load: " << f->message);
            auto* m = std::get_if<ModelLoaded>(&e);
            return m && m->job == load;
        });
    }
    // The job's GenerationDone (its JobFailed fails the test).
    GenerationDone done(JobId job, double seconds = 120) {
        const Event& e = until(seconds, [&](const Event& ev) {
            if (auto* f = std::get_if<JobFailed>(&ev); f && f->job == job) FAIL("job failed: " << f->message);
            auto* d = std::get_if<GenerationDone>(&ev);
            return d && d->job == job;
        });
        return std::get<GenerationDone>(e);
    }
    // The rows of a BatchAugment job, by row, once it finished (its JobFailed fails the test).
    std::vector<GenerationResult> batch_rows(JobId job, size_t rows, double seconds = 240) {
        std::vector<GenerationResult> out(rows);
        until(seconds, [&](const Event& ev) {
            if (auto* f = std::get_if<JobFailed>(&ev); f && f->job == job) FAIL("batch failed: " << f->message);
            if (auto* r = std::get_if<BatchRowDone>(&ev); r && r->job == job && size_t(r->row) < rows)
                out[size_t(r->row)] = r->result;
            auto* d = std::get_if<JobFinished>(&ev);
            return d && d->job == job;
        });
        return out;
    }
    JobFailed failed(JobId job, double seconds = 60) {
        const Event& e = until(seconds, [&](const Event& ev) {
            if (auto* d = std::get_if<GenerationDone>(&ev); d && d->job == job) FAIL("the job was expected to fail");
            if (auto* d = std::get_if<JobFinished>(&ev); d && d->job == job) FAIL("the job was expected to fail");
            auto* f = std::get_if<JobFailed>(&ev);
            return f && f->job == job;
        });
        return std::get<JobFailed>(e);
    }
};

Generate recipe_request(const std::string& json) {
    Generate g;
    g.texts = {"I like green tea.", "The weather is nice today."};
    g.options.max_new_tokens = 8;
    g.task_prefix = "paraphrase: ";
    g.record_history = false;
    g.recipe = RecipeSource{json, "test-recipe.json", kModels};
    return g;
}

// Text, ids and route of every candidate and dropped candidate, to compare two runs exactly.
std::string outline(const std::vector<GenerationResult>& results) {
    std::string out;
    auto add = [&](const Candidate& c, const std::string& tag) {
        out += tag + c.text + " [";
        for (int id : c.ids) out += std::to_string(id) + ",";
        out += "] " + route_steps(c.route);
        for (const auto& leg : c.route) out += " | " + leg.text;
        out += "\n";
    };
    for (const auto& r : results) {
        out += "input " + r.input + "\n";
        for (const auto& c : r.candidates) add(c, "kept ");
        for (const auto& d : r.dropped) add(d.candidate, "dropped ");
    }
    return out;
}

}  // namespace

TEST_CASE("engine thread: a recipe job gives what run_recipe gives, step models loaded once", "[engine_thread][recipe][model]") {
    REQUIRE(fs::exists(kTiny / "config.json"));  // part of the repository
    std::atomic<int> loads{0};
    EngineConfig config = test::quiet_config();
    config.model_factory = counting_factory(&loads);
    EngineThread engine(config);
    Events ev{engine};
    ev.loaded(engine.submit(LoadModel{kTiny, test::one_cpu_thread()}), 120);
    const Generate request = recipe_request(kRecipe);
    const JobId job = engine.submit(request);
    const GenerationDone done = ev.done(job);
    CHECK(loads == 2);  // the loaded model and the back step's own

    // Each step announced as it starts: "step 1 of 2", "step 2 of 2".
    for (int64_t step : {0, 1})
        ev.until(1, [&](const Event& e) {
            auto* p = std::get_if<Progress>(&e);
            return p && p->job == job && p->done == step && p->total == 2;
        });

    // The same recipe on the same models, called directly.
    const Recipe recipe = parse_recipe(kRecipe, "test-recipe.json", kModels);
    const auto loaded = Model::load(kTiny, test::one_cpu_thread());
    const auto back = Model::load(kTiny, test::one_cpu_thread());
    RecipeRunners runners;
    runners.model_for = [&](const RecipeStep& s) -> const Model& { return s.model.empty() ? *loaded : *back; };
    GenerationOptions options = request.options;
    options.task_prefix = request.task_prefix;
    const auto direct = run_recipe(recipe, runners, *loaded, nullptr, request.texts, {}, options);

    REQUIRE(done.results.size() == 2);
    CHECK(outline(done.results) == outline(direct));
    for (const auto& r : done.results) {
        CHECK_FALSE((r.candidates.empty() && r.dropped.empty()));
        for (const auto& c : r.candidates) CHECK(route_steps(c.route) == "pivot > back");
        for (const auto& d : r.dropped) CHECK(route_steps(d.candidate.route) == "pivot > back");
    }

    // The same recipe again: nothing loads; a changed recipe loads its step model again.
    ev.done(engine.submit(request));
    CHECK(loads == 2);
    std::string changed = kRecipe;
    changed.replace(changed.find("\"num_beams\": 2"), 14, "\"num_beams\": 3");
    ev.done(engine.submit(recipe_request(changed)));
    CHECK(loads == 3);
}

TEST_CASE("engine thread: a bad recipe is one JobFailed line naming the file and the key", "[engine_thread][recipe]") {
    EngineConfig config = test::fake_model_config();
    EngineThread engine(config);
    Events ev{engine};
    ev.loaded(engine.submit(LoadModel{kTiny, {}}), 10);  // the fake model reads nothing there

    const JobId bad_key =
        engine.submit(recipe_request(R"({"steps": [{"name": "pivot", "num_bemas": 2}], "candidates": ["pivot"]})"));
    const JobFailed f = ev.failed(bad_key);
    CHECK(f.code == ErrorCode::InvalidArgument);
    CHECK(f.message.find("test-recipe.json") != std::string::npos);
    CHECK(f.message.find("num_bemas") != std::string::npos);
    CHECK(f.message.find('\n') == std::string::npos);

    Generate missing = recipe_request("");
    missing.recipe->file = kModels / "no-such-recipe.json";
    const JobFailed nf = ev.failed(engine.submit(missing));
    CHECK(nf.message.find("no-such-recipe.json") != std::string::npos);

    const JobFailed no_model =
        ev.failed(engine.submit(recipe_request(R"({"steps": [{"name": "a", "model": "not-there"}], "candidates": ["a"]})")));
    CHECK(no_model.message.find("not-there") != std::string::npos);
}

TEST_CASE("engine thread: Cancel stops a recipe job mid-step", "[engine_thread][recipe][model]") {
    REQUIRE(fs::exists(kTiny / "config.json"));
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Events ev{engine};
    ev.loaded(engine.submit(LoadModel{kTiny, test::one_cpu_thread()}), 120);
    // Long legs (every step decodes its full length), so the cancel lands while one decodes.
    Generate g = recipe_request(R"({"steps": [
      {"name": "pivot", "min_new_tokens": 400, "max_new_tokens": 400, "num_beams": 4, "num_return_sequences": 4},
      {"name": "back", "from": "pivot", "min_new_tokens": 400, "max_new_tokens": 400}], "candidates": ["back"]})");
    const JobId job = engine.submit(g);
    ev.until(120, [&](const Event& e) {
        if (auto* f = std::get_if<JobFailed>(&e); f && f->job == job) FAIL("failed before the cancel: " << f->message);
        auto* s = std::get_if<GenerationStep>(&e);
        return s && s->job == job;
    });
    engine.submit(Cancel{job});
    const JobFailed f = ev.failed(job);
    CHECK(f.code == ErrorCode::Cancelled);
}

namespace {

const std::string kForward = "translate English to German: ";
const std::string kBack = "translate German to English: ";

BatchAugment greedy_batch(const std::string& name, std::vector<std::string> rows, const std::string& prefix) {
    BatchAugment b;
    b.name = name;
    b.rows = std::move(rows);
    b.options.max_new_tokens = 8;
    b.options.batch_size = 2;  // 5 rows: three row batches, each one run_recipe call
    b.task_prefix = prefix;
    return b;
}

}  // namespace

TEST_CASE("engine thread: a batch job with a greedy two-step recipe equals its two legs run by hand",
          "[engine_thread][recipe][model]") {
    REQUIRE(fs::exists(kTiny / "config.json"));
    const fs::path dir = fs::temp_directory_path() / ("t5s_et_recipe_batch_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::atomic<int> loads{0};
    EngineConfig config = test::quiet_config();
    config.history_db = dir / "history.db";
    config.model_factory = counting_factory(&loads);
    EngineThread engine(config);
    Events ev{engine};
    ev.loaded(engine.submit(LoadModel{kTiny, test::one_cpu_thread()}), 120);
    const std::vector<std::string> rows = {"I like green tea.", "The weather is nice today.", "She reads a book in the library.",
                                           "We will meet tomorrow.", "My brother plays football."};

    // By hand: the forward leg as a batch, then the back leg as a batch over its candidates.
    const auto forward = ev.batch_rows(engine.submit(greedy_batch("forward", rows, kForward)), rows.size());
    std::vector<std::string> pivots;
    std::vector<size_t> pivot_row;
    for (size_t i = 0; i < forward.size(); ++i)
        for (const auto& c : forward[i].candidates) pivots.push_back(c.text), pivot_row.push_back(i);
    REQUIRE_FALSE(pivots.empty());
    const auto back = ev.batch_rows(engine.submit(greedy_batch("back", pivots, kBack)), pivots.size());

    // The recipe, its back step on a model folder of its own (loaded once for all row batches).
    BatchAugment b = greedy_batch("recipe", rows, "paraphrase: ");
    b.recipe = RecipeSource{R"({"steps": [{"name": "pivot", "prefix": ")" + kForward + R"("},
      {"name": "back", "from": "pivot", "model": "t5v10-tied-relu", "prefix": ")" +
                                kBack + R"("}], "candidates": ["back"]})",
                            "batch-recipe.json", kModels};
    const JobId job = engine.submit(b);
    const auto recipe = ev.batch_rows(job, rows.size());
    CHECK(loads == 2);                 // the loaded model and the back step's own, once for three row batches
    ev.until(1, [&](const Event& e) {  // progress in rows, as for any batch
        auto* p = std::get_if<Progress>(&e);
        return p && p->job == job && p->done == 5 && p->total == 5;
    });

    HistoryStore history(config.history_db.string());
    size_t with_routes = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        INFO("row " << i << ": " << rows[i]);
        CHECK(recipe[i].input == rows[i]);
        std::vector<std::string> want;  // the back leg's outputs for this row's pivots
        std::vector<std::string> want_pivots;
        for (size_t k = 0; k < pivots.size(); ++k)
            if (pivot_row[k] == i) {
                for (const auto& c : back[k].candidates) want.push_back(c.text), want_pivots.push_back(pivots[k]);
            }
        std::vector<std::string> got;
        for (const auto& c : recipe[i].candidates) got.push_back(c.text);
        CHECK(got == want);
        for (size_t k = 0; k < recipe[i].candidates.size() && k < want_pivots.size(); ++k) {
            const Route& route = recipe[i].candidates[k].route;
            REQUIRE(route.size() == 2);
            CHECK(route[0].step == "pivot");
            CHECK(route[0].text == want_pivots[k]);
            CHECK(route[1].step == "back");
            CHECK(route[1].text == recipe[i].candidates[k].text);
        }
        // The history keeps every row's candidates with their routes.
        const auto id = history.find_by_origin("batch:recipe#" + std::to_string(i));
        REQUIRE(id);
        const auto stored = history.get(*id);
        REQUIRE(stored);
        // ... and names the recipe that made them: its file and the hash of the text that ran.
        CHECK_THAT(recipe_of_settings_json(stored->settings_json), Catch::StartsWith("batch-recipe.json (sha256:"));
        REQUIRE(stored->candidates.size() == recipe[i].candidates.size());
        for (size_t k = 0; k < stored->candidates.size(); ++k) {
            CHECK(stored->candidates[k].text == recipe[i].candidates[k].text);
            CHECK(route_steps(stored->candidates[k].route) == "pivot > back");
            ++with_routes;
        }
    }
    CHECK(with_routes > 0);
    fs::remove_all(dir);
}

TEST_CASE("engine thread: a batch job with a bad recipe fails in one line naming it", "[engine_thread][recipe]") {
    EngineConfig config = test::fake_model_config();
    EngineThread engine(config);
    Events ev{engine};
    ev.loaded(engine.submit(LoadModel{kTiny, {}}), 10);
    BatchAugment b = greedy_batch("bad", {"a row", "another row"}, "paraphrase: ");
    b.recipe =
        RecipeSource{R"({"steps": [{"name": "pivot", "num_bemas": 2}], "candidates": ["pivot"]})", "bad-recipe.json", kModels};
    const JobFailed f = ev.failed(engine.submit(b));
    CHECK(f.code == ErrorCode::InvalidArgument);
    CHECK(f.message.find("bad-recipe.json") != std::string::npos);
    CHECK(f.message.find("num_bemas") != std::string::npos);
    CHECK(f.message.find('\n') == std::string::npos);
}
