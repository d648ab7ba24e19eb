// transformers' remaining generation controls against transformers 4.55 itself
// (tests/make_control_goldens.py): sequence_bias, suppress_tokens, begin_suppress_tokens,
// forced_bos_token_id, forced_eos_token_id, exponential_decay_length_penalty and
// renormalize_logits on random logits, exactly; StopStringCriteria's token texts and verdicts;
// generate()'s token ids in greedy, beam and group beam with each control (max_time and
// stop_strings included) on a tiny checkpoint; a model folder whose generation_config.json carries
// the keys; sampling's invariants; the refusals.
#include <ATen/ATen.h>
// c10 defines its own CHECK; Catch2's must win in test files.
#undef CHECK
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "decode/logits_processors.h"
#include "decode/stop_strings.h"
#include "decode/token_processors.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {
const nlohmann::json& goldens() {
    static const nlohmann::json g = golden("controls");
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

// The processor a unit case names, on sequences of the case's length.
void apply_case(const nlohmann::json& c, at::Tensor& scores, const at::Tensor& sequences) {
    const std::string name = c["processor"];
    const nlohmann::json& p = c["params"];
    const int64_t length = sequences.size(1), eos = 1;
    if (name == "sequence_bias")
        return apply_sequence_bias(scores, sequences, generation_options_from_json(p.dump()).sequence_bias);
    if (name == "suppress_tokens") return apply_suppress_tokens(scores, p["tokens"].get<TokenIds>());
    if (name == "begin_suppress_tokens")
        return apply_begin_suppress_tokens(scores, length, p["begin_index"].get<int64_t>(), p["tokens"].get<TokenIds>());
    if (name == "forced_bos_token_id") return apply_forced_bos(scores, length, p["id"].get<int>());
    if (name == "forced_eos_token_id")
        return apply_forced_eos(scores, length, p["max_length"].get<int64_t>(), p["ids"].get<TokenIds>());
    if (name == "exponential_decay_length_penalty")
        return apply_length_decay(scores, length, LengthDecay{p["start_index"].get<int>(), p["decay_factor"].get<double>()}, eos);
    if (name == "renormalize_logits") return apply_renormalize(scores, true);
    REQUIRE(name == "chain");
    GenerationOptions o = generation_options_from_json(p.dump());
    o.max_new_tokens = 20;  // forced_eos is off in the chain; the length limit matters to nothing else
    // The chain's begin index is the case's length (transformers' SuppressTokensAtBegin at 5).
    const TokenIds begin = o.begin_suppress_tokens;
    o.begin_suppress_tokens.clear();
    o.renormalize_logits = false;
    process_logits(scores, sequences, o, eos, /*include_warpers=*/false);
    apply_begin_suppress_tokens(scores, length, length, begin);
    apply_renormalize(scores, true);
}

GenerationOptions options_of(const nlohmann::json& settings) {
    GenerationOptions o = generation_options_from_json(settings.dump());
    o.drop_invalid_text = false;  // the ids as decoded: nothing screened
    return o;
}

std::vector<std::vector<int>> ids_of_candidates(const std::vector<Candidate>& candidates) {
    std::vector<std::vector<int>> out;
    for (const auto& c : candidates) out.push_back(c.ids);
    return out;
}

std::string utf8(const std::u32string& text) {
    std::string out;
    for (char32_t c : text) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6)), out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12)), out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18)), out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F)), out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

std::shared_ptr<const TokenTexts> token_texts(const Model& model) {
    static std::shared_ptr<const TokenTexts> texts =
        std::make_shared<const TokenTexts>(stop_string_token_texts(model.tokenizer()));
    return texts;
}
}  // namespace

TEST_CASE("controls: each processor equals transformers' on random logits", "[controls][goldens]") {
    const nlohmann::json& u = goldens()["unit"];
    const at::Tensor scores = float_matrix(u["scores"]), sequences = long_matrix(u["sequences"]);
    for (const auto& c : u["cases"]) {
        INFO(c["processor"].get<std::string>() << " " << c["params"].dump());
        at::Tensor mine = scores.clone();
        apply_case(c, mine, sequences.narrow(1, 0, c["length"].get<int64_t>()));
        const at::Tensor expected = float_matrix(c["scores"]);
        CHECK(at::equal(mine, expected));
        CHECK_FALSE(at::equal(expected, scores));  // every case changes the scores: none is vacuous
    }
    // Off where transformers' would not apply: another length, no settings.
    at::Tensor same = scores.clone();
    apply_forced_bos(same, 2, 7);
    apply_forced_eos(same, 4, 6, {1});
    apply_begin_suppress_tokens(same, 4, 5, {2});
    apply_length_decay(same, 3, LengthDecay{2, 1.5f}, 1);
    apply_sequence_bias(same, sequences, {});
    apply_suppress_tokens(same, {});
    CHECK(at::equal(same, scores));
}

TEST_CASE("controls: stop strings read tokens and match as transformers' StopStringCriteria", "[controls][goldens]") {
    const nlohmann::json& s = goldens()["stop_strings"];
    auto model = Model::load(model_dir(goldens()["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const std::shared_ptr<const TokenTexts> texts = token_texts(*model);
    const auto want = s["clean_tokens"].get<std::vector<std::string>>();
    REQUIRE(texts->size() == want.size());
    for (size_t id = 0; id < want.size(); ++id) {
        INFO("token " << id << " " << model->tokenizer().id_to_token(static_cast<int>(id)));
        CHECK(utf8((*texts)[id]) == want[id]);
    }
    const auto sequences = s["sequences"].get<std::vector<std::vector<int64_t>>>();
    for (const auto& c : s["cases"]) {
        const StopStrings stops(texts, c["stop_strings"].get<std::vector<std::string>>());
        for (size_t q = 0; q < sequences.size(); ++q) {
            const auto verdicts = c["per_sequence"][q].get<std::vector<bool>>();
            for (size_t n = 1; n <= sequences[q].size(); ++n) {
                INFO("stop strings " << c["stop_strings"].dump() << " sequence " << q << " prefix " << n);
                CHECK(stops.ends(sequences[q].data(), static_cast<int64_t>(n)) == verdicts[n - 1]);
            }
        }
    }
}

TEST_CASE("controls: generate() ids equal transformers' in greedy, beam and group beam", "[controls][goldens][generation]") {
    const nlohmann::json& g = goldens();
    auto model = Model::load(model_dir(g["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = ids_of(g["input_ids"]);
    for (const auto& c : g["generate"]["cases"]) {
        INFO(c["mode"].get<std::string>() << " " << c["settings"].dump());
        const GenerationOptions o = options_of(c["settings"]);
        // All inputs in one call: their rows decode together, each as if alone.
        const auto results = model->generate_ids(inputs, o);
        REQUIRE(results.size() == inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO("input " << i);
            CHECK(ids_of_candidates(results[i]) == c["per_input"][i].get<std::vector<std::vector<int>>>());
        }
    }
}

TEST_CASE("controls: a model folder's generation_config.json keys apply with no settings given",
          "[controls][goldens][generation]") {
    const nlohmann::json& mc = goldens()["model_config"];
    TempDir dir("control_config");
    for (const auto& entry : std::filesystem::directory_iterator(model_dir(goldens()["model"])))
        std::filesystem::copy_file(entry.path(), dir / entry.path().filename().string());
    std::ofstream(dir / "generation_config.json") << mc["generation_config"].dump();
    const GenerationConfig config = load_model_generation_defaults(dir.path());
    CHECK(config.warnings.empty());  // every key applied: none named as ignored
    GenerationOptions o;
    apply_generation_config(config, {}, &o);
    CHECK(o.renormalize_logits);
    CHECK(o.suppress_tokens == TokenIds{486});
    CHECK(o.forced_eos_token_id == TokenIds{1});
    auto model = Model::load(dir.path(), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = ids_of(goldens()["input_ids"]);
    const auto results = model->generate_ids(inputs, o);
    for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input " << i);
        CHECK(results[i][0].ids == mc["per_input"][i].get<std::vector<int>>());
    }
}

TEST_CASE("controls: sampling keeps each control's promise", "[controls][generation]") {
    auto model = Model::load(model_dir(goldens()["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = ids_of(goldens()["input_ids"]);
    GenerationOptions base;
    base.do_sample = true, base.num_return_sequences = 4, base.max_new_tokens = 10, base.seed = 11,
    base.drop_invalid_text = false;
    base.top_k = 50;
    auto each = [&](const GenerationOptions& o, const std::function<void(const std::vector<int>&)>& check) {
        for (const auto& per_input : model->generate_ids(inputs, o))
            for (const auto& c : per_input) check(c.ids);
    };
    GenerationOptions o = base;
    o.suppress_tokens = {129, 130, 443};
    o.begin_suppress_tokens = {121, 347};
    each(o, [&](const std::vector<int>& ids) {
        REQUIRE_FALSE(ids.empty());
        CHECK(ids[0] != 121);
        CHECK(ids[0] != 347);
        for (int id : ids) CHECK((id != 129 && id != 130 && id != 443));
    });
    o = base;
    o.forced_bos_token_id = 308;
    o.forced_eos_token_id = {1};
    o.renormalize_logits = true;
    each(o, [&](const std::vector<int>& ids) {
        REQUIRE(ids.size() >= 1);
        CHECK(ids[0] == 308);
        if (ids.size() == static_cast<size_t>(o.max_new_tokens)) CHECK(ids.back() == 1);  // at the limit: </s>
    });
    o = base;
    o.max_time = 1e-9;  // passed by the end of the first step: every row stops with one token
    each(o, [&](const std::vector<int>& ids) { CHECK(ids.size() == 1); });
    o = base;
    o.stop_strings = {"~", "g", " "};
    const StopStrings stops(token_texts(*model), o.stop_strings);
    int stopped = 0;
    each(o, [&](const std::vector<int>& ids) {
        std::vector<int64_t> row{0};
        for (size_t n = 0; n < ids.size(); ++n) {
            row.push_back(ids[n]);
            const bool last = n + 1 == ids.size();
            const bool ends = stops.ends(row.data(), static_cast<int64_t>(row.size()));
            if (!last) CHECK_FALSE(ends);  // nothing after a stop string
            if (last && ends) ++stopped;
            if (last && !ends) CHECK((ids.back() == 1 || ids.size() == static_cast<size_t>(o.max_new_tokens)));
        }
    });
    CHECK(stopped > 0);
}

TEST_CASE("controls: bad values are refused with one line naming the setting", "[controls]") {
    auto model = Model::load(model_dir(goldens()["model"]), RuntimeOptions{Device::Cpu, Precision::Fp32, 0});
    const IdBatch inputs = {ids_of(goldens()["input_ids"])[0]};
    GenerationOptions o;
    o.max_new_tokens = 4;
    o.sequence_bias = {{{5, 100000}, 1.0f}};
    CHECK_THROWS_WITH(model->generate_ids(inputs, o), Catch::Contains("sequence_bias") && Catch::Contains("100000"));
    o = GenerationOptions();
    o.forced_bos_token_id = 100000;
    CHECK_THROWS_WITH(model->generate_ids(inputs, o), Catch::Contains("forced_bos_token_id"));
    o = GenerationOptions();
    o.forced_eos_token_id = {1, 100000};
    CHECK_THROWS_WITH(model->generate_ids(inputs, o), Catch::Contains("forced_eos_token_id"));
    o = GenerationOptions();
    o.stop_strings = {"\xF0\x9F\x98\x80"};  // an emoji: no token of the tiny vocabulary reads as it
    CHECK_THROWS_WITH(model->generate_ids(inputs, o), Catch::Contains("stop_strings"));
    CHECK_THROWS_WITH(parse_generation_config(R"({"sequence_bias": [[[1, -2], 1.0]]})", "gc.json"),
                      Catch::Contains("gc.json") && Catch::Contains("sequence_bias"));
    CHECK(
        parse_generation_config(R"({"sequence_bias": {}, "suppress_tokens": [], "max_time": null})", "gc.json").warnings.empty());
}
