// The settings tables (t5s/settings_fields.h) of train, learn and serve: every row round-trips
// through its JSON and its flag, refuses a value outside its range with a message naming the field,
// and states in its help the default the struct holds (filled in, never written by hand: t5s/help_defaults.h);
// runs the history stored before the tables still read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/settings_flags.h"
#include "serve/serve_config.h"
#include "t5s/error.h"
#include "t5s/help_defaults.h"
#include "t5s/settings_json.h"
#include "t5s/training_fields.h"

using namespace t5s;

namespace {

template <class E>
E next_name(E v) {  // the enum's next printed name
    const int n = static_cast<int>(enum_names<E>().size());
    return enum_at<E>((enum_index(v) + 1) % n);
}

// `f` of `s` moved off its value, to one its type holds and its range (if it checks one) allows.
template <class Row, class S>
void change(const Row& f, S& s) {
    std::visit(
        [&](auto member) {
            auto& v = field_ref(s, member);
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) v = !v;
            else if constexpr (std::is_same_v<T, std::string>) v = v + "x";
            else if constexpr (std::is_same_v<T, std::vector<std::string>>) v = {"a", "b"};
            else if constexpr (std::is_enum_v<T>) v = next_name(v);
            else {
                const double step = std::is_floating_point_v<T> ? 0.25 : 1;  // v + step, else the range's low end + step
                const double moved = static_cast<double>(v) + step;
                v = static_cast<T>(settings_in_range(f.range, moved) ? moved : f.range.min + step);
            }
        },
        f.member);
}

template <class S, class Table>
S all_changed(const Table& fields) {
    S s;
    for (const auto& f : fields) change(f, s);
    return s;
}

// A number just outside the row's range that is not its "unset" value; NaN when the range is open.
template <class Row>
double outside(const Row& f) {
    double v = NAN;
    if (std::isfinite(f.range.min)) v = f.range.min_open ? f.range.min : f.range.min - 1;
    else if (std::isfinite(f.range.max)) v = f.range.max_open ? f.range.max : f.range.max + 1;
    return v == f.unset ? v - 1 : v;
}

template <class Row, class S>
bool set_number(const Row& f, S& s, double v) {
    return std::visit(
        [&](auto member) {
            auto& field = field_ref(s, member);
            using T = std::decay_t<decltype(field)>;
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
                field = static_cast<T>(v);
                return true;
            } else {
                return false;
            }
        },
        f.member);
}

// The "(default N" a help line states, NaN when it states none as a number.
double stated_default(const std::string& help) {
    static const std::regex number(R"(default (-?[0-9][0-9.e+-]*)(?=[ ;:),]|$))");
    std::smatch m;
    if (!std::regex_search(help, m, number)) return NAN;
    return std::stod(m[1]);
}

template <class Row, class S>
double number_of(const Row& f, const S& s) {
    return std::visit(
        [&](auto member) {
            const auto& v = field_ref(s, member);
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) return static_cast<double>(v);
            else return static_cast<double>(NAN);
        },
        f.member);
}

template <class Table, class S>
void check_names_and_defaults(const Table& fields, const S& defaults) {
    std::set<std::string> json_names, flags;
    for (const auto& f : fields) {
        INFO(f.json);
        CHECK(json_names.insert(f.json).second);
        if (*f.flag) CHECK(flags.insert(f.flag).second);
        if (f.use != FlagUse::Runtime) CHECK(std::string(f.help).size() > 10);
        // A number default is filled in from the struct, never written by hand, but where the row's
        // default is "unset" and the help says what that stands for (--lr: the optimizer's own).
        if (std::isnan(f.unset)) CHECK(std::isnan(stated_default(f.help)));
        const std::string help = settings_field_help(f, defaults);  // a misplaced {default} throws
        const double stated = stated_default(help), held = number_of(f, defaults);
        if (!std::isnan(stated) && !std::isnan(held) && std::isnan(f.unset)) CHECK(stated == held);  // its text reads back
        CHECK(help.find("{default") == std::string::npos);
        // The generation table's own columns: settings_flags reads neither a transformers' spelling
        // nor a flag word, and nothing takes these settings live, so a row setting one would be ignored.
        CHECK(f.live == Live::Never);
        CHECK(std::string(f.alias).empty());
        CHECK(f.alias_offset == 0);
        CHECK(std::string(f.flag_word).empty());
    }
}

// Every row's range refused, naming the field, by `first_error`; `base` passes it.
template <class Table, class S, class Check>
void check_ranges(const Table& fields, const S& base, Check first_error) {
    CHECK(first_error(base).empty());
    int checked = 0;
    for (const auto& f : fields) {
        const double bad = outside(f);
        if (std::isnan(bad)) continue;
        S s = base;
        REQUIRE(set_number(f, s, bad));
        const std::string error = first_error(s);
        INFO(f.json << " = " << bad << ": " << error);
        CHECK(error.rfind(settings_field_name(f) + " must be ", 0) == 0);
        ++checked;
        if (!std::isnan(f.unset)) {  // "not given" passes
            REQUIRE(set_number(f, s, f.unset));
            CHECK(first_error(s).empty());
        }
    }
    CHECK(checked > 0);
}

std::string flag_text(double v) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}

// The command line that gives every Table/Model row of `fields` its value in `s`.
template <class Table, class S>
std::vector<std::string> argv_of(const Table& fields, const S& s) {
    std::vector<std::string> argv;
    for (const auto& f : fields) {
        if (!*f.flag || f.use == FlagUse::Runtime || f.use == FlagUse::Custom) continue;
        std::visit(
            [&](auto member) {
                const auto& v = field_ref(s, member);
                using T = std::decay_t<decltype(v)>;
                const std::string flag = std::string("--") + f.flag;
                if constexpr (std::is_same_v<T, bool>) {
                    REQUIRE(v == f.switch_value);  // a switch gives what the default is not
                    argv.push_back(flag);
                } else if constexpr (std::is_same_v<T, std::string>) {
                    argv.insert(argv.end(), {flag, v});
                } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                    for (const auto& e : v) argv.insert(argv.end(), {flag, e});
                } else if constexpr (std::is_enum_v<T>) {
                    argv.insert(argv.end(), {flag, to_string(v)});
                } else if constexpr (std::is_floating_point_v<T>) {
                    argv.insert(argv.end(), {flag, flag_text(v)});
                } else {
                    argv.insert(argv.end(), {flag, std::to_string(v)});
                }
            },
            f.member);
    }
    return argv;
}

// The flags of every Table/Model row parse back to the values they were written from.
template <class Table, class S, class ToJson>
void check_flags_round_trip(const Table& fields, ToJson to_json) {
    S changed = all_changed<S>(fields), expected;
    for (const auto& f : fields)
        if (*f.flag && f.use != FlagUse::Runtime && f.use != FlagUse::Custom) change(f, expected);
    const cli::CommandSpec spec("t", "table", {cli::settings_flags(fields, S{})});
    const cli::Args args(argv_of(fields, changed), spec);
    S parsed;
    cli::apply_settings_flags(args, fields, &parsed);
    CHECK(to_json(parsed) == to_json(expected));
    CHECK(to_json(parsed) != to_json(S{}));
}

// A flag that checks its range refuses a value outside it: a usage error naming the flag.
template <class Table, class S>
void check_flag_ranges(const Table& fields) {
    const cli::CommandSpec spec("t", "table", {cli::settings_flags(fields, S{})});
    for (const auto& f : fields) {
        const double bad = outside(f);
        if (!*f.flag || !f.flag_range || std::isnan(bad) || f.use != FlagUse::Table) continue;
        INFO(f.flag << " " << bad);
        const bool integral = std::visit(
            [](auto m) { return std::is_integral_v<std::decay_t<decltype(field_ref(std::declval<S&>(), m))>>; }, f.member);
        const cli::Args args(
            {std::string("--") + f.flag, integral ? std::to_string(static_cast<long long>(bad)) : flag_text(bad)}, spec);
        S s;
        CHECK_THROWS_WITH(cli::apply_settings_flags(args, fields, &s), Catch::Contains(std::string("--") + f.flag));
    }
}

nlohmann::json training_json(const TrainingOptions& o) { return nlohmann::json::parse(training_options_to_json(o)); }

TrainingOptions valid_training() {
    TrainingOptions o;
    o.model_dir = "m", o.data_file = "d.jsonl", o.out_dir = "out";
    return o;
}

std::string training_error(const TrainingOptions& o) {
    try {
        validate_training_options(o);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

}  // namespace

TEST_CASE("training table: names, help defaults, every field through JSON", "[settings][options][fields][training]") {
    check_names_and_defaults(training_fields(), TrainingOptions{});
    for (const auto& f : training_fields()) CHECK(find_training_field(f.json) == &f);
    CHECK(find_training_field("future_knob") == nullptr);
    const nlohmann::json written = training_json(all_changed<TrainingOptions>(training_fields()));
    CHECK(written.size() == training_fields().size());
    CHECK(training_json(training_options_from_json(written.dump())) == written);
    const nlohmann::json defaults = training_json(TrainingOptions{});
    for (const auto& f : training_fields()) {
        INFO(f.json);
        CHECK(written[f.json] != defaults[f.json]);  // the field itself travelled
    }
    CHECK_THROWS_WITH(training_options_from_json(R"({"batch_size": 1.5})"), Catch::Contains("'batch_size' must be an integer"));
    CHECK_THROWS_WITH(training_options_from_json(R"({"optimizer": "sgd"})"),
                      Catch::Contains("'optimizer' must be adamw or adafactor"));
    CHECK_THROWS_WITH(training_options_from_json(R"({"extra_data_files": "a"})"),
                      Catch::Contains("'extra_data_files' must be a list"));
    CHECK_THROWS_WITH(training_options_from_json("{"), Catch::Contains("training options: not valid JSON"));
}

TEST_CASE("training table: a run recorded before the table still reads", "[settings][options][fields][training]") {
    // What training_options_to_json wrote before the table (every key of its field macro, sorted).
    const std::string old_record =
        R"({"adam_beta1":0.9,"adam_beta2":0.999,"adam_eps":1e-08,"adapter_dir":"","auto_reduce_batch_on_oom":true,"batch_size":4,)"
        R"("data_file":"pairs.jsonl","device":"cpu","dist_timeout_s":120.0,"dropout":-1.0,"epochs":2.5,"eval_every":10,"eval_file":"",)"
        R"("eval_split":0.1,"extra_data_files":["more.csv"],"grad_accum":2,"gradient_checkpointing":true,"group_by_length":false,)"
        R"("init_config":"","keep_last":2,"log_every":1,"log_file":"","lora":true,"lora_alpha":32.0,"lora_base_precision":"bf16",)"
        R"("lora_dropout":0.05,"lora_r":4,"lora_rslora":false,"lora_targets":"q,v","lr":-1.0,"max_eval_pairs":500,"max_grad_norm":1.0,)"
        R"("max_source_len":96,"max_target_len":128,"max_time_s":0.0,"merge_adapter":false,"model_dir":"base","on_bad_row":"fail",)"
        R"("optimizer":"adafactor","out_dir":"run","patience":0,"precision":"bf16","resume":false,"sample_count":3,)"
        R"("sample_max_new_tokens":40,"save_dtype_bf16":false,"save_every":0,"schedule":"cosine","seed":18446744073709551615,)"
        R"("source_field":"src","source_prefix":"paraphrase: ","steps":0,"target_field":"","threads":2,"vocab_size":8000,"warmup_steps":5,)"
        R"("weight_decay":0.01})";
    const TrainingOptions o = training_options_from_json(old_record);
    CHECK(o.model_dir == "base");
    CHECK(o.batch_size == 4);
    CHECK(o.epochs == 2.5);
    CHECK(o.extra_data_files == std::vector<std::string>{"more.csv"});
    CHECK(o.optimizer == OptimizerKind::Adafactor);
    CHECK(o.schedule == ScheduleKind::Cosine);
    CHECK(o.precision == Precision::Bf16);
    CHECK(o.lora_base_precision == Precision::Bf16);
    CHECK(o.device == Device::Cpu);
    CHECK(o.data.on_bad_row == BadRowPolicy::Fail);
    CHECK(o.data.source_field == "src");
    CHECK(o.data.source_prefix == "paraphrase: ");
    CHECK(o.seed == UINT64_MAX);  // --seed -1 as it was stored
    CHECK(!o.group_by_length);
    CHECK(o.lora_alpha == 32.0);
    CHECK(o.max_source_len == 96);
    CHECK(o.warmup_steps == 5);
    // Written again, the record keeps every key it had, with the same values.
    const nlohmann::json before = nlohmann::json::parse(old_record), after = training_json(o);
    for (const auto& [key, value] : before.items()) {
        INFO(key);
        CHECK(after.at(key) == value);
    }
}

TEST_CASE("range messages: one wording for tables, command line and hand-written checks", "[settings][range_message]") {
    CHECK(range_message("num_permutations", from_to(1, 4096), 0) == "num_permutations must be in [1, 4096] (got 0)");
    CHECK(range_message("--near-threshold", above_to(0, 1), "1.5") == "--near-threshold must be in (0, 1] (got 1.5)");
    CHECK(range_message("lora_dropout", from_below(0, 1), 1) == "lora_dropout must be in [0, 1) (got 1)");
    CHECK(range_message("batch_size", at_least(1), 0) == "batch_size must be >= 1 (got 0)");
    CHECK(range_message("'d_model'", above(0), -3) == "'d_model' must be > 0 (got -3)");
    CHECK(range_message("version", at_least(0, ">= 0, where 0 is the base"), -1) ==
          "version must be >= 0, where 0 is the base (got -1)");
    CHECK(range_message("x", kAnyValue, "1e999") == "x must be a finite number (got 1e999)");
    // A table's message is the same function's.
    TrainingOptions o = valid_training();
    o.batch_size = 0;
    CHECK(training_error(o) == range_message("--batch-size", at_least(1), 0));

    // The command line's numbers: the flag as typed, the range, the text given.
    const cli::CommandSpec spec("t", "range messages", {{"limit", "N", "a page"}, {"rows", "N", "rows"}, {"x", "X", "a number"}});
    const auto usage = [&](const std::vector<std::string>& argv, auto read) -> std::string {
        try {
            read(cli::Args(argv, spec));
        } catch (const cli::UsageError& e) {
            return e.what();
        }
        return "";
    };
    const auto limit = [](const cli::Args& a) { (void)a.get_int("limit", 20, 1, 10000); };
    CHECK(usage({"--limit", "0"}, limit) == "--limit must be in [1, 10000] (got 0)");
    CHECK(usage({"--limit", "99999999999999999999"}, limit) == "--limit must be in [1, 10000] (got 99999999999999999999)");
    CHECK(usage({"--limit", "20"}, limit).empty());
    // An int64 end is no bound the words show rounded; past int64 the exact integers are named.
    const auto restore = [](const cli::Args& a) { (void)a.get_int64("rows", 0, 0, INT64_MAX); };
    CHECK(usage({"--rows", "-1"}, restore) == "--rows must be >= 0 (got -1)");
    CHECK(usage({"--rows", "99999999999999999999"}, restore) ==
          "--rows must be an integer from 0 to 9223372036854775807 (got 99999999999999999999)");
    const auto number = [](const cli::Args& a) { (void)a.get_double("x", 1); };
    CHECK(usage({"--x", "1e999"}, number) == "--x must be a finite number (got 1e999)");
}

TEST_CASE("training table: every range refused with the field's name; the cross-field rules stay",
          "[settings][options][fields][training]") {
    check_ranges(training_fields(), valid_training(), training_error);
    TrainingOptions o = valid_training();
    o.batch_size = 0;
    CHECK(training_error(o) == "--batch-size must be >= 1 (got 0)");
    o = valid_training(), o.lr = -2;
    CHECK(training_error(o) == "--lr must be > 0, or -1 (got -2)");
    o = valid_training(), o.adam_eps = 0;
    CHECK(training_error(o) == "adam_eps must be > 0 (got 0)");  // no flag: its JSON name
    o = valid_training(), o.model_dir.clear();
    CHECK_THAT(training_error(o), Catch::Contains("exactly one of --model"));
    o = valid_training(), o.merge_adapter = true;
    CHECK(training_error(o) == "--merge needs --lora or --adapter");
}

TEST_CASE("training table: train's flags parse back to every field they declare", "[settings][options][fields][training][cli]") {
    check_flags_round_trip<std::vector<TrainingField>, TrainingOptions>(training_fields(), training_json);
    check_flag_ranges<std::vector<TrainingField>, TrainingOptions>(training_fields());
    const cli::CommandSpec spec(
        "train", "t",
        {cli::settings_flags(training_fields(), TrainingOptions{}, {{"device", "D", "runtime"}, {"threads", "N", "runtime"}})});
    std::vector<std::string> names;
    for (const auto& f : spec.flags) names.push_back(f.name);
    const auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
    CHECK(at("device") == at("seed") + 1);  // the runtime group stands where the table's device row is
    CHECK(at("threads") == at("device") + 1);
    CHECK(at("eval-every") == at("threads") + 1);
    TrainingOptions o;
    CHECK_THROWS_WITH(cli::apply_settings_flags(cli::Args({"--optimizer", "sgd"}, spec), training_fields(), &o),
                      Catch::Contains("unknown optimizer 'sgd'"));  // bad input (exit 1), as it always was
    CHECK_THROWS_AS(cli::apply_settings_flags(cli::Args({"--lora-base-precision", "int4"}, spec), training_fields(), &o),
                    cli::UsageError);
    cli::apply_settings_flags(cli::Args({"--seed", "-1"}, spec), training_fields(), &o);
    CHECK(o.seed == UINT64_MAX);
}

TEST_CASE("learning table: learn's flags, ranges and help defaults", "[settings][options][fields][learning][cli]") {
    check_names_and_defaults(learning_fields(), LearningOptions{});
    const auto learning_json = [](const LearningOptions& o) { return settings_to_json(learning_fields(), o); };
    check_flags_round_trip<std::vector<LearningField>, LearningOptions>(learning_fields(), learning_json);
    check_flag_ranges<std::vector<LearningField>, LearningOptions>(learning_fields());
    check_ranges(learning_fields(), LearningOptions{}, learning_options_error);
    LearningOptions o;
    o.holdout_every = 1;
    CHECK(learning_options_error(o) == "--holdout-every must be in [2, 1000000] (got 1)");
}

TEST_CASE("serve table: flags, ranges, help defaults and the reported settings", "[settings][options][fields][serve][cli]") {
    check_names_and_defaults(serve::serve_fields(), serve::ServeConfig{});
    check_flags_round_trip<std::vector<serve::ServeField>, serve::ServeConfig>(serve::serve_fields(),
                                                                               serve::serve_config_to_json);
    check_flag_ranges<std::vector<serve::ServeField>, serve::ServeConfig>(serve::serve_fields());
    check_ranges(serve::serve_fields(), serve::ServeConfig{}, serve::serve_config_error);
    serve::ServeConfig c;
    c.api_key = "k", c.basic_auth = "u:p", c.max_batch = 7;
    const nlohmann::json reported = serve::serve_config_to_json(c);
    CHECK(reported.at("max_batch") == 7);
    CHECK(reported.at("host") == "127.0.0.1");
    CHECK(!reported.contains("api_key"));  // secrets are never reported
    CHECK(!reported.contains("basic_auth"));
    CHECK(reported.size() == serve::serve_fields().size() - 2);
    for (const auto& f : cli::settings_flags(serve::serve_fields(), serve::ServeConfig{}))
        if (f.name == "devices") CHECK(f.kind == cli::FlagKind::Single);  // one comma list (cuda:0,cuda:1), read by serve itself
}

TEST_CASE("help defaults: one text per default, read back as the same value", "[settings][options][fields][help]") {
    CHECK(default_number_text(0.05) == "0.05");
    CHECK(default_number_text(0.05f, /*single=*/true) == "0.05");  // a float's shortest text, not the double's
    CHECK(default_number_text(0.999) == "0.999");
    CHECK(default_number_text(1e-3) == "1e-3");
    CHECK(default_number_text(5e-4) == "5e-4");
    CHECK(default_number_text(1.5e-8) == "1.5e-8");
    CHECK(default_number_text(120) == "120");
    CHECK(default_number_text(2.5) == "2.5");
    CHECK(default_number_text(-0.25) == "-0.25");
    CHECK(default_number_text(0) == "0");
    CHECK(help_with_default("x (default {default}; 0 = off)", 64, "f") == "x (default 64; 0 = off)");
    CHECK(help_with_default("x (default {default})", uint64_t{42}, "f") == "x (default 42)");
    CHECK(help_with_default("x (default {default:point})", 1.0f, "f") == "x (default 1.0)");
    CHECK(help_with_default("x (default {default:point})", 0.05, "f") == "x (default 0.05)");
    CHECK(help_with_default("x (default {default})", 1.0, "f") == "x (default 1)");
    CHECK(help_with_default("x (default {default})", std::string("q,v"), "f") == "x (default q,v)");
    CHECK(help_with_default("x (default {default})", Device::Cpu, "f") == "x (default cpu)");
    CHECK(help_with_default("no default stated", true, "f") == "no default stated");
    // A placeholder the field's default cannot fill is the table's mistake, named.
    CHECK_THROWS_WITH(help_with_default("x (default {default})", true, "flag_x"), Catch::Contains("field flag_x"));
    CHECK_THROWS_AS(help_with_default("x (default {default:point})", 8, "f"), std::logic_error);
    CHECK_THROWS_AS(help_with_default("x (default {default})", std::vector<std::string>{}, "f"), std::logic_error);
}

TEST_CASE("help defaults: a changed struct default changes the help line", "[settings][options][fields][help]") {
    const TrainingField* seed = find_training_field("seed");
    REQUIRE(seed);
    TrainingOptions o;
    o.seed = 7;
    CHECK(settings_field_help(*seed, o) == "seed of data order, initialisation and dropout (default 7)");
    const auto flags = cli::settings_flags(training_fields(), TrainingOptions{});
    const auto it = std::find_if(flags.begin(), flags.end(), [](const cli::Flag& f) { return f.name == "seed"; });
    REQUIRE(it != flags.end());
    CHECK(it->help == settings_field_help(*seed, TrainingOptions{}));
}
