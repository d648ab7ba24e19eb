// Augmentation recipes without a model (t5s/recipe.h): what a well-formed recipe reads as, every
// refusal as one line naming the file and the step or key, the step settings a request resolves
// to, and the fan-out bound.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "t5s/error.h"
#include "t5s/hub.h"
#include "t5s/recipe.h"
#include "t5s/recipe_memory.h"
#include "test_support.h"

using namespace t5s;

namespace {

const std::string kBackTranslation = R"({
  "steps": [
    {"name": "pivot", "from": "source", "prefix": "translate English to Chinese: "},
    {"name": "back", "from": "pivot", "prefix": "translate Chinese to English: ", "num_beams": 4, "num_return_sequences": 2}
  ],
  "candidates": ["back"]
})";

Recipe parse(const std::string& text, const std::filesystem::path& base = ".") { return parse_recipe(text, "r.json", base); }

// The one-line message parse gives for `text` (empty: none).
std::string refusal(const std::string& text, const std::filesystem::path& base = ".") {
    try {
        parse(text, base);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a back-translation recipe reads as its steps, in order", "[recipe]") {
    const Recipe r = parse(kBackTranslation);
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].name == "pivot");
    CHECK(r.steps[0].from == "source");
    CHECK(r.steps[0].model.empty());
    CHECK_FALSE(r.steps[0].adapter.has_value());
    CHECK(r.steps[0].prefix == std::optional<std::string>("translate English to Chinese: "));
    CHECK(r.steps[0].named.empty());
    CHECK(r.steps[1].from == "pivot");
    CHECK(r.steps[1].named == std::vector<std::string>{"num_beams", "num_return_sequences"});
    CHECK(r.steps[1].settings.num_beams == 4);
    CHECK(r.candidates == std::vector<std::string>{"back"});
    CHECK(r.is_candidate("back"));
    CHECK_FALSE(r.is_candidate("pivot"));
    CHECK(r.step("pivot") == &r.steps[0]);
    CHECK(r.step("nope") == nullptr);
}

TEST_CASE("a step's settings are the request's with its prefix and named fields", "[recipe]") {
    const Recipe r = parse(kBackTranslation);
    GenerationOptions request;
    request.task_prefix = "paraphrase: ";
    request.max_new_tokens = 20;
    request.num_beams = 2;
    const GenerationOptions pivot = step_options(r.steps[0], 0, request);
    CHECK(pivot.task_prefix == "translate English to Chinese: ");
    CHECK(pivot.max_new_tokens == 20);
    CHECK(pivot.num_beams == 2);
    const GenerationOptions back = step_options(r.steps[1], 1, request);
    CHECK(back.num_beams == 4);
    CHECK(back.num_return_sequences == 2);
    CHECK(back.max_new_tokens == 20);
    // No prefix given: the request's.
    const Recipe bare = parse(R"({"steps": [{"name": "a"}], "candidates": ["a"]})");
    CHECK(step_options(bare.steps[0], 0, request).task_prefix == "paraphrase: ");
}

TEST_CASE("sampling steps get seeds derived from the request's, or their own", "[recipe]") {
    const Recipe r = parse(R"({"steps": [{"name": "a", "do_sample": true}, {"name": "b", "from": "a", "do_sample": true},
                                          {"name": "c", "from": "a", "do_sample": true, "seed": 7}], "candidates": ["b", "c"]})");
    GenerationOptions request;
    request.seed = 42;
    const int64_t a = step_options(r.steps[0], 0, request).seed;
    const int64_t b = step_options(r.steps[1], 1, request).seed;
    CHECK(a == step_options(r.steps[0], 0, request).seed);  // reproducible
    CHECK(a != b);                                          // the steps do not share one stream
    CHECK(a >= 0);
    CHECK(step_options(r.steps[2], 2, request).seed == 7);
    request.seed = 43;
    CHECK(step_options(r.steps[0], 0, request).seed != a);
    // A greedy step keeps the request's seed untouched.
    CHECK(step_options(parse(kBackTranslation).steps[0], 0, request).seed == 43);
}

TEST_CASE("the fan-out of a step is the product of the outputs along its chain, bounded", "[recipe]") {
    const Recipe r = parse(R"({"steps": [{"name": "a", "num_beams": 4, "num_return_sequences": 4},
                                          {"name": "b", "from": "a", "num_beams": 3, "num_return_sequences": 3},
                                          {"name": "c", "from": "source"}], "candidates": ["b", "c"]})");
    GenerationOptions request;
    CHECK(r.fan_out(0, request) == 4);
    CHECK(r.fan_out(1, request) == 12);
    CHECK(r.fan_out(2, request) == 1);
    request.num_return_sequences = 2;  // the default of the steps that name none
    CHECK(r.fan_out(2, request) == 2);
}

TEST_CASE("model and adapter folders are checked, relative to the recipe's folder", "[recipe]") {
    t5s::test::TempDir dir("recipe");
    std::filesystem::create_directories(dir / "m");
    const Recipe r = parse(R"({"steps": [{"name": "a", "model": "m", "adapter": null}], "candidates": ["a"]})", dir.path());
    CHECK(r.steps[0].model == dir.path() / "m");
    CHECK_FALSE(r.steps[0].adapter.has_value());
    const std::string missing = refusal(R"({"steps": [{"name": "a", "model": "nope"}], "candidates": ["a"]})", dir.path());
    CHECK_THAT(missing, Catch::Contains("r.json") && Catch::Contains("step 'a'") && Catch::Contains("'model' folder") &&
                            Catch::Contains("does not exist"));
    CHECK_THAT(refusal(R"({"steps": [{"name": "a", "adapter": "gone"}], "candidates": ["a"]})", dir.path()),
               Catch::Contains("'adapter' folder"));
}

TEST_CASE("load_recipe reads a file and refuses a missing or oversized one", "[recipe]") {
    t5s::test::TempDir dir("recipe");
    std::ofstream(dir / "bt.json") << kBackTranslation;
    CHECK(load_recipe(dir / "bt.json").file == (dir / "bt.json").string());
    CHECK_THROWS_WITH(load_recipe(dir / "none.json"), Catch::Contains("none.json") && Catch::Contains("no such file"));
    std::ofstream(dir / "big.json") << std::string(static_cast<size_t>(kMaxRecipeBytes) + 1, ' ');
    CHECK_THROWS_WITH(load_recipe(dir / "big.json"), Catch::Contains("big.json") && Catch::Contains("larger than"));
}

TEST_CASE("every refusal is one line naming the file and the step or key", "[recipe]") {
    struct Case {
        const char* text;
        std::vector<const char*> words;
    };
    const std::vector<Case> cases = {
        {"not json", {"r.json", "invalid JSON"}},
        {"[]", {"r.json", "JSON object"}},
        {R"({"steps": [], "candidates": ["a"]})", {"r.json", "\"steps\""}},
        {R"({"steps": [{"name": "a"}], "candidates": ["a"], "extra": 1})", {"unknown key 'extra'"}},
        {R"({"steps": [{"from": "source"}], "candidates": ["a"]})", {"steps[0]", "\"name\""}},
        {R"({"steps": [{"name": "source"}], "candidates": ["source"]})", {"steps[0]", "not \"source\""}},
        {R"({"steps": [{"name": 3}], "candidates": ["a"]})", {"steps[0]", "'name' must be a string"}},
        {R"({"steps": [{"name": "a"}, {"name": "a"}], "candidates": ["a"]})", {"step 'a'", "earlier step too"}},
        {R"({"steps": [{"name": "a", "from": "zz"}], "candidates": ["a"]})", {"step 'a'", "'zz'", "neither"}},
        {R"({"steps": [{"name": "a", "from": "b"}, {"name": "b"}], "candidates": ["a"]})", {"step 'a'", "'b' is a later step"}},
        {R"({"steps": [{"name": "a", "from": "a"}], "candidates": ["a"]})", {"step 'a'", "a cycle"}},
        {R"({"steps": [{"name": "a", "num_beamz": 4}], "candidates": ["a"]})", {"step 'a'", "unknown setting 'num_beamz'"}},
        {R"({"steps": [{"name": "a", "num_beams": "four"}], "candidates": ["a"]})", {"step 'a'", "num_beams"}},
        {R"({"steps": [{"name": "a", "top_p": 1.5}], "candidates": ["a"]})", {"step 'a'", "top_p"}},
        {R"({"steps": [{"name": "a", "protect": "numbers"}], "candidates": ["a"]})", {"step 'a'", "'protect' is the request's"}},
        {R"({"steps": [{"name": "a", "task_prefix": "x"}], "candidates": ["a"]})", {"step 'a'", "\"prefix\""}},
        {R"({"steps": [{"name": "a", "prefix": 3}], "candidates": ["a"]})", {"step 'a'", "'prefix' must be a string"}},
        {R"({"steps": [{"name": "a"}], "candidates": ["b"]})", {"r.json: candidates", "'b' is no step"}},
        {R"({"steps": [{"name": "a"}], "candidates": ["a", "a"]})", {"candidates", "named twice"}},
        {R"({"steps": [{"name": "a"}], "candidates": []})", {"candidates", "non-empty"}},
        {R"({"steps": [{"name": "a"}]})", {"candidates", "non-empty"}},
        {R"({"steps": [{"name": "a", "no_copy": true}], "candidates": ["a"]})", {"step 'a'", "'no_copy' judges candidates"}},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        const std::string message = refusal(c.text);
        REQUIRE_FALSE(message.empty());
        CHECK(message.find('\n') == std::string::npos);
        for (const char* w : c.words) CHECK_THAT(message, Catch::Contains(w));
    }
    // A judging setting on a step that is not a candidate applies to that step's own outputs.
    CHECK(refusal(R"({"steps": [{"name": "a", "no_copy": true}, {"name": "b", "from": "a"}], "candidates": ["b"]})").empty());
}

TEST_CASE("more steps than the bound are refused", "[recipe]") {
    std::string steps;
    for (size_t i = 0; i <= kMaxRecipeSteps; ++i)
        steps += std::string(i ? "," : "") + R"({"name": "s)" + std::to_string(i) + "\"}";
    CHECK_THAT(refusal(R"({"steps": [)" + steps + R"(], "candidates": ["s0"]})"), Catch::Contains("more than"));
}

TEST_CASE("every shipped recipe reads", "[recipe]") {
    int read = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(T5S_SOURCE_ROOT) / "assets" / "recipes")) {
        if (entry.path().extension() != ".json") continue;
        INFO(entry.path().string());
        const Recipe r = load_recipe(entry.path());
        CHECK_FALSE(r.candidates.empty());
        ++read;
    }
    CHECK(read >= 4);
}

namespace {

// A T5 config.json of the given width, enough for the parameter count the estimate reads.
void write_config(const std::filesystem::path& dir, int d_model) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "t5", "vocab_size": 32128, "d_model": )" << d_model
                                       << R"(, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_decoder_layers": 6, "num_heads": 8,
                                           "relative_attention_num_buckets": 32, "tie_word_embeddings": true})";
}

}  // namespace

TEST_CASE("the memory estimate counts each distinct step model once, before any loads", "[recipe]") {
    t5s::test::TempDir dir("recipe");
    write_config(dir / "zh", 512);
    write_config(dir / "big", 1024);
    write_config(dir / "loaded", 512);
    std::filesystem::create_directories(dir / "lora");
    const Recipe r = parse(R"({"steps": [
        {"name": "pivot", "model": "zh"}, {"name": "back", "from": "pivot", "model": "big"},
        {"name": "again", "from": "back", "model": "zh"}, {"name": "tuned", "adapter": "lora"}, {"name": "plain"}],
        "candidates": ["again", "tuned", "plain"]})",
                           dir.path());
    const auto loads = recipe_model_loads(r, dir / "loaded", 4);
    REQUIRE(loads.size() == 3);  // zh once, big, the loaded model again with the adapter; "plain" costs nothing
    CHECK(loads[0].model == dir / "zh");
    CHECK(loads[1].model == dir / "big");
    CHECK(loads[2].model == dir / "loaded");
    CHECK(loads[2].adapter == dir / "lora");
    auto expected = [&](const char* name, int bytes_per_weight) {
        std::ifstream in(dir / name / "config.json");
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return hub::estimated_run_bytes(hub::parameters_from_config(text), bytes_per_weight);
    };
    CHECK(loads[0].bytes == expected("zh", 4));
    CHECK(loads[1].bytes == expected("big", 4));
    CHECK(loads[1].bytes > loads[0].bytes);
    CHECK(recipe_model_loads(r, dir / "loaded", 1)[1].bytes == expected("big", 1));

    const int64_t total = loads[0].bytes + loads[1].bytes + loads[2].bytes;
    CHECK_NOTHROW(check_recipe_memory(r, loads, total, "cpu"));
    CHECK_NOTHROW(check_recipe_memory(r, loads, 0, "cpu"));  // unknown: not refused
    try {
        check_recipe_memory(r, loads, total - 1, "cpu");
        FAIL("a recipe over the free memory was not refused");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::OutOfMemory);
        const std::string m = e.what();
        CHECK(m.find('\n') == std::string::npos);
        CHECK_THAT(m, Catch::Contains("r.json") && Catch::Contains((dir / "zh").string()) &&
                          Catch::Contains((dir / "big").string()) && Catch::Contains((dir / "lora").string()) &&
                          Catch::Contains("free on cpu"));
    }
}

TEST_CASE("a step model without a readable config counts as unknown, not as a failure", "[recipe]") {
    t5s::test::TempDir dir("recipe");
    std::filesystem::create_directories(dir / "odd");
    std::ofstream(dir / "odd" / "config.json") << "{not json";
    const Recipe r = parse(R"({"steps": [{"name": "a", "model": "odd"}], "candidates": ["a"]})", dir.path());
    const auto loads = recipe_model_loads(r, dir / "loaded", 4);
    REQUIRE(loads.size() == 1);
    CHECK(loads[0].bytes == 0);
    CHECK_NOTHROW(check_recipe_memory(r, loads, 1, "cpu"));
}
