#pragma once
// Reads the arguments of generation settings as people copy them from model cards and notebooks:
// `outputs = model.generate(input_ids, num_beams=5, max_length=128)`, `GenerationConfig(...)`, a bare
// keyword list `num_beams=5, do_sample=False`, or a JSON object (a generation_config.json). Python
// literals become JSON values (True/False/None, ints, floats like 1e-3, '…' and "…" strings, lists,
// tuples, dicts; a dict with non-string keys, such as sequence_bias={(12, 7): -2.0}, becomes a
// list of [key, value] pairs). Nothing is evaluated: a variable, a call or any other expression is
// kept as its text, without a value. Torch-free; used by pasted_settings.cpp only.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace t5s::pasted {

struct PastedArgument {
    enum class Kind {
        Keyword,     // name=value (or a JSON object's "name": value)
        Positional,  // a value with no name (generate()'s input_ids)
        Unpacked,    // **inputs or *args: what they hold is not in the text
    };
    Kind kind = Kind::Keyword;
    std::string key;                      // a keyword's name ("" for the other kinds)
    std::optional<nlohmann::json> value;  // a literal's value; none for an expression (a variable, a call)
    std::string text;                     // the value as pasted (shortened to 60 bytes)
};

struct PastedCall {
    std::string form;  // what was read, for people: "generate(...)", "GenerationConfig(...)", "a keyword list", "a JSON object"
    std::vector<PastedArgument> arguments;
};

inline constexpr int kMaxPastedNesting = 32;  // brackets inside brackets, at most

// Throws t5s::Error(InvalidArgument) "pasted settings: <problem> (line L, column C)" on text that is
// none of the forms (an unterminated string, unbalanced brackets, nesting deeper than
// kMaxPastedNesting, a missing comma) or that names no setting at all. Never evaluates anything.
PastedCall read_pasted_call(std::string_view text);

}  // namespace t5s::pasted
