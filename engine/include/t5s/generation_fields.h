#pragma once
// One declaration per generation option: a field table (JSON name, `generate` flag, type, range,
// help, whether a running request takes a change; rows of t5s/settings_fields.h, like every
// settings table) from which every front end derives what it does with GenerationOptions — JSON
// read and write (the history's settings_json, HTTP bodies, /v1/settings, the app's
// settings.json), the CLI flags and their --help, the live merges, the range checks of
// validate_generation_options and the app's slider ranges.
//
// Adding an option: its field in GenerationOptions (t5s/generation_options.h) and its row in
// generation_fields() (generation_fields.cpp); then its use. Torch-free.
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "t5s/enum_names.h"
#include "t5s/generation_options.h"
#include "t5s/settings_fields.h"

namespace t5s {

// A field's member. An enum with a name table (t5s/enum_names.h) is a field kind of its own: its
// JSON value and flag take the table's names, --help lists them, an unknown one is refused in the
// table's wording. A new enum-typed option adds its member type here; nothing else changes.
using OptionMember =
    std::variant<int GenerationOptions::*, int64_t GenerationOptions::*, float GenerationOptions::*, bool GenerationOptions::*,
                 std::string GenerationOptions::*, std::optional<double> GenerationOptions::*, RankBy GenerationOptions::*,
                 TokenIdLists GenerationOptions::*, TokenIds GenerationOptions::*, SequenceBias GenerationOptions::*,
                 std::optional<LengthDecay> GenerationOptions::*, std::vector<std::string> GenerationOptions::*,
                 ForcedWords GenerationOptions::*>;

// The fields whose value is a JSON list in transformers' form (token ids, sequence biases, stop
// strings, forced words, the length decay): JSON in every front end, JSON text as a flag's value or
// in the app's text box (field_json_text / set_field_from_text).
template <class T>
inline constexpr bool kListValued = std::is_same_v<T, TokenIdLists> || std::is_same_v<T, TokenIds> ||
                                    std::is_same_v<T, SequenceBias> || std::is_same_v<T, std::optional<LengthDecay>> ||
                                    std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, ForcedWords>;

// A row of the one settings-table type (t5s/settings_fields.h); the generation table is the one
// that fills its live, flag_word and alias columns.
using GenerationField = SettingsField<OptionMember>;

// Every option, in the order of the JSON the history stores.
const std::vector<GenerationField>& generation_fields();
// The field with this JSON name, or null.
const GenerationField* find_generation_field(std::string_view json_name);
// The field bound to this member (its JSON name for messages), or null.
template <class T>
const GenerationField* field_of(T GenerationOptions::*member) {
    for (const auto& f : generation_fields())
        if (const auto* m = std::get_if<T GenerationOptions::*>(&f.member); m && *m == member) return &f;
    return nullptr;
}

// The names an enum-typed field takes, from its enum's table (empty for other fields).
std::vector<std::string> field_names(const GenerationField& field);
// The field's help line; an enum-typed one starts with its names: "one of auto, ... or none: ...".
std::string field_help(const GenerationField& field);

// Whether the field holds a list-valued option (kListValued).
bool is_list_field(const GenerationField& field);
// The field's value as compact JSON text ("[[12, 7]]", "0.5", "\"x\"", "null").
std::string field_json_text(const GenerationField& field, const GenerationOptions& options);
// The field set from text as a user types it: JSON (a list field also takes its bare form: one id for
// an id list, a plain string for stop_strings), a number, true/false, or a string field's text
// itself. Type- and range-checked; InvalidArgument naming `what` (default: the JSON name).
void set_field_from_text(const GenerationField& field, const std::string& text, GenerationOptions* options,
                         const std::string& what = "");

// A list of token-id lists as JSON text ("[[12, 7], [9]]": a --bad-words-ids value); InvalidArgument
// naming `what` unless every list is non-empty and holds token ids (integers from 0 to 2^31 - 1).
TokenIdLists token_id_lists_from_json(const std::string& json_text, const std::string& what);

// Every field by its JSON name (an enum by its name); an empty filter is null.
std::string generation_options_to_json(const GenerationOptions& options);
// Fields absent or null keep their defaults, unknown names are ignored (newer records); a wrong
// type or an out-of-range number is InvalidArgument naming the field, an unknown enum name one in
// the table's wording ("generation settings: unknown rank 'x' (expected auto, ... or none)").
GenerationOptions generation_options_from_json(const std::string& json);

// `into` with the fields named (JSON names) taken from `from`; an unknown name is InvalidArgument.
GenerationOptions with_named_fields(GenerationOptions into, const GenerationOptions& from, const std::vector<std::string>& named);
// `into` with every field that may change at `when` or earlier (EveryStep; NextRequest too) taken from `from`.
GenerationOptions with_live_fields(GenerationOptions into, const GenerationOptions& from, Live when);

// The first field outside its range, as "top_p must be in (0, 1] (got 1.5)"; "" when all are inside.
std::string field_range_error(const GenerationOptions& options);

}  // namespace t5s
