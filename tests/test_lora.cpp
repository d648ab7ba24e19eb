// LoRA adapters in PEFT's format (goldens from tests/make_lora_goldens.py: real peft +
// transformers): logits, greedy and beam ids with the adapter applied; switching adapters on a
// loaded base; the one-line errors for adapters this engine cannot or must not apply.
#include <catch2/catch.hpp>

#include <fstream>

#include "t5s/error.h"
#include "t5s/lora.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

std::filesystem::path adapter_dir(const std::string& name) { return data_dir() / "lora" / name; }

RuntimeOptions cpu(Precision p, std::filesystem::path adapter = {}) {
    RuntimeOptions o{Device::Cpu, p, 0};
    o.adapter = std::move(adapter);
    return o;
}

double logit_diff(const Model& m, const nlohmann::json& base_golden, const nlohmann::json& lora_golden) {
    const auto& tf = base_golden["teacher_forced"];
    return max_abs_diff(m.logits(unpad(tf["input_ids"], tf["attention_mask"]), ids_of(tf["decoder_input_ids"])),
                        lora_golden["logits"]["data"]);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void copy_adapter(const std::string& name, const std::filesystem::path& to) {
    std::filesystem::create_directories(to);
    for (const auto& e : std::filesystem::directory_iterator(adapter_dir(name)))
        std::filesystem::copy_file(e.path(), to / e.path().filename(), std::filesystem::copy_options::overwrite_existing);
}

void edit_config(const std::filesystem::path& dir, const std::string& key, const nlohmann::json& value) {
    auto cfg = load_json(dir / "adapter_config.json");
    cfg[key] = value;
    std::ofstream(dir / "adapter_config.json") << cfg.dump(2);
}

}  // namespace

TEST_CASE("PEFT adapters: logits, greedy and beam ids match peft + transformers", "[lora][parity]") {
    const auto goldens = golden("lora");
    for (const auto& [name, g] : goldens["adapters"].items()) {
        DYNAMIC_SECTION(name) {
            const std::string base = g["base"];
            const auto bg = golden(base);
            auto model = Model::load(model_dir(base), cpu(Precision::Fp32, adapter_dir(name)));
            const double d = logit_diff(*model, bg, g);
            auto plain = Model::load(model_dir(base), cpu(Precision::Fp32));
            const auto& tf = bg["teacher_forced"];
            const double base_d = max_abs_diff(
                plain->logits(unpad(tf["input_ids"], tf["attention_mask"]), ids_of(tf["decoder_input_ids"])), tf["logits"]);
            const double effect =
                max_abs_diff(plain->logits(unpad(tf["input_ids"], tf["attention_mask"]), ids_of(tf["decoder_input_ids"])),
                             g["logits"]["data"]);
            WARN(name << ": max |logit diff| vs PEFT = " << d << " (the base alone vs transformers: " << base_d
                      << "; the adapter moves the logits by up to " << effect << ")");
            CHECK(d <= 1e-5);
            CHECK(effect > 0.05);  // the adapter matters: a no-op adapter would pass the check above
            const IdBatch inputs = ids_of(bg["input_ids"]);
            GenerationOptions greedy;
            greedy.max_new_tokens = 12;
            for (size_t i = 0; i < inputs.size(); ++i)
                CHECK(model->generate_ids({inputs[i]}, greedy)[0][0].ids == g["greedy"][i].get<std::vector<int>>());
            for (const auto& b : g["beam"]) {
                const GenerationOptions o = beam_options_of(b["config"]);
                for (size_t i = 0; i < inputs.size(); ++i) {
                    auto cands = model->generate_ids({inputs[i]}, o)[0];
                    const auto& want = b["per_input"][i];
                    REQUIRE(cands.size() == want.size());
                    for (size_t k = 0; k < cands.size(); ++k) CHECK(cands[k].ids == want[k].get<std::vector<int>>());
                }
            }
        }
    }
}

TEST_CASE("adapters switch on a loaded base without reloading it", "[lora]") {
    const auto goldens = golden("lora");
    const auto bg = golden("t5v10-tied-relu");
    const auto& tf = bg["teacher_forced"];
    auto model = Model::load(model_dir("t5v10-tied-relu"), cpu(Precision::Fp32));
    CHECK(max_abs_diff(model->logits(unpad(tf["input_ids"], tf["attention_mask"]), ids_of(tf["decoder_input_ids"])),
                       tf["logits"]) <= 1e-4);
    model->set_adapter(adapter_dir("t5v10-qv-wo"));
    CHECK(model->info().adapter == adapter_dir("t5v10-qv-wo"));
    CHECK(logit_diff(*model, bg, goldens["adapters"]["t5v10-qv-wo"]) <= 1e-5);
    model->set_adapter(adapter_dir("t5v10-all-rslora"));
    CHECK(logit_diff(*model, bg, goldens["adapters"]["t5v10-all-rslora"]) <= 1e-5);
    // A bad folder leaves the current adapter on.
    CHECK(!error_of([&] { model->set_adapter(adapter_dir("flan-qv-wo")); }).empty());
    CHECK(logit_diff(*model, bg, goldens["adapters"]["t5v10-all-rslora"]) <= 1e-5);
    model->set_adapter({});
    CHECK(model->info().adapter.empty());
    CHECK(max_abs_diff(model->logits(unpad(tf["input_ids"], tf["attention_mask"]), ids_of(tf["decoder_input_ids"])),
                       tf["logits"]) <= 1e-4);
}

TEST_CASE("adapters run on bf16 and int8 bases (measured distance to the fp32 PEFT logits)", "[lora]") {
    const auto goldens = golden("lora");
    for (const char* name : {"t5v10-qv-wo", "flan-qv-wo"}) {
        const auto& g = goldens["adapters"][name];
        const auto bg = golden(g["base"].get<std::string>());
        for (Precision p : {Precision::Bf16, Precision::Int8}) {
            auto with = Model::load(model_dir(g["base"]), cpu(p, adapter_dir(name)));
            auto without = Model::load(model_dir(g["base"]), cpu(p));
            const double d = logit_diff(*with, bg, g);
            const double base_d =
                max_abs_diff(without->logits(unpad(bg["teacher_forced"]["input_ids"], bg["teacher_forced"]["attention_mask"]),
                                             ids_of(bg["teacher_forced"]["decoder_input_ids"])),
                             bg["teacher_forced"]["logits"]);
            WARN(name << " " << to_string(p) << ": max |logit diff| with adapter " << d << ", base alone vs fp32 base "
                      << base_d);
            // The adapter adds no error of its own beyond the base's quantisation (same order).
            CHECK(d <= std::max(4 * base_d, 0.05));
        }
    }
}

TEST_CASE("bad adapters are refused with one line naming the problem", "[lora]") {
    const ModelConfig flan = load_model_config(model_dir("flan-gated-gelu-bf16") / "config.json");
    auto model = Model::load(model_dir("t5v10-tied-relu"), cpu(Precision::Fp32));
    TempDir tmp("lora");
    const auto missing = tmp.path() / "empty";
    std::filesystem::create_directories(missing);
    CHECK(error_of([&] { model->set_adapter(missing); }) == missing.string() + ": no adapter_config.json in the adapter folder");
    // Made for another base: the tensor and both shapes.
    const std::string shape = error_of([&] { model->set_adapter(adapter_dir("flan-qv-wo")); });
    CHECK(shape.find("base_model.model.decoder.block.0.layer.0.SelfAttention.q.lora_A.weight has shape [4, 24] but the base "
                     "model needs [4, 32]") != std::string::npos);
    for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"use_dora", true},
                                                                                        {"modules_to_save", {"lm_head"}},
                                                                                        {"layers_to_transform", {0}},
                                                                                        {"rank_pattern", {{"q", 8}}},
                                                                                        {"alpha_pattern", {{"q", 8}}},
                                                                                        {"bias", "all"}}) {
        const auto dir = tmp.path() / key;
        copy_adapter("t5v10-qv-wo", dir);
        edit_config(dir, key, value);
        const std::string e = error_of([&] { model->set_adapter(dir); });
        INFO(e);
        CHECK(e.rfind("unsupported: " + key, 0) == 0);
        CHECK(e.find((dir / "adapter_config.json").string()) != std::string::npos);
    }
    const std::string unknown = error_of([&] { parse_lora_targets("q,query", flan); });
    CHECK(unknown == "--lora-targets: unknown LoRA target 'query'; valid: q, k, v, o, wi_0, wi_1, wo, all-linear");
    CHECK(parse_lora_targets("all-linear", flan) == std::vector<std::string>{"all-linear"});
}
