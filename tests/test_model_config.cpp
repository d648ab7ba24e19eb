// config.json parsing with transformers' defaults and derivations, and clear errors.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "t5s/error.h"
#include "t5s/generation_config.h"
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

    ModelConfig g = parse_model_config(
        R"({"feed_forward_proj": "gated-gelu", "tie_word_embeddings": false, "num_heads": 3, "d_kv": 5})", "x");
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

TEST_CASE("config: every id of an eos_token_id list must be inside the vocabulary", "[config][errors]") {
    CHECK(parse_model_config(R"({"vocab_size": 10, "eos_token_id": [1, 9]})", "x").eos_token_id == 1);
    CHECK_THROWS_WITH(parse_model_config(R"({"vocab_size": 10, "eos_token_id": [1, 10]})", "dir/config.json"),
                      "dir/config.json: 'eos_token_id' entry 1 (10) must be a token id inside the vocabulary (0..9)");
    CHECK_THROWS_WITH(parse_model_config(R"({"vocab_size": 10, "eos_token_id": [1, "x"]})", "dir/config.json"),
                      Catch::Contains("'eos_token_id' entry 1"));
    ModelConfig m = parse_model_config(R"({"vocab_size": 10})", "x");
    const GenerationConfig ok = parse_generation_config(R"({"eos_token_id": [1, 9]})", "g.json");
    apply_generation_token_ids(ok, "g.json", &m);
    CHECK(m.eos_token_id == 1);
    const GenerationConfig outside = parse_generation_config(R"({"eos_token_id": [1, 32000]})", "g.json");
    CHECK_THROWS_WITH(apply_generation_token_ids(outside, "g.json", &m),
                      Catch::Contains("g.json: 'eos_token_id' 32000 is outside the vocabulary"));
    CHECK_THROWS_WITH(parse_generation_config(R"({"eos_token_id": [1, -3]})", "g.json"), Catch::Contains("eos_token_id"));
}

// Unclear errors: every wrong JSON type of every key the parser reads is one line
// naming the file and the key (never a json.exception from the library, which ended as exit 3).
TEST_CASE("config: wrong JSON types name the file and the key", "[config][errors]") {
    const std::string huge_number(400, '9');
    const char* keys[] = {"vocab_size",
                          "d_model",
                          "d_kv",
                          "d_ff",
                          "num_layers",
                          "num_heads",
                          "relative_attention_num_buckets",
                          "relative_attention_max_distance",
                          "dropout_rate",
                          "layer_norm_epsilon",
                          "pad_token_id",
                          "eos_token_id",
                          "decoder_start_token_id",
                          "model_type",
                          "feed_forward_proj",
                          "tie_word_embeddings"};
    const std::string values[] = {"null", "\"7\"", "[]", "{}", "1.5", "-3", huge_number, "1e300", "true", "18446744073709551615"};
    int rejected = 0;
    for (const char* key : keys) {
        for (const std::string& value : values) {
            const std::string json = std::string("{\"") + key + "\": " + value + "}";
            try {
                parse_model_config(json, "cfg.json");
            } catch (const Error& e) {
                const std::string msg = e.what();
                INFO(json << " -> " << msg);
                CHECK(msg.rfind("cfg.json: ", 0) == 0);
                CHECK(msg.find(key) != std::string::npos);
                CHECK(msg.find("json.exception") == std::string::npos);
                CHECK(msg.find('\n') == std::string::npos);
                ++rejected;
            }
        }
    }
    // 16 keys x 10 values: the one right type among them is `true` for tie_word_embeddings.
    CHECK(rejected == 159);
    // num_decoder_layers: null means "same as num_layers" in T5Config.
    CHECK(parse_model_config(R"({"num_layers": 3, "num_decoder_layers": null})", "x").num_decoder_layers == 3);
    CHECK(code_of(R"({"num_layers": 1000000000000})") == ErrorCode::CorruptFile);
}

TEST_CASE("config sizes are checked against the tensor table before any allocation", "[config][errors]") {
    ModelConfig c =
        parse_model_config(R"({"d_model": 8, "d_kv": 2, "num_heads": 4, "d_ff": 16, "vocab_size": 20, "num_layers": 2})", "x");
    std::map<std::string, std::vector<int64_t>> table = {{"shared.weight", {20, 8}},
                                                         {"encoder.block.0.layer.0.SelfAttention.q.weight", {8, 8}},
                                                         {"encoder.block.1.layer.0.SelfAttention.q.weight", {8, 8}},
                                                         {"decoder.block.0.layer.0.SelfAttention.q.weight", {8, 8}},
                                                         {"decoder.block.1.layer.0.SelfAttention.q.weight", {8, 8}},
                                                         {"encoder.block.0.layer.1.DenseReluDense.wi.weight", {16, 8}}};
    CHECK_NOTHROW(check_config_against_tensors(c, table, "w.safetensors"));
    auto error_of = [&](const ModelConfig& cfg) -> std::string {
        try {
            check_config_against_tensors(cfg, table, "w.safetensors");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::CorruptFile);
            return e.what();
        }
        return "";
    };
    ModelConfig deep = c;
    deep.num_layers = 1000000000000;
    CHECK(error_of(deep) ==
          "w.safetensors: missing tensor 'encoder.block.2.layer.0.SelfAttention.q.weight' (config.json "
          "num_layers is 1000000000000 but the checkpoint has 2 encoder blocks)");
    ModelConfig deep_decoder = c;
    deep_decoder.num_decoder_layers = 10000000;
    CHECK(error_of(deep_decoder).find("num_decoder_layers is 10000000 but the checkpoint has 2 decoder blocks") !=
          std::string::npos);
    ModelConfig wide = c;
    wide.d_model = 1000000000;
    CHECK(error_of(wide).find("tensor 'shared.weight' has shape [20,8] but config.json implies [20,1000000000]") !=
          std::string::npos);
    ModelConfig ff = c;
    ff.d_ff = 99999999;
    CHECK(error_of(ff).find("DenseReluDense.wi.weight") != std::string::npos);
}

TEST_CASE("config round-trips through model_config_to_json", "[config]") {
    ModelConfig a = parse_model_config(R"({"d_model": 24, "d_kv": 5, "num_heads": 3, "feed_forward_proj": "gated-gelu",
                                          "tie_word_embeddings": false, "vocab_size": 600, "num_decoder_layers": 1})",
                                       "x");
    ModelConfig b = parse_model_config(model_config_to_json(a), "y");
    CHECK(b.d_model == 24);
    CHECK(b.d_kv == 5);
    CHECK(b.num_heads == 3);
    CHECK(b.num_decoder_layers == 1);
    CHECK(b.dense_act_fn == "gelu_new");
    CHECK_FALSE(b.tie_word_embeddings);
    CHECK(b.vocab_size == 600);
}

TEST_CASE("config.json tasks: task_specific_params as T5 checkpoints carry them, a default only when marked", "[config][tasks]") {
    // t5-small's shape: several tasks, none marked: listed, no default.
    const std::string t5_small = R"({"task_specific_params": {"summarization": {"prefix": "summarize: ", "max_length": 200},
        "translation_en_to_de": {"prefix": "translate English to German: "}, "odd": 3, "no_prefix": {"max_length": 5}}})";
    ModelConfig c = parse_model_config(t5_small, "cfg.json");
    REQUIRE(c.tasks.tasks.size() == 2);  // entries without a string prefix are skipped
    CHECK(find_task(c.tasks, "translation_en_to_de")->prefix == "translate English to German: ");
    CHECK(c.tasks.default_task.empty());
    // A fine-tune records its prefix as a new task and marks it the default; the base's tasks stay.
    const ModelConfig tuned = parse_model_config(model_config_to_json(with_training_task(c, "paraphrase: ")), "saved.json");
    CHECK(tuned.tasks.default_task == "paraphrase");
    CHECK(find_task(tuned.tasks, "paraphrase")->prefix == "paraphrase: ");
    CHECK(find_task(tuned.tasks, "summarization")->prefix == "summarize: ");
    CHECK(model_config_to_json(tuned).find("\"max_length\": 200") != std::string::npos);  // other task settings kept
    // Trained on raw text: no default, so the fine-tune applies none.
    CHECK(with_training_task(tuned, "").tasks.default_task.empty());
    CHECK(parse_model_config(model_config_to_json(with_training_task(tuned, "")), "s").tasks.default_task.empty());
    CHECK(task_name_for_prefix("translate English to Chinese: ") == "translate_english_to_chinese");
    CHECK(task_name_for_prefix(": ") == "task");
    // A marker naming no listed task, or not a string: one line naming the file and the key.
    CHECK_THROWS_WITH(parse_model_config(R"({"t5studio_default_task": "x"})", "cfg.json"),
                      Catch::StartsWith("cfg.json: 't5studio_default_task' names 'x'"));
    CHECK(code_of(R"({"t5studio_default_task": 3, "task_specific_params": {"a": {"prefix": "a: "}}})") == ErrorCode::CorruptFile);
}
