// Group (diverse) beam search, num_beam_groups and diversity_penalty: token ids and scores equal to
// transformers 4.55's group beam search (goldens from tests/make_group_beam_goldens.py) on the tiny
// checkpoints, alone and as a batch of inputs of different lengths; a model folder whose
// generation_config.json holds the settings; transformers' refusals; the Hamming penalty alone.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <fstream>

#include "decode/group_beam_search.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

void check_candidates(const std::vector<Candidate>& got, const nlohmann::json& want) {
    REQUIRE(got.size() == want["sequences"].size());
    for (size_t k = 0; k < got.size(); ++k) {
        INFO("candidate " << k);
        CHECK(got[k].ids == want["sequences"][k].get<std::vector<int>>());
        CHECK(std::abs(got[k].score - want["sequences_scores"][k].get<double>()) <= 1e-4);
    }
}

}  // namespace

TEST_CASE("group beam search: token ids and scores equal transformers' on the tiny checkpoints", "[group_beam]") {
    const auto g = golden("group_beam");
    INFO("goldens from transformers " << g["transformers_version"].get<std::string>());
    int runs = 0;
    for (const auto& [name, m] : g["models"].items()) {
        DYNAMIC_SECTION(name) {
            auto model = Model::load(model_dir(name), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
            const IdBatch inputs = ids_of(m["input_ids"]);
            for (size_t i = 0; i < inputs.size(); ++i)
                CHECK(model->tokenizer().encode(m["texts"][i].get<std::string>()) == inputs[i]);
            for (const auto& run : m["runs"]) {
                const GenerationOptions o = golden_options(run["config"]);
                INFO("settings " << run["config"].dump());
                for (size_t i = 0; i < inputs.size(); ++i) {
                    INFO("input " << i << " alone");
                    check_candidates(model->generate_ids({inputs[i]}, o)[0], run["per_input"][i]);
                }
                const auto batch = model->generate_ids(inputs, o);  // one search over every input's rows
                REQUIRE(batch.size() == inputs.size());
                for (size_t i = 0; i < inputs.size(); ++i) {
                    INFO("input " << i << " in the batch");
                    check_candidates(batch[i], run["batch"][i]);
                }
                ++runs;
            }
        }
    }
    CHECK(runs > 0);
}

TEST_CASE("group beam search: a model folder's generation_config.json runs the recipe with no flags", "[group_beam]") {
    const auto want = golden("group_beam")["model_folder"];
    const TempDir folder("group_beam_folder");
    for (const auto& entry : std::filesystem::directory_iterator(model_dir(want["model"].get<std::string>())))
        std::filesystem::copy_file(entry.path(), folder / entry.path().filename().string());
    std::ofstream(folder / "generation_config.json") << want["generation_config"].dump();

    const GenerationConfig defaults = load_model_generation_defaults(folder.path());
    CHECK(defaults.warnings.empty());  // num_beam_groups and diversity_penalty are applied, not warned about
    GenerationOptions o;
    o.drop_invalid_text = false;
    apply_generation_config(defaults, {}, &o);
    CHECK(o.num_beam_groups == 5);
    CHECK(o.diversity_penalty == 3.0f);
    auto model = Model::load(folder.path(), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    for (size_t i = 0; i < want["texts"].size(); ++i) {
        INFO("text " << i);
        const auto got = model->generate_ids({model->tokenizer().encode(want["texts"][i].get<std::string>())}, o)[0];
        const auto expected = want["sequences"][i].get<std::vector<std::vector<int>>>();
        REQUIRE(got.size() == expected.size());
        for (size_t k = 0; k < got.size(); ++k) CHECK(got[k].ids == expected[k]);
    }
}

TEST_CASE("group beam search: refused as transformers refuses it, naming the field", "[group_beam][options]") {
    auto refusal = [](const GenerationOptions& o) -> std::string {
        try {
            validate_generation_options(o);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    GenerationOptions o;
    o.num_beams = 6, o.num_beam_groups = 3, o.diversity_penalty = 1.0f;
    CHECK(refusal(o).empty());
    GenerationOptions uneven = o;
    uneven.num_beam_groups = 4;
    CHECK_THAT(refusal(uneven), Catch::Contains("num_beam_groups (4) must divide num_beams (6)"));
    GenerationOptions no_penalty = o;
    no_penalty.diversity_penalty = 0.0f;
    CHECK_THAT(refusal(no_penalty), Catch::Contains("diversity_penalty must be > 0"));
    GenerationOptions no_groups = o;
    no_groups.num_beam_groups = 1;
    CHECK_THAT(refusal(no_groups), Catch::Contains("diversity_penalty needs num_beam_groups > 1"));
    GenerationOptions sampled;
    sampled.do_sample = true, sampled.num_beam_groups = 2, sampled.diversity_penalty = 1.0f;
    CHECK_THAT(refusal(sampled), Catch::Contains("num_beam_groups: group beam search does not sample"));
    GenerationOptions negative = o;
    negative.diversity_penalty = -1.0f;
    CHECK_THAT(refusal(negative), Catch::Contains("diversity_penalty must be >= 0"));
    GenerationOptions zero_groups = o;
    zero_groups.num_beam_groups = 0;
    CHECK_THAT(refusal(zero_groups), Catch::Contains("num_beam_groups must be >= 1"));
    // The neutral values stay plain beam search, and read back from JSON.
    const GenerationOptions back = generation_options_from_json(generation_options_to_json(o));
    CHECK(back.num_beam_groups == 3);
    CHECK(back.diversity_penalty == 1.0f);
}

TEST_CASE("group beam search: the Hamming penalty counts the earlier groups' tokens per input", "[group_beam]") {
    // Two inputs, groups of two rows, vocabulary of 5; earlier groups took {3, 3, 1} and {0, 4, 4}.
    at::Tensor scores = at::zeros({4, 5});
    const at::Tensor previous = at::tensor(std::vector<int64_t>{3, 3, 1, 0, 4, 4}, at::kLong).view({2, 3});
    apply_hamming_diversity(scores, previous, 0.7f);
    const float p = 0.7f;
    const std::vector<std::vector<float>> want = {
        {0, -p, 0, -2 * p, 0}, {0, -p, 0, -2 * p, 0}, {-p, 0, 0, 0, -2 * p}, {-p, 0, 0, 0, -2 * p}};
    for (int64_t r = 0; r < 4; ++r)
        for (int64_t v = 0; v < 5; ++v) CHECK(scores[r][v].item<float>() == want[static_cast<size_t>(r)][static_cast<size_t>(v)]);
    at::Tensor untouched = at::ones({2, 5});
    apply_hamming_diversity(untouched, at::zeros({1, 0}, at::kLong), 3.0f);  // the first group: nothing before it
    CHECK(untouched.eq(1).all().item<bool>());
}

TEST_CASE("group beam search: generation_config.json reads the two keys as options", "[group_beam][generation_config]") {
    const GenerationConfig g =
        parse_generation_config(R"({"num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 0.5})", "generation_config.json");
    CHECK(g.warnings.empty());
    GenerationOptions o;
    apply_generation_config(g, {"diversity_penalty"}, &o);  // a value the caller gave wins
    CHECK(o.num_beams == 4);
    CHECK(o.num_beam_groups == 2);
    CHECK(o.diversity_penalty == 0.0f);
    CHECK(classify_foreign_setting("num_beam_groups", "5") != ForeignSetting::Unsupported);  // no longer "not supported yet"
    CHECK_THROWS_WITH(parse_generation_config(R"({"num_beam_groups": 0})", "g.json"), Catch::Contains("num_beam_groups"));
}
