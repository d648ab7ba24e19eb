#pragma once
// Generation settings pasted from a model card or a notebook become the current settings:
// `model.generate(input_ids, num_beams=5, num_beam_groups=5, diversity_penalty=3.0, max_length=128)`,
// a bare keyword list (`num_beams=5, do_sample=False`), `GenerationConfig(...)`, or a JSON object
// (a generation_config.json, a request body). Python literals are read, never evaluated.
//
// Keys map by JSON name through the field table (t5s/generation_fields.h); transformers' spellings
// as the CLI's aliases take them (max_length counts the decoder start token: max_new_tokens =
// max_length - 1; min_length likewise). Only the keys named change; sampling is implied as every
// front end implies it (imply_sampling), and num_beams > 1 without do_sample is beam search, as
// transformers' default do_sample=False makes it. Every key not applied is listed with why. Torch-free.
#include <cstddef>
#include <string>
#include <vector>

#include "t5s/generation_options.h"

namespace t5s {

inline constexpr size_t kMaxPastedSettingsBytes = 64 * 1024;  // longer text is refused before it is read

// One key that changed a setting.
struct AppliedSetting {
    std::string key;    // as pasted ("max_length"), or the setting an implication changed ("do_sample")
    std::string field;  // the setting's JSON name ("max_new_tokens")
    std::string value;  // the setting's new value as JSON text ("127")
    std::string note;   // how it was derived, "" when taken as given ("max_length 128 counts the decoder start token")
};

enum class NotAppliedKind {
    NotASetting,  // the model's inputs (input_ids, attention_mask, **inputs, positional arguments)
    NoEffect,     // changes no output (transformers' bookkeeping, a value that turns a setting off)
    NotAValue,    // a variable or an expression: only literals are read
    Unsupported,  // a transformers setting or generate() argument T5 Studio does not apply
    Unknown,      // not a generation setting
    Refused,      // a setting whose value is of the wrong type or outside its range
    Overridden,   // given twice, or max_length beside max_new_tokens: the other one counts
};

struct NotAppliedSetting {
    std::string key;  // as pasted ("temperature", "**inputs", "input_ids")
    NotAppliedKind kind = NotAppliedKind::Unknown;
    std::string why;  // one line for people
};

struct PastedSettings {
    std::string form;           // what was read: "generate(...)", "a keyword list", "a JSON object", ...
    GenerationOptions options;  // the current settings with the applied keys changed
    std::vector<AppliedSetting> applied;
    std::vector<NotAppliedSetting> not_applied;
};

// Throws t5s::Error(InvalidArgument) "pasted settings: ..." when the text is longer than
// kMaxPastedSettingsBytes, not UTF-8, malformed (with its line and column) or names no setting;
// a key that cannot be applied is listed in not_applied, never thrown.
PastedSettings apply_pasted_settings(const std::string& text, const GenerationOptions& current);

// "applied: num_beams=5, max_new_tokens=127 (from max_length 128); not applied: input_ids (...)"
// as lines for a log.
std::vector<std::string> pasted_settings_lines(const PastedSettings& pasted);

}  // namespace t5s
