// Constrained beam search, force_words_ids / force_words: token ids and scores equal to transformers
// 4.55's constrained beam search (goldens from tests/make_constrained_beam_goldens.py) on the tiny
// checkpoints, alone and as a batch of inputs of different lengths; the constraint states and their
// banks, transformers' shared-list quirk included; the text form; a model folder whose
// generation_config.json holds force_words_ids; transformers' refusals.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <fstream>

#include "decode/beam_constraints.h"
#include "decode/constrained_beam_search.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

ForcedWords constraints_of(const nlohmann::json& force_words_ids) {
    return generation_options_from_json(nlohmann::json{{"force_words_ids", force_words_ids}}.dump()).force_words_ids;
}

// Constraints as text, for CHECKs that show them when they differ.
std::string shown(const ForcedWords& words) {
    std::string out;
    for (const auto& c : words) {
        out += c.disjunctive ? "any of" : "phrase";
        for (const auto& a : c.alternatives) out += " " + nlohmann::json(a).dump();
        out += "; ";
    }
    return out;
}

void check_candidates(const std::vector<Candidate>& got, const nlohmann::json& want) {
    REQUIRE(got.size() == want["sequences"].size());
    for (size_t k = 0; k < got.size(); ++k) {
        INFO("candidate " << k);
        CHECK(got[k].ids == want["sequences"][k].get<std::vector<int>>());
        CHECK(std::abs(got[k].score - want["sequences_scores"][k].get<double>()) <= 1e-4);
    }
}

std::string refusal(const nlohmann::json& config) {
    try {
        validate_generation_options(generation_options_from_json(config.dump()));
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("constrained beam search: constraint states and banks equal transformers' ConstraintListState", "[constrained_beam]") {
    int cases = 0;
    const auto g = golden("constrained_beam");
    for (const auto& want : g["states"]) {
        INFO("constraints " << want["force_words_ids"].dump() << " after " << want["tokens"].dump());
        const ForcedWords constraints = constraints_of(want["force_words_ids"]);
        ConstraintListState state(constraints);
        state.reset(want["tokens"].get<std::vector<int>>());
        CHECK(state.completed() == want["completed"].get<bool>());
        CHECK(state.bank() == want["bank"].get<int>());
        const std::vector<int> advance = state.advance();
        CHECK(advance == want["advance"].get<std::vector<int>>());
        CHECK(completes_constraints(constraints, want["tokens"].get<std::vector<int>>()) == want["completed"].get<bool>());
        // As step_sentence_constraint: a copy per advancing token, the banks read after all of them.
        std::vector<ConstraintListState> copies;
        for (int token : advance) {
            copies.push_back(state.copy());
            copies.back().add(token);
        }
        std::vector<int> banks;
        for (const auto& c : copies) banks.push_back(c.bank());
        CHECK(banks == want["copy_banks"].get<std::vector<int>>());
        ++cases;
    }
    CHECK(cases >= 8);
}

TEST_CASE("constrained beam search: each bank puts forward its best before any its second", "[constrained_beam]") {
    using C = ConstrainedBeamSearch::Continuation;
    // Banks 0, 2, 2, 1, 0: order by bank * 100 + score is 1 (2), 2 (2), 3 (1), 0 (0), 4 (0); runs of
    // equal banks give ranks 0, 1, 0, 0, 1; rank 0 first in that order: 1, 3, 0, then 2, 4.
    const std::vector<C> candidates = {{-1.0f, 10, 0}, {-3.0f, 11, 1}, {-4.0f, 12, 1}, {-9.0f, 13, 2}, {-2.0f, 14, 0}};
    const auto picked = ConstrainedBeamSearch::rank_by_bank(candidates, {0, 2, 2, 1, 0}, 4);
    std::vector<int> tokens;
    for (const auto& c : picked) tokens.push_back(c.token);
    CHECK(tokens == std::vector<int>{11, 13, 10, 12});
}

TEST_CASE("constrained beam search: token ids and scores equal transformers' on the tiny checkpoints", "[constrained_beam]") {
    const auto g = golden("constrained_beam");
    INFO("goldens from transformers " << g["transformers_version"].get<std::string>());
    int runs = 0;
    for (const auto& [name, m] : g["models"].items()) {
        DYNAMIC_SECTION(name) {
            auto model = Model::load(model_dir(name), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
            const IdBatch inputs = ids_of(m["input_ids"]);
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

TEST_CASE("constrained beam search: the force_words text form stands for the goldens' ids", "[constrained_beam]") {
    const auto m = golden("constrained_beam")["models"]["t5v10-tied-relu"];
    auto model = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const auto encode = [&](const std::string& w) { return model->tokenizer().encode(w, /*add_eos=*/false); };
    for (const auto& run : m["runs"]) {
        INFO("force_words " << run["force_words"].get<std::string>());
        CHECK(shown(force_words_token_ids(run["force_words"].get<std::string>(), encode)) ==
              shown(constraints_of(run["config"]["force_words_ids"])));
    }
    // Generating from the words gives what the ids give (the words resolve where a group joins).
    const auto& run = m["runs"][1];
    GenerationOptions o = golden_options(run["config"]);
    o.force_words_ids.clear();
    o.force_words = " " + run["force_words"].get<std::string>() + " ,";  // blanks and an empty part read as nothing
    const auto batch = model->generate_ids(ids_of(m["input_ids"]), o);
    for (size_t i = 0; i < batch.size(); ++i) check_candidates(batch[i], run["batch"][i]);
    GenerationOptions none = o;
    none.force_words = " , |";
    CHECK_THROWS_WITH(model->generate_ids({ids_of(m["input_ids"])[0]}, none), Catch::Contains("force_words: no word"));
    GenerationOptions prefix = o;
    prefix.force_words = "walk|walked";  // "walk"'s pieces start "walked"'s: transformers refuses that
    CHECK_THROWS_WITH(model->generate_ids({ids_of(m["input_ids"])[0]}, prefix), Catch::Contains("the start of another"));
    GenerationOptions outside = golden_options(run["config"]);
    outside.force_words_ids = {{{{100000}}, false}};
    CHECK_THROWS_WITH(model->generate_ids({ids_of(m["input_ids"])[0]}, outside), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("constrained beam search: max_time stops every row at once, as transformers' stopping criteria do",
          "[constrained_beam]") {
    // Up after the first step: the running beams of one token, followed by </s> as transformers pads them.
    const auto want = golden("constrained_beam")["max_time"];
    auto model = Model::load(model_dir(want["model"].get<std::string>()), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const auto got = model->generate_ids(ids_of(want["input_ids"]), golden_options(want["config"]));
    REQUIRE(got.size() == want["batch"].size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("input " << i);
        check_candidates(got[i], want["batch"][i]);
    }
}

TEST_CASE("constrained beam search: a model folder's generation_config.json applies force_words_ids with no flags",
          "[constrained_beam]") {
    const auto want = golden("constrained_beam")["model_folder"];
    const TempDir folder("constrained_beam_folder");
    for (const auto& entry : std::filesystem::directory_iterator(model_dir(want["model"].get<std::string>())))
        std::filesystem::copy_file(entry.path(), folder / entry.path().filename().string());
    std::ofstream(folder / "generation_config.json") << want["generation_config"].dump();

    const GenerationConfig defaults = load_model_generation_defaults(folder.path());
    CHECK(defaults.warnings.empty());  // force_words_ids is applied, not warned about
    GenerationOptions o;
    o.drop_invalid_text = false;
    apply_generation_config(defaults, {}, &o);
    CHECK(shown(o.force_words_ids) == shown(constraints_of(want["generation_config"]["force_words_ids"])));
    auto model = Model::load(folder.path(), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    for (size_t i = 0; i < want["texts"].size(); ++i) {
        INFO("text " << i);
        const auto got = model->generate_ids({model->tokenizer().encode(want["texts"][i].get<std::string>())}, o)[0];
        const auto expected = want["sequences"][i].get<std::vector<std::vector<int>>>();
        REQUIRE(got.size() == expected.size());
        for (size_t k = 0; k < got.size(); ++k) CHECK(got[k].ids == expected[k]);
    }
    CHECK(classify_foreign_setting("force_words_ids", "[[5]]") != ForeignSetting::Unsupported);
    CHECK(classify_foreign_setting("constraints", "[1]") == ForeignSetting::Unsupported);  // python objects: no JSON form
}

TEST_CASE("constrained beam search: refused as transformers refuses it, naming the field", "[constrained_beam][options]") {
    int refused = 0;
    const auto g = golden("constrained_beam");
    for (const auto& r : g["refused"]) {
        const std::string why = r["why"].get<std::string>();
        INFO(why << ": " << r["config"].dump());
        if (why == "empty") {  // [] is the field's "none" here (plain beam search), where transformers refuses it
            CHECK(generation_options_from_json(r["config"].dump()).force_words_ids.empty());
            continue;
        }
        std::string message;
        try {
            message = refusal(r["config"]);
        } catch (const Error& e) {  // malformed lists are refused as the JSON is read
            message = e.what();
        }
        CHECK_THAT(message, Catch::Contains("force_words_ids"));
        ++refused;
    }
    CHECK(refused >= 7);
    GenerationOptions words;
    words.force_words = "park", words.num_beams = 1;
    CHECK_THROWS_WITH(validate_generation_options(words),
                      Catch::Contains("force_words: constrained beam search needs num_beams > 1"));
    GenerationOptions two;  // a phrasal constraint with two phrases is not what transformers builds
    two.num_beams = 4, two.force_words_ids = {{{{1}, {2}}, false}};
    CHECK_THROWS_WITH(validate_generation_options(two), Catch::Contains("constraint 1 must be one list"));
}
