// Contrastive search, penalty_alpha with top_k > 1: token ids equal to transformers 4.55's
// _contrastive_search (goldens from tests/make_contrastive_goldens.py) on the tiny checkpoints,
// alone and as a batch of inputs of different lengths (stop_strings among the settings); a model
// folder whose generation_config.json names penalty_alpha without top_k (transformers' 50); when the
// mode applies, max_time; the re-ranking on synthetic states.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <fstream>

#include "decode/batch_decoder.h"
#include "decode/contrastive_search.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

void check_candidate(const std::vector<Candidate>& got, const nlohmann::json& want) {
    REQUIRE(got.size() == 1);
    CHECK(got[0].ids == want["ids"].get<std::vector<int>>());
    CHECK(std::abs(got[0].score - want["score"].get<double>()) <= 1e-4);
}

}  // namespace

TEST_CASE("contrastive search: token ids and scores equal transformers' on the tiny checkpoints", "[contrastive]") {
    const auto g = golden("contrastive");
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
                    check_candidate(model->generate_ids({inputs[i]}, o)[0], run["per_input"][i]);
                }
                const auto batch = model->generate_ids(inputs, o);  // one search over every input's rows
                REQUIRE(batch.size() == inputs.size());
                for (size_t i = 0; i < inputs.size(); ++i) {
                    INFO("input " << i << " in the batch");
                    check_candidate(batch[i], run["batch"][i]);
                }
                ++runs;
            }
        }
    }
    CHECK(runs > 0);
}

TEST_CASE("contrastive search: a generation_config.json with penalty_alpha and no top_k runs transformers' top_k 50",
          "[contrastive]") {
    const auto want = golden("contrastive")["model_folder"];
    const TempDir folder("contrastive_folder");
    for (const auto& entry : std::filesystem::directory_iterator(model_dir(want["model"].get<std::string>())))
        std::filesystem::copy_file(entry.path(), folder / entry.path().filename().string());
    std::ofstream(folder / "generation_config.json") << want["generation_config"].dump();

    const GenerationConfig defaults = load_model_generation_defaults(folder.path());
    CHECK(defaults.warnings.empty());  // penalty_alpha is applied, not warned about
    GenerationOptions o;
    o.drop_invalid_text = false;
    apply_generation_config(defaults, {}, &o);
    CHECK(o.penalty_alpha == 0.6f);
    CHECK(o.top_k == 50);
    CHECK(is_contrastive_search(o));
    auto model = Model::load(folder.path(), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    for (size_t i = 0; i < want["texts"].size(); ++i) {
        INFO("text " << i);
        const auto got = model->generate_ids({model->tokenizer().encode(want["texts"][i].get<std::string>())}, o)[0];
        REQUIRE(got.size() == 1);
        CHECK(got[0].ids == want["sequences"][i].get<std::vector<int>>());
    }
    // A top_k the file names stays, and one the caller gives wins.
    const GenerationConfig named = parse_generation_config(R"({"penalty_alpha": 0.5, "top_k": 3})", "generation_config.json");
    CHECK(named.top_k == 3);
    GenerationOptions given;
    given.top_k = 7;
    apply_generation_config(defaults, {"top_k"}, &given);
    CHECK(given.top_k == 7);
    CHECK_FALSE(parse_generation_config(R"({"top_k": 3})", "generation_config.json").table_settings.penalty_alpha > 0.0f);
    CHECK(classify_foreign_setting("penalty_alpha", "0.6") != ForeignSetting::Unsupported);  // no longer "not supported yet"
    CHECK_THROWS_WITH(parse_generation_config(R"({"penalty_alpha": -1})", "g.json"), Catch::Contains("penalty_alpha"));
}

TEST_CASE("contrastive search: applies exactly where transformers' generation mode is contrastive", "[contrastive][options]") {
    GenerationOptions o;
    o.penalty_alpha = 0.6f, o.top_k = 4;
    CHECK(is_contrastive_search(o));
    CHECK(decode::BatchDecoder::rows_for(o) == 4);  // each input holds its top_k candidates
    GenerationOptions one = o;
    one.top_k = 1;  // transformers: greedy
    CHECK_FALSE(is_contrastive_search(one));
    GenerationOptions off = o;
    off.penalty_alpha = 0.0f;
    CHECK_FALSE(is_contrastive_search(off));
    GenerationOptions sampled = o;
    sampled.do_sample = true;
    CHECK_FALSE(is_contrastive_search(sampled));
    GenerationOptions beams = o;
    beams.num_beams = 3;
    CHECK_FALSE(is_contrastive_search(beams));
    GenerationOptions forced = o;
    forced.force_words_ids = {ForcedWordsConstraint{{{5, 6}}, false}};  // constrained beam search first
    CHECK_FALSE(is_contrastive_search(forced));

    // A request naming penalty_alpha and top_k searches; top_k alone still implies sampling.
    GenerationOptions request = o;
    std::vector<std::string> named = {"penalty_alpha", "top_k"};
    CHECK_FALSE(imply_sampling(&request, &named));
    CHECK_FALSE(request.do_sample);
    GenerationOptions plain;
    plain.top_k = 4;
    std::vector<std::string> top_k_only = {"top_k"};
    CHECK(imply_sampling(&plain, &top_k_only));

    // The one candidate per input of greedy search (transformers refuses more), and a width the
    // vocabulary has room for (torch.topk would fail there).
    GenerationOptions many = o;
    many.num_return_sequences = 2;
    CHECK_THROWS_WITH(validate_generation_options(many), Catch::Contains("num_return_sequences"));
    auto model = Model::load(model_dir("t5v10-tied-relu"), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    // max_time ends every input once a token is taken after the time has passed (MaxTimeCriteria).
    GenerationOptions timed = o;
    timed.max_new_tokens = 16, timed.max_time = 1e-9, timed.drop_invalid_text = false;
    for (const auto& c :
         model->generate_ids({model->tokenizer().encode("hello"), model->tokenizer().encode("a longer input")}, timed))
        CHECK(c.at(0).ids.size() == 1);
    GenerationOptions wide = o;
    wide.top_k = 100000;
    CHECK_THROWS_WITH(model->generate_ids({model->tokenizer().encode("hello")}, wide), Catch::Contains("top_k (100000)"));
}

TEST_CASE("contrastive search: the degeneration penalty outweighs a likelier token that repeats the context", "[contrastive]") {
    // One input, k = 2, vocabulary of 4, hidden size 2.
    ContrastiveSearch search(1, 2, /*start_token=*/0, /*eos=*/1, /*max_new_tokens=*/3, at::kCPU);
    std::vector<std::vector<int64_t>> processed;
    const auto process = [&](at::Tensor&, const at::Tensor& sequences, const std::vector<int64_t>& inputs) {
        CHECK(inputs == std::vector<int64_t>{0});
        const at::Tensor s = sequences.contiguous();
        processed.emplace_back(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
    };
    CHECK(search.last_tokens().equal(at::tensor(std::vector<int64_t>{0, 0})));
    // Step 0: the start token, twice; its state (1, 0); token 3 likelier than token 2.
    const at::Tensor start_logits = at::tensor(std::vector<float>{-9, -9, 1, 2}).repeat({2, 1});
    auto r = search.step(start_logits, at::tensor(std::vector<float>{1, 0, 5, 5}).view({2, 2}), 0.6f, process);
    CHECK(r.continued == std::vector<int64_t>{0, 0});  // row 1's (different) state is not the start token's
    CHECK(r.finished.empty());
    CHECK(search.last_tokens().equal(at::tensor(std::vector<int64_t>{3, 2})));  // by probability
    // Step 1: token 3's state points as the start token's (cosine 1), token 2's across (cosine 0).
    const at::Tensor logits = at::tensor(std::vector<float>{-9, 5, 1, 0, -9, 0, 1, 5}).view({2, 4});
    r = search.step(logits, at::tensor(std::vector<float>{2, 0, 0, 3}).view({2, 2}), 0.6f, process);
    CHECK(r.continued == std::vector<int64_t>{1, 1});                           // 0.4 * p(2) - 0 beats 0.4 * p(3) - 0.6
    CHECK(search.last_tokens().equal(at::tensor(std::vector<int64_t>{3, 2})));  // row 1's logits: 3 first
    REQUIRE(processed.size() == 2);
    CHECK(processed[1] == std::vector<int64_t>{0, 2});
    // Step 2: with alpha near 0 probability decides; then step 3 reaches max_new_tokens.
    r = search.step(logits, at::tensor(std::vector<float>{1, 1, 0, 1}).view({2, 2}), 0.01f, process);
    CHECK(r.continued == std::vector<int64_t>{0, 0});
    r = search.step(logits, at::tensor(std::vector<float>{1, 1, 0, 1}).view({2, 2}), 0.6f, process);
    REQUIRE(r.finished.size() == 1);
    CHECK(r.continued.empty());
    CHECK(r.finished[0].input == 0);
    CHECK(r.finished[0].ids.size() == 3);
    CHECK(r.finished[0].ids[0] == 2);
    CHECK(r.finished[0].ids[1] == 3);
    CHECK(r.finished[0].score < 0.0);
}
