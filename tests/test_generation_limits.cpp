// Limits checked before generation allocates ("huge inputs"), and generation_config.json
// ("unclear errors": it was not read at all).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_limits.h"
#include "t5s/model_config.h"
#include "test_support.h"

using namespace t5s;
using namespace t5s::test;

namespace {

ModelConfig t5_small() {
    return parse_model_config(
        R"({"d_model": 512, "d_kv": 64, "num_heads": 8, "d_ff": 2048, "num_layers": 6, "vocab_size": 32128})", "config.json");
}

std::string message_of(const std::function<void()>& f, ErrorCode* code) {
    try {
        f();
    } catch (const Error& e) {
        *code = e.code();
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("source length: flag, then the config's n_positions, then 512", "[limits]") {
    ModelConfig c = t5_small();
    GenerationOptions o;
    CHECK(source_token_limit(c, o) == kDefaultMaxSourceTokens);
    c.n_positions = 1024;
    CHECK(source_token_limit(c, o) == 1024);
    o.max_source_tokens = 3000;
    CHECK(source_token_limit(c, o) == 3000);
    CHECK(parse_model_config(R"({"n_positions": 512})", "x").n_positions == 512);

    GenerationOptions d;
    ErrorCode code = ErrorCode::Internal;
    const std::vector<std::vector<int>> ids = {std::vector<int>(10, 5), std::vector<int>(26000, 5)};
    CHECK(message_of([&] { check_source_lengths(ids, t5_small(), d); }, &code) ==
          "input 2 is 26000 tokens, more than the source limit of 512 (the default); shorten it or raise --max-source-tokens");
    CHECK(code == ErrorCode::InvalidArgument);
    d.max_source_tokens = 30000;
    CHECK_NOTHROW(check_source_lengths(ids, t5_small(), d));
}

TEST_CASE("generation memory is estimated up front and refused with OutOfMemory", "[limits]") {
    const ModelConfig c = t5_small();
    GenerationOptions o;  // 64 new tokens, greedy
    const double normal = estimate_generation_bytes(c, 8, 64, o, 4);
    CHECK(normal > 1e6);
    CHECK(normal < 1e9);          // t5-small, 8 x 64 tokens: well under a GB
    o.max_new_tokens = 99999999;  // the issue's reproducer: the position-bias table alone is 3.2e17 bytes
    CHECK(estimate_generation_bytes(c, 1, 8, o, 4) > 1e17);
    ErrorCode code = ErrorCode::Internal;
    const std::string msg = message_of([&] { check_generation_memory(c, 1, 8, o, 4, int64_t{16} << 30, "cpu"); }, &code);
    CHECK(code == ErrorCode::OutOfMemory);
    CHECK(msg.rfind("generation would need about ", 0) == 0);
    CHECK(msg.find("but only 17.2 GB are free on cpu (max_new_tokens 99999999") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
    // A 25k-token source is quadratic in the encoder: refused too.
    GenerationOptions small;
    CHECK(estimate_generation_bytes(c, 1, 25000, small, 4) > 2e10);
    CHECK_NOTHROW(check_generation_memory(c, 8, 64, GenerationOptions{}, 4, int64_t{16} << 30, "cpu"));
    CHECK_NOTHROW(check_generation_memory(c, 1, 8, o, 4, 0, "cpu"));  // unknown free memory: not checked
    o = GenerationOptions{};
    o.num_beams = 99999999;
    CHECK_THROWS_AS(check_generation_memory(c, 1, 8, o, 4, int64_t{16} << 30, "cpu"), Error);
}

TEST_CASE("generation_config.json: fields as transformers reads them", "[generation_config]") {
    const GenerationConfig g = parse_generation_config(
        R"({"decoder_start_token_id": 0, "eos_token_id": [1, 5], "pad_token_id": 0, "max_length": 20, "num_beams": 4,
            "early_stopping": "never", "do_sample": false, "top_p": 0.9, "bos_token_id": null, "transformers_version": "4.57"})",
        "generation_config.json");
    CHECK(g.present);
    CHECK(g.eos_token_id == 1);     // a list: the first id
    CHECK(g.max_new_tokens == 19);  // encoder-decoder: max_length counts the start token
    CHECK(g.early_stopping == false);
    CHECK(g.top_p == Approx(0.9f));
    CHECK_FALSE(g.temperature.has_value());  // absent: the caller's default stays
    CHECK(parse_generation_config(R"({"max_new_tokens": 7, "max_length": 20})", "x").max_new_tokens == 7);

    GenerationOptions o;
    apply_generation_config(g, {"num_beams"}, &o);  // --beams given: the flag wins
    CHECK(o.num_beams == 1);
    CHECK(o.max_new_tokens == 19);
    CHECK(o.top_p == Approx(0.9f));

    ModelConfig m = t5_small();
    apply_generation_token_ids(g, "generation_config.json", &m);
    CHECK(m.eos_token_id == 1);
    GenerationConfig far;
    far.eos_token_id = 99999;
    ErrorCode code = ErrorCode::Internal;
    CHECK(message_of([&] { apply_generation_token_ids(far, "g.json", &m); }, &code) ==
          "g.json: 'eos_token_id' 99999 is outside the vocabulary (config.json vocab_size 32128)");
    CHECK(generation_config_to_json(GenerationConfig{}) == "{}");
    CHECK_FALSE(load_generation_config("/nonexistent/generation_config.json").present);
}

TEST_CASE("generation_config.json: wrong types and values name the file and the key", "[generation_config][errors]") {
    const char* bad[] = {R"({"num_beams": "4"})",        R"({"num_beams": 0})",
                         R"({"max_length": 1})",         R"({"top_p": 1.5})",
                         R"({"temperature": -1})",       R"({"do_sample": "yes"})",
                         R"({"eos_token_id": -1})",      R"({"eos_token_id": [true]})",
                         R"({"max_new_tokens": 1e400})", R"({"top_k": 99999999999999})",
                         R"({"length_penalty": "x"})",   R"([1, 2])",
                         R"({"max_new_tokens": 1.5})",   R"({"no_repeat_ngram_size": -2})"};
    for (const char* text : bad) {
        ErrorCode code = ErrorCode::Internal;
        const std::string msg = message_of([&] { parse_generation_config(text, "gen.json"); }, &code);
        INFO(text << " -> " << msg);
        CHECK(code == ErrorCode::CorruptFile);
        CHECK(msg.rfind("gen.json: ", 0) == 0);
        CHECK(msg.find("json.exception") == std::string::npos);
        CHECK(msg.find('\n') == std::string::npos);
    }
}

namespace {

// The files load_model_generation_defaults reads, in `dir`: a tiny model's config.json (no tasks)
// and this generation_config.json.
void write_model_configs(const TempDir& dir, const std::string& generation_config) {
    std::filesystem::copy_file(data_dir() / "models" / "t5v10-tied-relu" / "config.json", dir / "config.json");
    std::ofstream(dir / "generation_config.json") << generation_config;
}

bool names_key(const std::vector<std::string>& warnings, const std::string& key) {
    for (const std::string& w : warnings)
        if (w.find("'" + key + "'") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("generation_config.json: a key not applied is a warning, never dropped in silence", "[generation_config]") {
    const TempDir model("gencfg");
    // Keys still unsupported (the applied ones, suppress_tokens and the like, are no warning).
    write_model_configs(model, R"({"num_beams": 2, "guidance_scale": 1.5, "token_healing": true, "remove_invalid_values": true,
        "dola_layers": "high", "watermarking_config": {"greenlist_ratio": 0.25}, "forced_decoder_ids": [[1, 5]], "my_own_key": 1,
        "suppress_tokens": [5], "renormalize_logits": true,
        "_from_model_config": true, "transformers_version": "4.40.0", "use_cache": true, "pad_token_id": 0})");
    const GenerationConfig g = load_model_generation_defaults(model.path());
    REQUIRE(g.num_beams == 2);  // what is applied still is
    for (const char* key : {"guidance_scale", "token_healing", "remove_invalid_values", "dola_layers", "watermarking_config",
                            "forced_decoder_ids", "my_own_key"}) {
        INFO(key);
        CHECK(names_key(g.warnings, key));
    }
    CHECK(g.warnings.size() == 7);  // bookkeeping and applied keys are not warned about
    for (const std::string& w : g.warnings) CHECK(w.find("generation_config.json") != std::string::npos);
}

TEST_CASE("generation_config.json: transformers' neutral values change nothing and are no warning", "[generation_config]") {
    const GenerationConfig g = parse_generation_config(
        R"({"num_beam_groups": 1, "diversity_penalty": 0.0, "typical_p": 1.0, "min_p": null, "bad_words_ids": null,
            "encoder_no_repeat_ngram_size": 0, "renormalize_logits": false, "bos_token_id": 0, "output_scores": false})",
        "generation_config.json");
    CHECK(g.warnings.empty());
    CHECK(parse_generation_config(R"({"eos_token_id": [1, 2]})", "g.json").warnings.size() ==
          1);  // only the first ends a candidate
    CHECK(classify_foreign_setting("guidance_scale", "1.5") == ForeignSetting::Unsupported);
    CHECK(classify_foreign_setting("guidance_scale", "1") == ForeignSetting::Neutral);
    CHECK(classify_foreign_setting("remove_invalid_values", "false") == ForeignSetting::Neutral);
    CHECK(classify_foreign_setting("transformers_version", "\"4.0\"") == ForeignSetting::Bookkeeping);
    CHECK(classify_foreign_setting("bogus", "1") == ForeignSetting::Unknown);
}
