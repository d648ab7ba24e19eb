// config.json parsing with transformers' defaults and derivations, and clear errors.
#include <catch2/catch.hpp>

#include "t5s/error.h"
#include "t5s/model_config.h"

using namespace t5s;

namespace {
ErrorCode code_of(const std::string& json) {
    try {
        parse_model_config(json, "cfg.json");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).rfind("cfg.json: ", 0) == 0);  // names the file first
        return e.code();
    }
    FAIL("accepted: " << json);
    return ErrorCode::Internal;
}
}  // namespace

TEST_CASE("config defaults and derived fields follow T5Config", "[config]") {
    ModelConfig c = parse_model_config(R"({"d_model": 16, "num_layers": 3})", "x");
    CHECK(c.num_decoder_layers == 3);  // defaults to num_layers
    CHECK(c.feed_forward_proj == "relu");
    CHECK(c.dense_act_fn == "relu");
    CHECK_FALSE(c.is_gated_act);
    CHECK(c.tie_word_embeddings);
    CHECK(c.decoder_start_token_id == 0);
    CHECK(c.relative_attention_num_buckets == 32);
    CHECK(c.relative_attention_max_distance == 128);
    CHECK(c.layer_norm_epsilon == Approx(1e-6));

    ModelConfig g = parse_model_config(R"({"feed_forward_proj": "gated-gelu", "tie_word_embeddings": false, "num_heads": 3, "d_kv": 5})", "x");
    CHECK(g.is_gated_act);
    CHECK(g.dense_act_fn == "gelu_new");  // transformers' backwards-compatible mapping
    CHECK(g.inner_dim() == 15);
    CHECK_FALSE(g.tie_word_embeddings);
    ModelConfig s = parse_model_config(R"({"feed_forward_proj": "gated-silu"})", "x");
    CHECK(s.dense_act_fn == "silu");
    ModelConfig m = parse_model_config(R"({"model_type": "mt5", "vocab_size": 250112})", "x");
    CHECK(m.feed_forward_proj == "gated-gelu");
    CHECK_FALSE(m.tie_word_embeddings);
    CHECK(m.vocab_size == 250112);
    ModelConfig e = parse_model_config(R"({"eos_token_id": [1], "decoder_start_token_id": 0})", "x");
    CHECK(e.eos_token_id == 1);
}

TEST_CASE("config errors name the file and the problem", "[config][errors]") {
    CHECK(code_of("{not json") == ErrorCode::CorruptFile);
    CHECK(code_of("[1,2]") == ErrorCode::CorruptFile);
    CHECK(code_of(R"({"feed_forward_proj": "gated-gelu-x"})") == ErrorCode::Unsupported);
    CHECK(code_of(R"({"feed_forward_proj": "swiglu"})") == ErrorCode::Unsupported);
    CHECK(code_of(R"({"feed_forward_proj": "mega-relu"})") == ErrorCode::Unsupported);
    CHECK(code_of(R"({"model_type": "umt5"})") == ErrorCode::Unsupported);
    CHECK(code_of(R"({"architectures": ["LongT5ForConditionalGeneration"]})") == ErrorCode::Unsupported);
    CHECK(code_of(R"({"d_model": 0})") == ErrorCode::CorruptFile);
    CHECK(code_of(R"({"d_model": "big"})") == ErrorCode::CorruptFile);
    CHECK(code_of(R"({"vocab_size": 10, "eos_token_id": 12})") == ErrorCode::CorruptFile);
    CHECK_THROWS_AS(load_model_config("/nonexistent/config.json"), Error);
}

TEST_CASE("config round-trips through model_config_to_json", "[config]") {
    ModelConfig a = parse_model_config(R"({"d_model": 24, "d_kv": 5, "num_heads": 3, "feed_forward_proj": "gated-gelu",
                                          "tie_word_embeddings": false, "vocab_size": 600, "num_decoder_layers": 1})", "x");
    ModelConfig b = parse_model_config(model_config_to_json(a), "y");
    CHECK(b.d_model == 24);
    CHECK(b.d_kv == 5);
    CHECK(b.num_heads == 3);
    CHECK(b.num_decoder_layers == 1);
    CHECK(b.dense_act_fn == "gelu_new");
    CHECK_FALSE(b.tie_word_embeddings);
    CHECK(b.vocab_size == 600);
}
