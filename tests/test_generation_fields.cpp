// The generation options' field table (t5s/generation_fields.h): JSON both ways for every field,
// old history records, the named and live merges and the range messages, all from the one table.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <type_traits>
#include <variant>

#include "t5s/error.h"
#include "t5s/generation_fields.h"

using namespace t5s;

namespace {

// Every field of `o` moved off its default (a value each type can hold and the range allows).
GenerationOptions all_changed() {
    GenerationOptions o;
    for (const auto& f : generation_fields()) {
        std::visit(
            [&](auto member) {
                auto& v = o.*member;
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, bool>) v = !v;
                else if constexpr (std::is_same_v<T, std::string>) v = v + "x";
                else if constexpr (std::is_same_v<T, TokenIdLists>) v.push_back({12, 7});
                else if constexpr (std::is_same_v<T, TokenIds>) v.push_back(12);
                else if constexpr (std::is_same_v<T, SequenceBias>) v.push_back({{12, 7}, -2.5f});
                else if constexpr (std::is_same_v<T, std::optional<LengthDecay>>) v = LengthDecay{8, 1.25f};
                else if constexpr (std::is_same_v<T, std::vector<std::string>>) v.push_back(".");
                else if constexpr (std::is_same_v<T, ForcedWords>) v = {{{{12, 7}}, false}, {{{9}, {4, 5}}, true}};
                else if constexpr (std::is_same_v<T, std::optional<double>>) v = 0.25;
                else if constexpr (kHasEnumNames<T>)
                    v = enum_at<T>((enum_index(v) + 1) % static_cast<int>(enum_names<T>().size()));
                else v = static_cast<T>(v + 1);
            },
            f.member);
    }
    return o;
}

nlohmann::json as_json(const GenerationOptions& o) { return nlohmann::json::parse(generation_options_to_json(o)); }

// The "(default N" a help line states, NaN when it states none as a number.
double stated_default(const std::string& help) {
    static const std::regex number(R"(default (-?[0-9][0-9.e+-]*)(?=[ ;:),]|$))");
    std::smatch m;
    if (!std::regex_search(help, m, number)) return NAN;
    return std::stod(m[1]);
}

// Whether `stated` reads back as the field's value in `o` (a float as a float); true for a non-number.
bool reads_back_as(const GenerationField& f, const GenerationOptions& o, double stated) {
    return std::visit(
        [&](auto member) {
            const auto& v = o.*member;
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(stated) == v;
            else return true;
        },
        f.member);
}

}  // namespace

TEST_CASE("field table: names are unique and every field round-trips through JSON", "[options][fields]") {
    std::set<std::string> json_names, flags;
    for (const auto& f : generation_fields()) {
        CHECK(json_names.insert(f.json).second);
        if (*f.flag) CHECK(flags.insert(f.flag).second);
        CHECK(find_generation_field(f.json) == &f);
        CHECK(std::string(f.help).size() > 10);
        // A number default is filled in from GenerationOptions{}, never written by hand, and its text reads back.
        INFO(f.json);
        CHECK(std::isnan(stated_default(f.help)));
        const std::string help = field_help(f);  // a misplaced {default} throws
        CHECK(help.find("{default") == std::string::npos);
        if (const double stated = stated_default(help); !std::isnan(stated)) CHECK(reads_back_as(f, GenerationOptions{}, stated));
        // The other tables' own columns (t5s/settings_fields.h): the generation flags and JSON read no
        // "unset" value, no flag use and no secret, so a row setting one would be ignored.
        CHECK(std::isnan(f.unset));
        CHECK(f.use == FlagUse::Table);
        CHECK_FALSE(f.secret);
    }
    CHECK(find_generation_field("future_knob") == nullptr);
    const GenerationOptions changed = all_changed();
    const nlohmann::json written = as_json(changed);
    CHECK(written.size() == generation_fields().size());
    CHECK(as_json(generation_options_from_json(written.dump())) == written);
    for (const auto& f : generation_fields()) {
        INFO(f.json);
        CHECK(written[f.json] != as_json(GenerationOptions{})[f.json]);  // the field itself travelled
    }
}

TEST_CASE("field table: history records written before the table keep reading", "[options][fields][history]") {
    // A settings_json as the history wrote it before model_scores, protect and the quality filters
    // existed, with the adapter and spans the history adds beside the options.
    const char* old_record =
        R"({"max_new_tokens":48,"min_new_tokens":0,"num_beams":4,"length_penalty":1.0,"early_stopping":true,)"
        R"("num_return_sequences":3,"do_sample":false,"temperature":1.0,"top_k":0,"top_p":1.0,"repetition_penalty":1.2,)"
        R"("no_repeat_ngram_size":3,"seed":-1,"no_copy":true,"distinct":false,"max_rounds":4,"batch_size":8,)"
        R"("adapter":"/runs/a/final","spans":{"input":[],"candidates":[]}})";
    const GenerationOptions o = generation_options_from_json(old_record);
    CHECK(o.max_new_tokens == 48);
    CHECK(o.num_beams == 4);
    CHECK(o.early_stopping);
    CHECK(o.num_return_sequences == 3);
    CHECK(o.repetition_penalty == Approx(1.2f));
    CHECK(o.no_repeat_ngram_size == 3);
    CHECK(o.no_copy);
    CHECK(o.model_scores == GenerationOptions{}.model_scores);  // fields it lacks keep their defaults
    CHECK(o.rank == GenerationOptions{}.rank);
    CHECK_FALSE(o.min_similarity);
    // Nulls are empty filters; a wrong type names the field.
    CHECK_FALSE(generation_options_from_json(R"({"min_change":null})").min_change);
    CHECK_THROWS_WITH(generation_options_from_json(R"({"num_beams":2.5})"),
                      "generation settings: 'num_beams' must be an integer");
    CHECK_THROWS_WITH(generation_options_from_json(R"({"rank":3})"),
                      "generation settings: 'rank' must be one of auto, similarity, back_score, fluency or none");
}

TEST_CASE("field table: an enum field reads and writes its table's names", "[options][fields][enum_names]") {
    // Records and settings.json written while rank was a string hold these names: each reads back.
    for (const std::string& name : {"auto", "similarity", "back_score", "fluency", "none"}) {
        INFO(name);
        const GenerationOptions o = generation_options_from_json(R"({"rank":")" + name + R"("})");
        CHECK(std::string(to_string(o.rank)) == name);
        CHECK(as_json(o)["rank"] == name);  // written as the same string
    }
    CHECK(as_json(GenerationOptions{})["rank"] == "none");
    // An unknown name: the table's one wording, in the settings' context.
    CHECK_THROWS_WITH(generation_options_from_json(R"({"rank":"length"})"),
                      "generation settings: unknown rank 'length' (expected auto, similarity, back_score, fluency or none)");
    CHECK_THROWS_WITH(generation_options_from_json(R"({"rank":"Fluency"})"),
                      "generation settings: unknown rank 'Fluency' (expected auto, similarity, back_score, fluency or none)");
    // --help lists the names from the table; the other fields' help is their own line, its default filled in.
    const GenerationField* rank = find_generation_field("rank");
    REQUIRE(rank);
    CHECK(field_names(*rank) == enum_names<RankBy>());
    CHECK(field_help(*rank).rfind("one of auto, similarity, back_score, fluency or none: ", 0) == 0);
    const GenerationField* top_k = find_generation_field("top_k");
    REQUIRE(top_k);
    CHECK(field_names(*top_k).empty());
    CHECK(field_help(*top_k) == "sample from the K most likely tokens only (default 0 = off, unlike transformers' 50)");
    CHECK(field_of(&GenerationOptions::rank) == rank);
}

TEST_CASE("field table: named and live merges take exactly the fields they should", "[options][fields]") {
    const GenerationOptions base, changed = all_changed();
    const GenerationOptions named = with_named_fields(base, changed, {"top_k", "rank"});
    CHECK(named.top_k == changed.top_k);
    CHECK(named.rank == changed.rank);
    CHECK(named.num_beams == base.num_beams);
    CHECK_THROWS_WITH(with_named_fields(base, changed, {"future_knob"}), "unknown generation setting 'future_knob'");

    const nlohmann::json before = as_json(base), step = as_json(merge_step_settings(base, changed));
    const nlohmann::json next = as_json(with_live_fields(base, changed, Live::NextRequest)), all = as_json(changed);
    for (const auto& f : generation_fields()) {
        INFO(f.json);
        const bool at_step = f.live == Live::EveryStep, at_next = f.live != Live::Never;
        if (std::string(f.json) != "min_new_tokens") CHECK(step[f.json] == (at_step ? all[f.json] : before[f.json]));
        CHECK(next[f.json] == (at_next ? all[f.json] : before[f.json]));
    }
    // min_new_tokens follows, capped by the running request's own length.
    GenerationOptions live;
    live.min_new_tokens = 500;
    CHECK(merge_step_settings(base, live).min_new_tokens == base.max_new_tokens);
}

TEST_CASE("field table: range messages name the field and its range", "[options][fields]") {
    GenerationOptions o;
    CHECK(field_range_error(o).empty());
    o.top_p = 1.5f;
    CHECK(field_range_error(o) == "top_p must be in (0, 1] (got 1.5)");
    o = {};
    o.num_beams = 0;
    CHECK(field_range_error(o) == "num_beams must be >= 1 (got 0)");
    o = {};
    o.length_penalty = std::numeric_limits<float>::infinity();
    CHECK(field_range_error(o) == "length_penalty must be a finite number (got inf)");
    // Every bounded number: just past its bound is refused, naming the field.
    for (const auto& f : generation_fields()) {
        if (!std::isfinite(f.range.min)) continue;
        GenerationOptions bad;
        std::visit(
            [&](auto member) {
                using T = std::decay_t<decltype(bad.*member)>;
                if constexpr (std::is_same_v<T, std::optional<double>>) bad.*member = f.range.min - 0.5;
                else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
                    bad.*member = static_cast<T>(f.range.min - 1);
            },
            f.member);
        INFO(f.json);
        CHECK(field_range_error(bad).rfind(std::string(f.json) + " must be ", 0) == 0);
    }
}

TEST_CASE("field table: list fields take transformers' JSON forms and their bare forms", "[options][fields]") {
    auto field = [](const char* name) { return *find_generation_field(name); };
    GenerationOptions o;
    set_field_from_text(field("suppress_tokens"), "[12, 7]", &o);
    CHECK(o.suppress_tokens == TokenIds{12, 7});
    set_field_from_text(field("forced_eos_token_id"), "1", &o);  // transformers: an id or a list
    CHECK(o.forced_eos_token_id == TokenIds{1});
    set_field_from_text(field("stop_strings"), ".", &o);  // one plain string
    CHECK(o.stop_strings == std::vector<std::string>{"."});
    set_field_from_text(field("stop_strings"), "[\"!\", \"\\n\"]", &o);
    CHECK(o.stop_strings == std::vector<std::string>{"!", "\n"});
    set_field_from_text(field("sequence_bias"), "[[[12, 7], -2.0], [[9], 1.5]]", &o);
    REQUIRE(o.sequence_bias.size() == 2);
    CHECK(o.sequence_bias[0].ids == std::vector<int>{12, 7});
    CHECK(o.sequence_bias[1].bias == 1.5f);
    set_field_from_text(field("exponential_decay_length_penalty"), "[8, 1.2]", &o);
    REQUIRE(o.exponential_decay_length_penalty);
    CHECK(o.exponential_decay_length_penalty->start_index == 8);
    set_field_from_text(field("force_words_ids"), "[[12, 7], [[9], [4, 5]]]", &o);
    REQUIRE(o.force_words_ids.size() == 2);
    CHECK_FALSE(o.force_words_ids[0].disjunctive);
    CHECK(o.force_words_ids[1].disjunctive);
    CHECK(o.force_words_ids[1].alternatives == TokenIdLists{{9}, {4, 5}});
    // Written back in the same forms, so a settings JSON reads back equal.
    CHECK(field_json_text(field("force_words_ids"), o) == "[[12,7],[[9],[4,5]]]");
    CHECK(field_json_text(field("sequence_bias"), o) == "[[[12,7],-2.0],[[9],1.5]]");
    CHECK(generation_options_from_json(generation_options_to_json(o)).force_words_ids == o.force_words_ids);
    set_field_from_text(field("exponential_decay_length_penalty"), "null", &o);
    CHECK_FALSE(o.exponential_decay_length_penalty);
    set_field_from_text(field("suppress_tokens"), "", &o);
    CHECK(o.suppress_tokens.empty());
    // Refusals name what was typed and keep the value.
    o.suppress_tokens = {3};
    auto refusal = [&](const char* name, const std::string& text) {
        try {
            set_field_from_text(field(name), text, &o, std::string("--") + name);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refusal("suppress_tokens", "[-1]").find("'--suppress_tokens' must be a list of token ids") != std::string::npos);
    CHECK(o.suppress_tokens == TokenIds{3});
    CHECK(refusal("suppress_tokens", "[16397105843297379214]").find("must be a list of token ids") !=
          std::string::npos);  // > 2^63
    CHECK(refusal("bad_words_ids", "[[16397105843297379214, 2]]").find("non-empty lists of token ids") != std::string::npos);
    CHECK(refusal("sequence_bias", "[[[1], \"x\"]]").find("[token ids, bias] pairs") != std::string::npos);
    CHECK(refusal("exponential_decay_length_penalty", "[-1, 2]").find("[start_index, decay_factor]") != std::string::npos);
    CHECK(refusal("force_words_ids", "[[]]").find("a list of constraints") != std::string::npos);
    CHECK(refusal("stop_strings", "[\"\"]").find("non-empty strings") != std::string::npos);
    CHECK(refusal("max_time", "0").find("max_time must be > 0") != std::string::npos);
    CHECK(refusal("forced_bos_token_id", "-2").find(">= 0, or -1 for none") != std::string::npos);
}
