// Pasted generation settings (t5s/pasted_settings.h): a model card's generate(...) recipe, a JSON
// object, GenerationConfig(...), Python literals and nested lists, every key not applied listed with
// its kind, garbage refused with one line, the size and nesting bounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "t5s/pasted_settings.h"

using namespace t5s;

namespace {

// humarin/chatgpt_paraphraser_on_T5_base's model card, its generate() call with the values inlined.
const char* const kHumarinRecipe =
    "model.generate(input_ids, num_beams=5, num_beam_groups=5, diversity_penalty=3.0, repetition_penalty=10.0, "
    "no_repeat_ngram_size=2, max_length=128)";

const AppliedSetting* applied(const PastedSettings& p, const std::string& field) {
    for (const AppliedSetting& a : p.applied)
        if (a.field == field) return &a;
    return nullptr;
}

const NotAppliedSetting* not_applied(const PastedSettings& p, const std::string& key) {
    for (const NotAppliedSetting& n : p.not_applied)
        if (n.key == key) return &n;
    return nullptr;
}

nlohmann::json as_json(const GenerationOptions& o) { return nlohmann::json::parse(generation_options_to_json(o)); }

// The fields of `after` that differ from `before`, by JSON name.
std::vector<std::string> changed_fields(const GenerationOptions& before, const GenerationOptions& after) {
    const nlohmann::json b = as_json(before), a = as_json(after);
    std::vector<std::string> out;
    for (const auto& [key, value] : a.items())
        if (b[key] != value) out.push_back(key);
    std::sort(out.begin(), out.end());
    return out;
}

std::string pasted_error(const std::string& text) {
    try {
        apply_pasted_settings(text, GenerationOptions{});
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("pasted settings: the humarin card's generate() recipe onto a sampling workspace", "[pasted]") {
    GenerationOptions current;
    current.do_sample = true;
    current.temperature = 0.7f;
    current.num_return_sequences = 4;
    const PastedSettings p = apply_pasted_settings(kHumarinRecipe, current);
    CHECK(p.form == "generate(...)");
    CHECK(p.options.num_beams == 5);
    CHECK(p.options.num_beam_groups == 5);
    CHECK(p.options.diversity_penalty == 3.0f);
    CHECK(p.options.repetition_penalty == 10.0f);
    CHECK(p.options.no_repeat_ngram_size == 2);
    CHECK(p.options.max_new_tokens == 127);  // max_length counts the decoder start token
    CHECK_FALSE(p.options.do_sample);        // num_beams without do_sample: beam search, as in transformers
    CHECK(p.options.temperature == 0.7f);    // not named: kept
    CHECK(p.options.num_return_sequences == 4);
    CHECK_NOTHROW(validate_generation_options(p.options));
    // Exactly the named fields changed, and do_sample by the beam rule.
    CHECK(changed_fields(current, p.options) == std::vector<std::string>{"diversity_penalty", "do_sample", "max_new_tokens",
                                                                         "no_repeat_ngram_size", "num_beam_groups", "num_beams",
                                                                         "repetition_penalty"});
    const AppliedSetting* length = applied(p, "max_new_tokens");
    REQUIRE(length);
    CHECK(length->key == "max_length");
    CHECK(length->value == "127");
    CHECK(length->note.find("decoder start token") != std::string::npos);
    const AppliedSetting* mode = applied(p, "do_sample");
    REQUIRE(mode);
    CHECK(mode->value == "false");
    CHECK(mode->note.find("beam search") != std::string::npos);
    REQUIRE(p.not_applied.size() == 1);
    CHECK(p.not_applied[0].key == "input_ids");
    CHECK(p.not_applied[0].kind == NotAppliedKind::NotASetting);
    const std::vector<std::string> lines = pasted_settings_lines(p);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("num_beams=5") != std::string::npos);
    CHECK(lines[0].find("max_new_tokens=127") != std::string::npos);
    CHECK(lines[1].find("input_ids") != std::string::npos);
}

TEST_CASE("pasted settings: penalty_alpha with top_k is contrastive search, not sampling", "[pasted]") {
    GenerationOptions current;
    current.do_sample = true;  // a sampling workspace
    const PastedSettings p =
        apply_pasted_settings("model.generate(input_ids, penalty_alpha=0.6, top_k=4, max_new_tokens=64)", current);
    CHECK_FALSE(p.options.do_sample);
    CHECK(p.options.penalty_alpha == 0.6f);
    CHECK(p.options.top_k == 4);
    const AppliedSetting* mode = applied(p, "do_sample");
    REQUIRE(mode);
    CHECK(mode->value == "false");
    CHECK(mode->note.find("contrastive search") != std::string::npos);
    const PastedSettings fresh = apply_pasted_settings("penalty_alpha=0.6, top_k=4", GenerationOptions{});
    CHECK_FALSE(fresh.options.do_sample);  // top_k beside penalty_alpha implies no sampling
    CHECK_FALSE(applied(fresh, "do_sample"));
    // penalty_alpha alone: transformers' generate() searches its default top_k of 50.
    const PastedSettings alone = apply_pasted_settings("penalty_alpha=0.6", GenerationOptions{});
    CHECK(alone.options.top_k == 50);
    REQUIRE(applied(alone, "top_k"));
    CHECK(applied(alone, "top_k")->note.find("default of 50") != std::string::npos);
}

TEST_CASE("pasted settings: the card's full code, with variables and the model's inputs", "[pasted]") {
    const std::string code =
        "input_ids = tokenizer(f'paraphrase: {question}', return_tensors=\"pt\", padding=\"longest\").input_ids\n"
        "outputs = model.generate(\n"
        "    input_ids, temperature=temperature, repetition_penalty=10.0,  # the card's values\n"
        "    attention_mask=mask, **inputs,\n"
        "    num_return_sequences=5, no_repeat_ngram_size=2,\n"
        "    num_beams=5, num_beam_groups=5,\n"
        "    max_length=128, diversity_penalty=3.0,\n"
        "    streamer=streamer, tokenizer=tokenizer,\n"
        ")\n"
        "res = tokenizer.batch_decode(outputs, skip_special_tokens=True)\n";
    const PastedSettings p = apply_pasted_settings(code, GenerationOptions{});
    CHECK(p.options.num_return_sequences == 5);
    CHECK(p.options.num_beams == 5);
    CHECK(p.options.max_new_tokens == 127);
    CHECK(p.options.temperature == GenerationOptions{}.temperature);
    REQUIRE(not_applied(p, "temperature"));
    CHECK(not_applied(p, "temperature")->kind == NotAppliedKind::NotAValue);
    CHECK(not_applied(p, "temperature")->why.find("'temperature'") != std::string::npos);
    CHECK(not_applied(p, "attention_mask")->kind == NotAppliedKind::NotASetting);
    CHECK(not_applied(p, "**inputs")->kind == NotAppliedKind::NotASetting);
    CHECK(not_applied(p, "input_ids")->kind == NotAppliedKind::NotASetting);
    CHECK(not_applied(p, "streamer")->kind == NotAppliedKind::NoEffect);
    CHECK(not_applied(p, "tokenizer")->kind == NotAppliedKind::NoEffect);
    CHECK(p.not_applied.size() == 6);
}

TEST_CASE("pasted settings: a JSON object (generation_config.json) with bookkeeping and foreign keys", "[pasted]") {
    const std::string text = R"({
        "_from_model_config": true, "transformers_version": "4.55.4", "bos_token_id": 0,
        "decoder_start_token_id": 0, "num_beams": 4, "early_stopping": "never", "max_length": 64,
        "max_new_tokens": 30, "guidance_scale": 1.0, "watermarking_config": {"greenlist_ratio": 0.25},
        "frobnicate": 3, "length_penalty": -0.5, "min_length": 5
    })";
    const PastedSettings p = apply_pasted_settings(text, GenerationOptions{});
    CHECK(p.form == "a JSON object");
    CHECK(p.options.num_beams == 4);
    CHECK_FALSE(p.options.early_stopping);
    CHECK(p.options.max_new_tokens == 30);  // max_new_tokens wins over max_length, as in transformers
    CHECK(p.options.min_new_tokens == 4);
    CHECK(p.options.length_penalty == -0.5f);
    CHECK(not_applied(p, "max_length")->kind == NotAppliedKind::Overridden);
    CHECK(not_applied(p, "_from_model_config")->kind == NotAppliedKind::NoEffect);
    CHECK(not_applied(p, "transformers_version")->kind == NotAppliedKind::NoEffect);
    CHECK(not_applied(p, "bos_token_id")->kind == NotAppliedKind::NoEffect);
    CHECK(not_applied(p, "guidance_scale")->kind == NotAppliedKind::NoEffect);  // its neutral value
    CHECK(not_applied(p, "decoder_start_token_id")->kind == NotAppliedKind::Unsupported);
    CHECK(not_applied(p, "watermarking_config")->kind == NotAppliedKind::Unsupported);
    CHECK(not_applied(p, "frobnicate")->kind == NotAppliedKind::Unknown);
    CHECK(p.not_applied.size() == 8);
}

TEST_CASE("pasted settings: GenerationConfig(...), a bare keyword list and implied sampling", "[pasted]") {
    const PastedSettings g = apply_pasted_settings(
        "GenerationConfig(\n  do_sample=True, top_p=0.92, temperature=.85,\n  num_return_sequences=3, max_new_tokens=40,\n)",
        GenerationOptions{});
    CHECK(g.form == "GenerationConfig(...)");
    CHECK(g.options.do_sample);
    CHECK(g.options.top_p == 0.92f);
    CHECK(g.options.temperature == 0.85f);
    CHECK(g.options.num_return_sequences == 3);
    CHECK(g.options.max_new_tokens == 40);
    CHECK(g.not_applied.empty());

    // Sampling settings alone imply sampling, as in generate, serve and the app.
    const PastedSettings bare = apply_pasted_settings("temperature=0.7, top_k=50, epsilon_cutoff=3e-4", GenerationOptions{});
    CHECK(bare.form == "a keyword list");
    CHECK(bare.options.do_sample);
    CHECK(bare.options.top_k == 50);
    CHECK(bare.options.epsilon_cutoff == Approx(3e-4));
    REQUIRE(applied(bare, "do_sample"));
    CHECK(applied(bare, "do_sample")->note.find("implied") != std::string::npos);

    // A JSON object may also be a Python dict literal; a key given twice: the last counts.
    const PastedSettings dict =
        apply_pasted_settings("{'num_beams': 2, 'do_sample': False, 'num_beams': 3}", GenerationOptions{});
    CHECK(dict.options.num_beams == 3);
    const PastedSettings twice = apply_pasted_settings("num_beams=2, num_beams=3", GenerationOptions{});
    CHECK(twice.options.num_beams == 3);
    CHECK(not_applied(twice, "num_beams")->kind == NotAppliedKind::Overridden);
}

TEST_CASE("pasted settings: nested lists, tuples and dicts into the list fields", "[pasted]") {
    const PastedSettings p = apply_pasted_settings(
        "bad_words_ids=[[1, 2]], suppress_tokens=(12, 7), sequence_bias={(12, 7): -2.0, (9,): 1.5}, stop_strings='###', "
        "exponential_decay_length_penalty=(8, 1.25), force_words_ids=[[[4, 5], [6]]], forced_eos_token_id=1",
        GenerationOptions{});
    CHECK(p.options.bad_words_ids == TokenIdLists{{1, 2}});
    CHECK(p.options.suppress_tokens == TokenIds{12, 7});
    REQUIRE(p.options.sequence_bias.size() == 2);
    CHECK(p.options.sequence_bias[0].ids == std::vector<int>{12, 7});
    CHECK(p.options.sequence_bias[0].bias == -2.0f);
    CHECK(p.options.sequence_bias[1].ids == std::vector<int>{9});
    CHECK(p.options.stop_strings == std::vector<std::string>{"###"});
    REQUIRE(p.options.exponential_decay_length_penalty);
    CHECK(p.options.exponential_decay_length_penalty->start_index == 8);
    CHECK(p.options.exponential_decay_length_penalty->decay_factor == 1.25f);
    REQUIRE(p.options.force_words_ids.size() == 1);
    CHECK(p.options.force_words_ids[0].disjunctive);
    CHECK(p.options.forced_eos_token_id == TokenIds{1});
    CHECK(p.not_applied.empty());

    // None turns an optional setting off and leaves any other as it is.
    GenerationOptions current;
    current.max_time = 2.0;
    const PastedSettings none = apply_pasted_settings("max_time=None, num_beams=None", current);
    CHECK_FALSE(none.options.max_time);
    CHECK(none.options.num_beams == current.num_beams);
    CHECK(not_applied(none, "num_beams")->kind == NotAppliedKind::NoEffect);
}

TEST_CASE("pasted settings: values outside a field's range or of the wrong type are refused by key", "[pasted]") {
    GenerationOptions current;
    current.num_beams = 3;
    const PastedSettings p = apply_pasted_settings(
        "num_beams=0, top_p=1.5, max_length=1, no_repeat_ngram_size='two', bad_words_ids=[[]], min_new_tokens=2.5, task_prefix=5",
        current);
    CHECK(p.options.num_beams == 3);
    CHECK(p.applied.empty());
    for (const char* key :
         {"num_beams", "top_p", "max_length", "no_repeat_ngram_size", "bad_words_ids", "min_new_tokens", "task_prefix"}) {
        INFO(key);
        const NotAppliedSetting* n = not_applied(p, key);
        REQUIRE(n);
        CHECK(n->kind == NotAppliedKind::Refused);
        CHECK(n->why.find(key) != std::string::npos);  // the message names what was pasted
    }
    CHECK(not_applied(p, "max_length")->why.find(">= 2") != std::string::npos);
    // Numbers a float cannot hold are refused, not stored as infinities.
    const PastedSettings huge =
        apply_pasted_settings("sequence_bias={(12, 7): -3e72}, exponential_decay_length_penalty=(8, 1e39)", current);
    CHECK(not_applied(huge, "sequence_bias")->kind == NotAppliedKind::Refused);
    CHECK(not_applied(huge, "exponential_decay_length_penalty")->kind == NotAppliedKind::Refused);
    CHECK(changed_fields(current, p.options).empty());
}

TEST_CASE("pasted settings: every field of the table is taken by its JSON name", "[pasted]") {
    // The JSON of the default settings (every field, as the history and settings.json write it)
    // pasted over settings that differ: each field applied by its own name, the defaults back.
    GenerationOptions current;
    current.num_beams = 4;
    current.top_p = 0.5f;
    current.max_time = 3.0;
    current.suppress_tokens = {5};
    const PastedSettings p = apply_pasted_settings(generation_options_to_json(GenerationOptions{}), current);
    CHECK(p.not_applied.empty());
    for (const GenerationField& f : generation_fields()) {
        INFO(f.json);
        const AppliedSetting* a = applied(p, f.json);
        REQUIRE(a);
        CHECK(a->key == f.json);
    }
    CHECK(as_json(p.options) == as_json(GenerationOptions{}));
}

TEST_CASE("pasted settings: garbage and broken text are one line with where, never a crash", "[pasted]") {
    CHECK(pasted_error("hello world").find("no settings found") != std::string::npos);
    CHECK(pasted_error("").find("no settings found") != std::string::npos);
    CHECK(pasted_error("{}").find("no settings found") != std::string::npos);
    CHECK(pasted_error("{\"num_beams\": 4").find("never closed") != std::string::npos);
    CHECK(pasted_error("model.generate(input_ids, num_beams=5").find("never closed") != std::string::npos);
    CHECK(pasted_error("num_beams=[1, 2").find("never closed") != std::string::npos);
    CHECK(pasted_error("num_beams=5 max_length=128").find("expected ','") != std::string::npos);
    CHECK(pasted_error("stop_strings='abc").find("string is never closed") != std::string::npos);
    CHECK(pasted_error("num_beams=5)").find("unexpected ')'") != std::string::npos);
    CHECK(pasted_error("temperature=1e999").find("out of range") != std::string::npos);
    CHECK(pasted_error("stop_strings='\\ud800'").find("surrogate") != std::string::npos);
    CHECK(pasted_error(std::string("num_beams=5, x='\xff'")).find("UTF-8") != std::string::npos);
    const std::string where = pasted_error("{\n  \"num_beams\": 4\n  \"top_p\": 0.9\n}");
    CHECK(where.find("line 3") != std::string::npos);
    // Columns count code points: the same mistake after three CJK characters as after three letters.
    const auto column_of = [](const std::string& e) {
        return e.find("column ") == std::string::npos ? "" : e.substr(e.find("column "));
    };
    const std::string ascii_column = column_of(pasted_error("x='abc' y=1"));
    CHECK_FALSE(ascii_column.empty());
    CHECK(column_of(pasted_error("x='\u65e5\u672c\u8a9e' y=1")) == ascii_column);
    for (const std::string& e : {pasted_error("hello world"), where}) {
        CHECK(e.rfind("pasted settings: ", 0) == 0);
        CHECK(e.find('\n') == std::string::npos);
    }
}

TEST_CASE("pasted settings: the size and nesting bounds", "[pasted]") {
    std::string padded = "num_beams=5,";
    padded.resize(kMaxPastedSettingsBytes, ' ');
    CHECK(apply_pasted_settings(padded, GenerationOptions{}).options.num_beams == 5);
    padded += ' ';
    CHECK(pasted_error(padded).find("KiB") != std::string::npos);

    auto nested = [](int depth) {
        return "bad_words_ids=" + std::string(size_t(depth), '[') + "1" + std::string(size_t(depth), ']');
    };
    CHECK_NOTHROW(apply_pasted_settings(nested(32), GenerationOptions{}));  // read, then refused as a value
    CHECK(pasted_error(nested(33)).find("nested more than 32 deep") != std::string::npos);
    // Deep nesting of an expression is bounded the same way.
    CHECK(pasted_error("num_beams=f" + std::string(40, '(') + std::string(40, ')')).find("nested") != std::string::npos);
}
