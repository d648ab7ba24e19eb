// fp32 parity with Hugging Face transformers (goldens from tests/make_goldens.py): encoder
// states, logits, loss, and greedy / beam / penalised outputs on every tiny checkpoint variant.
#include <catch2/catch.hpp>

#include <iostream>

#include "skip.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

const char* kModels[] = {"t5v10-tied-relu",     "flan-gated-gelu-bf16", "unequal-depth-bin",
                         "sharded-safetensors", "sharded-bin",          "mt5-like-f16"};

std::vector<std::vector<int>> generate_each(const Model& m, const IdBatch& inputs, const GenerationOptions& o) {
    std::vector<std::vector<int>> out;
    for (const auto& row : inputs) out.push_back(m.generate_ids({row}, o)[0][0].ids);
    return out;
}

}  // namespace

TEST_CASE("fp32 encoder states, logits and loss match transformers", "[parity]") {
    for (const char* name : kModels) {
        DYNAMIC_SECTION(name) {
            const auto g = golden(name);
            auto model = Model::load(model_dir(name), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});

            // Tokenizer ids as T5Tokenizer gives them.
            for (size_t i = 0; i < g["texts"].size(); ++i) {
                CHECK(model->tokenizer().encode(g["texts"][i].get<std::string>()) == g["input_ids"][i].get<std::vector<int>>());
            }

            const auto& e = g["encoder"];
            const double enc_diff = max_abs_diff(model->encoder_hidden(unpad(e["input_ids"], e["attention_mask"])), e["hidden"]);
            CHECK(enc_diff <= 1e-4);

            const auto& tf = g["teacher_forced"];
            const IdBatch src = unpad(tf["input_ids"], tf["attention_mask"]);
            const double logit_diff = max_abs_diff(model->logits(src, ids_of(tf["decoder_input_ids"])), tf["logits"]);
            CHECK(logit_diff <= 1e-4);

            IdBatch labels;
            for (const auto& row : tf["labels"]) {
                std::vector<int> l;
                for (int v : row.get<std::vector<int>>())
                    if (v != -100) l.push_back(v);
                labels.push_back(l);
            }
            const ScoreResult s = model->score(src, labels);
            const double loss_diff = std::abs(s.loss - tf["loss"].get<double>());
            CHECK(loss_diff <= 1e-4);
            for (size_t i = 0; i < labels.size(); ++i) {
                const ScoreResult one = model->score({src[i]}, {labels[i]});
                CHECK(std::abs(one.loss - tf["loss_per_row"][i].get<double>()) <= 1e-4);
                std::vector<int> am = tf["argmax"][i].get<std::vector<int>>();
                am.resize(labels[i].size());
                CHECK(s.argmax[i] == am);
            }
            std::cout << "PARITY " << name << " max|d| encoder=" << enc_diff << " logits=" << logit_diff << " loss=" << loss_diff
                      << "\n";
        }
    }
}

TEST_CASE("greedy, beam and penalised decoding match transformers", "[parity][generation]") {
    for (const char* name : kModels) {
        DYNAMIC_SECTION(name) {
            const auto g = golden(name);
            auto model = Model::load(model_dir(name), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
            const IdBatch inputs = ids_of(g["input_ids"]);

            GenerationOptions greedy;
            greedy.max_new_tokens = g["greedy"]["max_new_tokens"];
            CHECK(generate_each(*model, inputs, greedy) == g["greedy"]["per_input"].get<std::vector<std::vector<int>>>());
            // The padded batch gives each row what it gives alone.
            std::vector<std::vector<int>> batched;
            auto all = model->generate_ids(inputs, greedy);
            for (auto& c : all) batched.push_back(c[0].ids);
            CHECK(batched == g["greedy"]["batch_padded"].get<std::vector<std::vector<int>>>());
            for (size_t i = 0; i < inputs.size(); ++i)
                CHECK(std::abs(all[i][0].score - g["greedy_scores"][i].get<double>()) <= 1e-4);

            for (const auto& b : g["beam"]) {
                const GenerationOptions o = beam_options_of(b["config"]);
                for (size_t i = 0; i < inputs.size(); ++i) {
                    auto cands = model->generate_ids({inputs[i]}, o)[0];
                    const auto& want = b["per_input"][i];
                    REQUIRE(cands.size() == want["sequences"].size());
                    for (size_t k = 0; k < cands.size(); ++k) {
                        CHECK(cands[k].ids == want["sequences"][k].get<std::vector<int>>());
                        CHECK(std::abs(cands[k].score - want["sequences_scores"][k].get<double>()) <= 1e-4);
                    }
                }
            }

            GenerationOptions rep = greedy;
            rep.repetition_penalty = g["repetition_penalty"]["repetition_penalty"];
            rep.max_new_tokens = g["repetition_penalty"]["max_new_tokens"];
            CHECK(generate_each(*model, inputs, rep) ==
                  g["repetition_penalty"]["per_input"].get<std::vector<std::vector<int>>>());

            GenerationOptions ngram = greedy;
            ngram.no_repeat_ngram_size = g["no_repeat_ngram"]["no_repeat_ngram_size"];
            ngram.max_new_tokens = g["no_repeat_ngram"]["max_new_tokens"];
            CHECK(generate_each(*model, inputs, ngram) == g["no_repeat_ngram"]["per_input"].get<std::vector<std::vector<int>>>());

            GenerationOptions minlen = greedy;
            minlen.min_new_tokens = g["min_new_tokens"]["min_new_tokens"];
            minlen.max_new_tokens = g["min_new_tokens"]["max_new_tokens"];
            CHECK(generate_each(*model, inputs, minlen) == g["min_new_tokens"]["per_input"].get<std::vector<std::vector<int>>>());
        }
    }
}

TEST_CASE("independent float64 references in ../shared/fixtures/tiny-t5-random", "[parity][may_skip][shared]") {
    const auto fixtures = shared_dir() / "fixtures" / "tiny-t5-random";
    if (!std::filesystem::exists(fixtures))
        T5S_SKIP(fixtures.string() << " not present (the team's shared folder beside the clone)");
    for (const char* name : {"tiny_t5v10", "tiny_flan_t5"}) {
        DYNAMIC_SECTION(name) {
            // The fixtures are loose files: lay them out as a model folder.
            TempDir scratch(std::string("shared_") + name);
            const auto& dir = scratch.path();
            std::filesystem::copy_file(fixtures / (std::string(name) + "_config.json"), dir / "config.json",
                                       std::filesystem::copy_options::overwrite_existing);
            std::filesystem::copy_file(fixtures / (std::string(name) + ".safetensors"), dir / "model.safetensors",
                                       std::filesystem::copy_options::overwrite_existing);
            auto model = Model::load(dir, RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
            const auto ref = load_json(fixtures / (std::string(name) + "_logits.json"));
            const IdBatch enc = ids_of(ref["enc_sequences"]), dec = ids_of(ref["dec_sequences"]);
            const double enc_diff = max_abs_diff(model->encoder_hidden(enc), ref["enc_hidden"]);
            const double logit_diff = max_abs_diff(model->logits(enc, dec), ref["logits"]);
            CHECK(enc_diff <= 1e-4);
            CHECK(logit_diff <= 1e-4);
            std::cout << "PARITY shared/" << name << " max|d| encoder=" << enc_diff << " logits=" << logit_diff
                      << " (vs float64)\n";

            const auto g = golden(std::string("shared_") + name);
            GenerationOptions greedy;
            greedy.max_new_tokens = g["greedy"]["max_new_tokens"];
            for (size_t i = 0; i < enc.size(); ++i) {
                CHECK(model->generate_ids({enc[i]}, greedy)[0][0].ids == g["greedy"]["per_input"][i].get<std::vector<int>>());
            }
            GenerationOptions beam;
            beam.num_beams = g["beam"]["config"]["num_beams"];
            beam.num_return_sequences = g["beam"]["config"]["num_return_sequences"];
            beam.max_new_tokens = g["beam"]["config"]["max_new_tokens"];
            for (size_t i = 0; i < enc.size(); ++i) {
                auto cands = model->generate_ids({enc[i]}, beam)[0];
                for (size_t k = 0; k < cands.size(); ++k) {
                    CHECK(cands[k].ids == g["beam"]["per_input"][i]["sequences"][k].get<std::vector<int>>());
                    CHECK(std::abs(cands[k].score - g["beam"]["per_input"][i]["sequences_scores"][k].get<double>()) <= 1e-4);
                }
            }
        }
    }
}
