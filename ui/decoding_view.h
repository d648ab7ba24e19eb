#pragma once
// The workspace's "Advanced decoding" section and "Paste settings" box, without ImGui: which
// generation fields the section shows and with what control (all from the field table,
// t5s/generation_fields.h, so a new field appears by itself), and the view-model of the text
// boxes and of the paste box.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5s/generation_fields.h"
#include "t5s/pasted_settings.h"

namespace t5s::ui {

enum class DecodingControl {
    Slider,          // a number with the table's slider range
    Number,          // a number without one: an input box
    OptionalNumber,  // a number that may be off (none): a checkbox and an input box
    Switch,          // a checkbox
    Choice,          // an enum: a combo of its names
    Text,            // a string: a text box
    List,            // a list field: one line of JSON, checked as typed
};

struct DecodingRow {
    const GenerationField* field = nullptr;
    DecodingControl control = DecodingControl::Text;
};

// Whether the workspace panel's own controls (sample / distinct / no copy, the sliders, seed, the
// task prefix box, the protect settings, the quality thresholds, the sort) already show the field.
bool shown_in_workspace_settings(const GenerationField& field);
// Every other field of the table, in its order, with its control.
std::vector<DecodingRow> advanced_decoding_rows();

// What the Live column means for a change made while a generation runs: "live" (the next token),
// "next request" (the next rows of a batch), "" (the next generation).
const char* live_label(Live live);
std::string live_tooltip(Live live);

// One text box of the section (a list field, or a number typed in): what the user typed, the
// value it was last synchronised with (field_json_text), and the message while it is not valid.
struct FieldTextVm {
    std::string text;
    std::string synced;
    std::string error;  // "" = the text is the setting's value
};

struct PasteSettingsVm {
    bool open = false;                     // the box is shown
    std::string text;                      // what was pasted
    std::string error;                     // the text could not be read at all (nothing applied)
    std::optional<PastedSettings> result;  // the last Apply: what was applied and what not
    std::string conflict;                  // the settings now cannot generate together (validate's message)
};

struct DecodingVm {
    bool open_advanced = false;                     // one-shot: expand the section (the test driver asks)
    std::map<std::string, FieldTextVm> field_text;  // by JSON name
    PasteSettingsVm paste;
};

}  // namespace t5s::ui
