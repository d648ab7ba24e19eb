#include "panels/decoding_widgets.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "widgets.h"

namespace t5s::ui {

namespace {

const ImVec4 kLiveColour(0.45f, 0.85f, 0.5f, 1.0f);
const ImVec4 kErrorColour(1.0f, 0.45f, 0.4f, 1.0f);
const ImVec4 kNotAppliedColour(1.0f, 0.75f, 0.35f, 1.0f);

std::string number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

// The value an optional number takes when its box is switched on: the middle of its slider range,
// else the least its range allows.
std::string initial_text(const GenerationField& f) {
    if (f.ui_min < f.ui_max) return number_text((double(f.ui_min) + double(f.ui_max)) / 2);
    if (std::isfinite(f.range.min)) return number_text(f.range.min + (f.range.min_open ? 1 : 0));
    return "0";
}

// A number: a slider over the table's range, or an input box checked as typed.
template <class T>
void draw_number(Controller& ctl, const DecodingRow& row, T GenerationOptions::*member) {
    const GenerationField& f = *row.field;
    GenerationOptions& o = ctl.state().ws.options;
    T v = o.*member;
    bool edited = false;
    if constexpr (std::is_same_v<T, float>) {
        edited = row.control == DecodingControl::Slider ? ImGui::SliderFloat("##v", &v, f.ui_min, f.ui_max, "%.3g")
                                                        : ImGui::InputFloat("##v", &v, 0, 0, "%g");
    } else if constexpr (std::is_same_v<T, int>) {
        edited = row.control == DecodingControl::Slider ? ImGui::SliderInt("##v", &v, int(f.ui_min), int(f.ui_max))
                                                        : ImGui::InputInt("##v", &v);
    } else {
        edited = ImGui::InputScalar("##v", ImGuiDataType_S64, &v);
    }
    if (!edited) return;
    if constexpr (std::is_integral_v<T>)
        ctl.workspace().set_field_text(f, std::to_string(v));  // the range check of every front end
    else ctl.workspace().set_field_text(f, number_text(double(v)));
}

void draw_optional_number(Controller& ctl, const DecodingRow& row, std::optional<double> GenerationOptions::*member) {
    const GenerationField& f = *row.field;
    const std::optional<double> value = ctl.state().ws.options.*member;
    bool on = value.has_value();
    if (ImGui::Checkbox("##on", &on)) ctl.workspace().set_field_text(f, on ? initial_text(f) : "null");
    ImGui::SameLine(0, 4);
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (!on) ImGui::BeginDisabled();
    double v = value.value_or(0.0);
    if (ImGui::InputDouble("##v", &v, 0, 0, on ? "%g" : "off")) ctl.workspace().set_field_text(f, number_text(v));
    if (!on) ImGui::EndDisabled();
}

void draw_choice(Controller& ctl, const GenerationField& f) {
    const std::vector<std::string> names = field_names(f);
    const nlohmann::json now = nlohmann::json::parse(field_json_text(f, ctl.state().ws.options), nullptr, false);
    int index = -1;
    for (size_t i = 0; i < names.size(); ++i)
        if (now.is_string() && now.get<std::string>() == names[i]) index = int(i);
    if (names_combo("##v", &index, names)) ctl.workspace().set_field_text(f, names[size_t(index)]);
}

// One line of JSON (a list field), or a string field's text; applied once valid.
void draw_text(Controller& ctl, const DecodingRow& row) {
    const GenerationField& f = *row.field;
    auto& ws = ctl.state().ws;
    if (row.control == DecodingControl::List) {
        std::string text = ws.decoding.field_text[f.json].text;
        if (ImGui::InputTextWithHint("##v", "[] (none)", &text)) ctl.workspace().set_field_text(f, text);
    } else {
        std::string text = ws.options.*std::get<std::string GenerationOptions::*>(f.member);
        if (ImGui::InputText("##v", &text)) ctl.workspace().set_field_text(f, text);
    }
}

void draw_control(Controller& ctl, const DecodingRow& row) {
    const GenerationField& f = *row.field;
    GenerationOptions& o = ctl.state().ws.options;
    ImGui::SetNextItemWidth(-FLT_MIN);
    switch (row.control) {
        case DecodingControl::Switch: {
            bool* v = &(o.*std::get<bool GenerationOptions::*>(f.member));
            if (ImGui::Checkbox("##v", v)) ctl.settings_changed();
            break;
        }
        case DecodingControl::Slider:
        case DecodingControl::Number:
            std::visit(
                [&](auto member) {
                    using T = std::decay_t<decltype(o.*member)>;
                    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t> || std::is_same_v<T, float>)
                        draw_number(ctl, row, member);
                },
                f.member);
            break;
        case DecodingControl::OptionalNumber:
            draw_optional_number(ctl, row, std::get<std::optional<double> GenerationOptions::*>(f.member));
            break;
        case DecodingControl::Choice: draw_choice(ctl, f); break;
        case DecodingControl::Text:
        case DecodingControl::List: draw_text(ctl, row); break;
    }
    const std::string& error = ctl.state().ws.decoding.field_text[f.json].error;
    if (!error.empty()) {  // the setting keeps its value until the text is valid
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(kErrorColour, "%s", error.c_str());
        ImGui::PopTextWrapPos();
    }
}

void draw_row(Controller& ctl, const DecodingRow& row) {
    const GenerationField& f = *row.field;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(f.json);
    if (ImGui::IsItemHovered()) {
        const std::string flag = *f.flag ? std::string("\n(generate --") + f.flag + ")" : std::string();
        ImGui::SetTooltip("%s%s", field_help(f).c_str(), flag.c_str());
    }
    ImGui::TableNextColumn();
    ImGui::PushID(f.json);
    draw_control(ctl, row);
    ImGui::PopID();
    ImGui::TableNextColumn();
    const char* live = live_label(f.live);
    if (*live) ImGui::TextColored(kLiveColour, "%s", live);
    else ImGui::TextDisabled("next run");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", live_tooltip(f.live).c_str());
}

void draw_paste_result(const PasteSettingsVm& paste) {
    ImGui::PushTextWrapPos(0.0f);
    if (!paste.error.empty()) ImGui::TextColored(kErrorColour, "%s", paste.error.c_str());
    if (paste.result) {
        const PastedSettings& p = *paste.result;
        ImGui::TextDisabled("read %s: %zu applied, %zu not applied", p.form.c_str(), p.applied.size(), p.not_applied.size());
        for (const AppliedSetting& a : p.applied) {
            const std::string from = a.key != a.field ? " (from " + a.key + ")" : std::string();
            ImGui::TextColored(kLiveColour, "  %s = %s%s", a.field.c_str(), a.value.c_str(), from.c_str());
            if (!a.note.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", a.note.c_str());
        }
        for (const NotAppliedSetting& n : p.not_applied)
            ImGui::TextColored(kNotAppliedColour, "  not applied: %s - %s", n.key.c_str(), n.why.c_str());
    }
    if (!paste.conflict.empty())
        ImGui::TextColored(kErrorColour, "together these settings cannot generate: %s", paste.conflict.c_str());
    ImGui::PopTextWrapPos();
}

}  // namespace

void draw_advanced_decoding(Controller& ctl) {
    DecodingVm& vm = ctl.state().ws.decoding;
    if (vm.open_advanced) {
        ImGui::SetNextItemOpen(true);
        vm.open_advanced = false;
    }
    if (!ImGui::CollapsingHeader("Advanced decoding")) return;
    ctl.workspace().sync_field_texts();
    ImGui::TextDisabled("transformers' further controls; hover a name for what it does, a mark for when a change applies");
    const float em = ImGui::GetFontSize();
    if (!ImGui::BeginTable("##advanced decoding", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
    ImGui::TableSetupColumn("setting", ImGuiTableColumnFlags_WidthFixed, em * 16);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("applies", ImGuiTableColumnFlags_WidthFixed, em * 6);
    for (const DecodingRow& row : advanced_decoding_rows()) draw_row(ctl, row);
    ImGui::EndTable();
}

void draw_paste_settings(Controller& ctl) {
    PasteSettingsVm& paste = ctl.state().ws.decoding.paste;
    if (ImGui::Button(paste.open ? "Paste settings (close)" : "Paste settings...")) paste.open = !paste.open;
    help_marker(
        "Settings copied from a model card or notebook: model.generate(input_ids, num_beams=5, max_length=128), a keyword list, "
        "GenerationConfig(...) or a JSON object. Only the keys named change; every key not applied is listed with why.");
    if (!paste.open) return;
    ImGui::InputTextMultiline("##pasted", &paste.text, ImVec2(-1, ImGui::GetTextLineHeight() * 4.5f));
    if (ImGui::Button("Apply")) ctl.workspace().paste_settings();
    ImGui::SameLine();
    if (ImGui::Button("From clipboard")) {
        if (const char* clip = ImGui::GetClipboardText()) paste.text = clip;
    }
    draw_paste_result(paste);
}

}  // namespace t5s::ui
