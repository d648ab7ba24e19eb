// transformers' logits processors and warpers beyond the first ones, against transformers itself
// (tests/make_processor_goldens.py): each on random logits, exactly; generate()'s token ids, greedy
// and beam, on a tiny checkpoint; and a model folder whose generation_config.json carries the keys,
// run with no settings of the caller.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "decode/logits_processors.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {
const nlohmann::json& goldens() {
    static const nlohmann::json g = golden("processors");
    return g;
}

at::Tensor float_matrix(const nlohmann::json& rows) {
    std::vector<float> values;
    for (const auto& row : rows)
        for (const auto& v : row) values.push_back(v.is_null() ? -INFINITY : static_cast<float>(v.get<double>()));
    return at::tensor(values).view({static_cast<int64_t>(rows.size()), -1});
}

at::Tensor long_matrix(const nlohmann::json& rows) {
    std::vector<int64_t> values;
    for (const auto& row : rows)
        for (const auto& v : row) values.push_back(v.get<int64_t>());
    return at::tensor(values, at::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

// The processor a golden case names, applied as process_logits / apply_warpers would.
void apply_case(const nlohmann::json& c, at::Tensor& scores, const at::Tensor& sequences, const RowSources& sources) {
    const std::string name = c["processor"];
    const nlohmann::json& p = c["params"];
    GenerationOptions o;
    if (name == "encoder_repetition_penalty") return apply_encoder_repetition_penalty(scores, sources, p["penalty"].get<float>());
    if (name == "encoder_no_repeat_ngram_size")
        return apply_encoder_no_repeat_ngram(scores, sequences, sources, p["n"].get<int>());
    if (name == "bad_words_ids") return apply_bad_words(scores, sequences, p["ids"].get<TokenIdLists>(), /*eos_id=*/1);
    if (name == "min_p") return apply_min_p(scores, p["p"].get<float>());
    if (name == "typical_p") return apply_typical_p(scores, p["p"].get<float>());
    if (name == "epsilon_cutoff") return apply_epsilon_cutoff(scores, p["e"].get<float>());
    if (name == "eta_cutoff") return apply_eta_cutoff(scores, p["e"].get<float>());
    REQUIRE(name == "warper_chain");
    apply_warpers(scores, generation_options_from_json(p.dump()));
}

GenerationOptions options_of(const nlohmann::json& settings) { return generation_options_from_json(settings.dump()); }
}  // namespace

TEST_CASE("processors and warpers equal transformers' on random logits", "[processors][goldens]") {
    const nlohmann::json& u = goldens()["unit"];
    const at::Tensor scores = float_matrix(u["scores"]), sequences = long_matrix(u["sequences"]);
    const std::vector<std::vector<int>> source_ids = u["sources"].get<std::vector<std::vector<int>>>();
    RowSources sources;
    for (const auto& s : source_ids) sources.push_back(&s);
    int banned_somewhere = 0;
    for (const auto& c : u["cases"]) {
        INFO(c["processor"].get<std::string>() << " " << c["params"].dump());
        at::Tensor mine = scores.clone();
        apply_case(c, mine, sequences, sources);
        const at::Tensor expected = float_matrix(c["scores"]);
        CHECK(at::equal(mine, expected));
        banned_somewhere += !at::equal(expected, scores);
    }
    CHECK(banned_somewhere == static_cast<int>(u["cases"].size()));  // every case changes the scores: none is vacuous
}

TEST_CASE("generate(): token ids equal transformers' with each processor, greedy and beam", "[processors][goldens][generation]") {
    const nlohmann::json& g = goldens();
    auto model = Model::load(model_dir(g["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = ids_of(g["input_ids"]);
    const nlohmann::json& gen = g["generate"];
    // bad_words as transformers' docs tokenize it: each word as it reads mid-sentence.
    const TokenIdLists words = bad_words_token_ids(gen["bad_words"].get<std::string>(), [&](const std::string& w) {
        return model->tokenizer().encode(w, /*add_eos=*/false);
    });
    CHECK(words == gen["bad_words_ids"].get<TokenIdLists>());
    for (const auto& c : gen["cases"]) {
        nlohmann::json settings = c["settings"];
        if (settings.contains("bad_words")) settings.erase("bad_words_ids");  // the text form, tokenized by the engine
        INFO(c["mode"].get<std::string>() << " " << settings.dump());
        const GenerationOptions o = options_of(settings);
        // All inputs in one call: rows of several inputs decode together, each with its own source.
        const auto results = model->generate_ids(inputs, o);
        REQUIRE(results.size() == inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
            std::vector<std::vector<int>> ids;
            for (const auto& cand : results[i]) ids.push_back(cand.ids);
            INFO("input " << i);
            CHECK(ids == c["per_input"][i].get<std::vector<std::vector<int>>>());
        }
    }
}

TEST_CASE("a model folder's generation_config.json keys apply with no settings given, as in transformers",
          "[processors][goldens][generation]") {
    const nlohmann::json& mc = goldens()["model_config"];
    TempDir dir("processor_config");
    for (const auto& entry : std::filesystem::directory_iterator(model_dir(goldens()["model"])))
        std::filesystem::copy_file(entry.path(), dir / entry.path().filename().string());
    std::ofstream(dir / "generation_config.json") << mc["generation_config"].dump();

    const GenerationConfig config = load_model_generation_defaults(dir.path());
    CHECK(config.warnings.empty());  // every key applied: none named as ignored
    GenerationOptions o;
    apply_generation_config(config, {}, &o);
    CHECK(o.encoder_no_repeat_ngram_size == mc["generation_config"]["encoder_no_repeat_ngram_size"].get<int>());
    CHECK(o.bad_words_ids == mc["generation_config"]["bad_words_ids"].get<TokenIdLists>());
    auto model = Model::load(dir.path(), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = ids_of(goldens()["input_ids"]);
    const auto results = model->generate_ids(inputs, o);
    for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input " << i);
        CHECK(std::vector<std::vector<int>>{results[i][0].ids} == mc["per_input"][i].get<std::vector<std::vector<int>>>());
    }
}

TEST_CASE("generation_config.json: a bad value of a table key is one line naming the file and key", "[processors]") {
    CHECK_THROWS_WITH(parse_generation_config(R"({"bad_words_ids": [[1, -2]]})", "gc.json"),
                      Catch::Contains("gc.json") && Catch::Contains("bad_words_ids"));
    CHECK_THROWS_WITH(parse_generation_config(R"({"typical_p": 1.5})", "gc.json"),
                      Catch::Contains("gc.json") && Catch::Contains("typical_p"));
    // transformers' neutral values and null are no warning; they are applied (and change nothing).
    const GenerationConfig g =
        parse_generation_config(R"({"min_p": null, "typical_p": 1.0, "encoder_no_repeat_ngram_size": 0})", "gc.json");
    CHECK(g.warnings.empty());
}

TEST_CASE("bad_words_ids outside the vocabulary are refused before decoding", "[processors]") {
    auto model = Model::load(model_dir(goldens()["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    GenerationOptions o;
    o.max_new_tokens = 4;
    o.bad_words_ids = {{5, 1000000}};
    CHECK_THROWS_WITH(model->generate_ids(ids_of(goldens()["input_ids"]), o),
                      Catch::Contains("bad_words_ids") && Catch::Contains("1000000"));
}
