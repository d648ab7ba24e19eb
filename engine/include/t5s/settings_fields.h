#pragma once
// A settings struct declared once: one row per field (JSON name, CLI flag, help, range, the app's
// widget range) from which its JSON, its flags and --help, and its range messages are derived.
// Every settings table is of this one type: the generation options (t5s/generation_fields.h), the
// training options and the learning loop's options (t5s/training_fields.h) and `serve`'s settings
// (app/serve/serve_config.h). A column one table needs and the others do not (when a running
// request takes a change, a transformers' spelling of the flag) has a default that means "none".
// Torch-free.
//
// A row binds a member pointer (a std::variant of the struct's member types); a member of a struct
// nested in the settings (TrainingOptions::data) is reached through settings_part<C>(S&).
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace t5s {

// When a running request (or job) takes a change made while it runs (a hot swap).
enum class Live {
    Never,        // the request's shape, fixed when it starts
    NextRequest,  // from the job's next request (the next rows of a batch)
    EveryStep,    // at the next decoding step (filters and ranking: when they apply, after decoding)
};

// What validation accepts of one number (every float must also be finite).
struct FieldRange {
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();
    bool min_open = false, max_open = false;
    const char* words = nullptr;  // the message's own wording ("a finite log-probability <= 0"), else derived
};

// How a row's CLI flag is declared and read.
enum class FlagUse {
    Table,    // declared from the row, read into the field by the table's parser
    Model,    // as Table, and the value names a model: a folder or ORG/NAME[@REV] from the HF cache
    Runtime,  // declared and read by the command's runtime group (--device, --threads: one declaration)
    Custom,   // declared from the row, read by the command itself (a file to read, a list to split)
};

template <class Member>
struct SettingsField {
    const char* json;  // the name in the JSON (a contract); also the name of a flagless field in messages
    Member member;
    const char* flag;        // CLI flag without "--" ("" = none; a contract)
    const char* value_name;  // --help placeholder ("N", "X"); "" = a switch, which sets `switch_value`
    const char* help;        // one --help line (a contract); the generation table's is also the app's tooltip
    FieldRange range{};      // what validation accepts of a number (every float must also be finite)
    // A value outside `range` that means "not given" (lr -1: the optimizer's default; steps 0: from
    // --epochs). Validation accepts it; a flag never gives it. NaN = none.
    double unset = std::numeric_limits<double>::quiet_NaN();
    FlagUse use = FlagUse::Table;
    bool flag_range = false;       // the flag itself refuses values outside `range` (a usage error, exit 2)
    bool switch_value = true;      // what a switch sets (--no-group-by-length sets false)
    float ui_min = 0, ui_max = 0;  // the app's widget range (both 0: none)
    bool secret = false;           // never written to JSON (an API key)
    // The generation table's columns (the other tables keep these defaults):
    Live live = Live::Never;     // when a running request takes a change (with_live_fields)
    const char* flag_word = "";  // a word the flag also takes, handled by the command (--batch-size auto)
    // transformers' spelling of the flag (generate()'s argument, dashed): --num-beams for --beams.
    // With alias_offset 0 it is another name of the flag; otherwise it counts alias_offset more than
    // the field (max_length counts the decoder start token: --max-length N is --max-new-tokens N-1),
    // a flag of its own that cannot go with the field's.
    const char* alias = "";
    int alias_offset = 0;

    // A row reads as one line of its table: row(...).within(at_least(1)).widget(1, 4096).
    SettingsField within(FieldRange r) const {
        return with([&](SettingsField& f) { f.range = r; });
    }
    SettingsField or_unset(double v) const {
        return with([&](SettingsField& f) { f.unset = v, f.flag_range = true; });
    }
    SettingsField via(FlagUse u) const {
        return with([&](SettingsField& f) { f.use = u; });
    }
    SettingsField checked_at_flag() const {
        return with([&](SettingsField& f) { f.flag_range = true; });
    }
    SettingsField switch_sets(bool v) const {
        return with([&](SettingsField& f) { f.switch_value = v; });
    }
    SettingsField widget(float lo, float hi) const {
        return with([&](SettingsField& f) { f.ui_min = lo, f.ui_max = hi; });
    }
    SettingsField kept_secret() const {
        return with([&](SettingsField& f) { f.secret = true; });
    }
    // The generation table's columns, named as a row reads: .live_from(Live::EveryStep),
    // .also_takes("auto"), .transformers_flag("max-length", 1).
    SettingsField live_from(Live when) const {
        return with([&](SettingsField& f) { f.live = when; });
    }
    SettingsField also_takes(const char* word) const {
        return with([&](SettingsField& f) { f.flag_word = word; });
    }
    SettingsField transformers_flag(const char* flag, int offset = 0) const {
        return with([&](SettingsField& f) { f.alias = flag, f.alias_offset = offset; });
    }

private:
    template <class Edit>
    SettingsField with(Edit edit) const {
        SettingsField f = *this;
        edit(f);
        return f;
    }
};

// Ranges as rows write them.
constexpr FieldRange kAnyValue{};
constexpr FieldRange at_least(double min, const char* words = nullptr) { return {min, FieldRange{}.max, false, false, words}; }
constexpr FieldRange above(double min, const char* words = nullptr) { return {min, FieldRange{}.max, true, false, words}; }
constexpr FieldRange at_most(double max, const char* words = nullptr) { return {FieldRange{}.min, max, false, false, words}; }
constexpr FieldRange from_to(double min, double max) { return {min, max, false, false, nullptr}; }
constexpr FieldRange from_below(double min, double max) { return {min, max, false, true, nullptr}; }  // [min, max)
constexpr FieldRange above_to(double min, double max) { return {min, max, true, false, nullptr}; }    // (min, max]

// How a table's rows begin, the member pointer converted to the table's Member variant:
//   constexpr auto row = settings_row<OptionMember>;
//   row("top_k", &O::top_k, "top-k", "K", "sample from ...").within(at_least(0)).widget(0, 200),
// settings_checked_row's rows also refuse a value outside `range` at the flag (a usage error), as
// every row of serve's table and of the learning loop's does. One maker, so that a table needs no
// row function of its own.
template <class Member>
struct SettingsRowMaker {
    bool checked_at_flag = false;
    SettingsField<Member> operator()(const char* json, Member member, const char* flag, const char* value_name, const char* help,
                                     FieldRange range = kAnyValue) const {
        SettingsField<Member> f{json, member, flag, value_name, help};
        f.range = range;
        f.flag_range = checked_at_flag;
        return f;
    }
};
template <class Member>
constexpr SettingsRowMaker<Member> settings_row{false};
template <class Member>
constexpr SettingsRowMaker<Member> settings_checked_row{true};

// A struct nested in the settings S (TrainingOptions::data), specialised beside the table.
template <class C, class S>
C& settings_part(S& settings);

// The field `member` of `s`, whether it is S's own or a nested struct's.
template <class S, class C, class T>
T& field_ref(S& s, T C::*member) {
    if constexpr (std::is_same_v<S, C>) return s.*member;
    else return settings_part<C>(s).*member;
}
template <class S, class C, class T>
const T& field_ref(const S& s, T C::*member) {
    return field_ref(const_cast<S&>(s), member);
}

// The number's shortest text ("0.05", "1e-08", "120").
std::string settings_number_text(double v);
// "in (0, 1]", ">= 1", "> 0", or the range's own words.
std::string settings_range_words(const FieldRange& range);
// Inside the range (and finite).
bool settings_in_range(const FieldRange& range, double v);
// The one wording of a number outside its range, for the tables and every check written by hand:
// "NAME must be in [1, 4096] (got 0)", "--lr must be > 0 (got -2)". `got` is the value as it was
// written (a flag's text, a JSON value), or a number shown by settings_number_text.
std::string range_message(std::string_view name, const FieldRange& range, std::string_view got);
std::string range_message(std::string_view name, const FieldRange& range, double got);

// The name messages use: "--batch-size" for a field with a flag, else its JSON name.
template <class Row>
std::string settings_field_name(const Row& f) {
    return *f.flag ? std::string("--") + f.flag : std::string(f.json);
}

// "--lr must be > 0, or -1 (got -2)" when the field's number is outside its range; "" otherwise.
template <class Row, class S>
std::string settings_range_error(const Row& f, const S& s) {
    return std::visit(
        [&](auto member) -> std::string {
            const auto& v = field_ref(s, member);
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
                const double d = static_cast<double>(v);
                if (settings_in_range(f.range, d) || (!std::isnan(f.unset) && d == f.unset)) return "";
                if (std::isnan(f.unset)) return range_message(settings_field_name(f), f.range, d);
                // "> 0, or -1": the range, and the value that means "not given"
                const std::string words = settings_range_words(f.range) + ", or " + settings_number_text(f.unset);
                FieldRange or_unset = f.range;
                or_unset.words = words.c_str();
                return range_message(settings_field_name(f), or_unset, d);
            } else {
                return "";
            }
        },
        f.member);
}

// The first field of `s` outside its range, "" when all are inside.
template <class Table, class S>
std::string settings_first_range_error(const Table& fields, const S& s) {
    for (const auto& f : fields) {
        std::string error = settings_range_error(f, s);
        if (!error.empty()) return error;
    }
    return "";
}

// The row with this JSON name, or null.
template <class Table>
auto find_settings_field(const Table& fields, std::string_view json) -> decltype(&*std::begin(fields)) {
    for (const auto& f : fields)
        if (json == f.json) return &f;
    return nullptr;
}

}  // namespace t5s
