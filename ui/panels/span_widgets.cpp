#include "panels/span_widgets.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include "widgets.h"

namespace t5s::ui {

void draw_protect_settings(Controller& ctl) {
    auto& ws = ctl.state().ws;
    ImGui::TextDisabled("protect (kept exactly in every candidate)");
    for (const auto& name : span_detector_names()) {
        bool on = protects(ws.options.protect, name);
        ImGui::SameLine();
        if (ImGui::Checkbox(name.c_str(), &on)) ctl.workspace().set_detector(name, on);
    }
    help_marker(
        "placeholders: {name}, {{x}}, %s, <tag>, [ID-4411]; numbers with their units; URLs; e-mail addresses.\n"
        "Each protected span is replaced by a sentinel the model must emit exactly once, and put back in every "
        "candidate; a candidate that still lost one is dropped (lost_span).");
    const float w = ImGui::GetContentRegionAvail().x * 0.5f - 8.0f;
    ImGui::SetNextItemWidth(w * 0.55f);
    if (ImGui::InputTextWithHint("regex", "e.g. [A-Z]{2}-\\d+", &ws.options.protect_regex)) ctl.workspace().protect_changed();
    help_marker(
        "Matches of this regular expression (RE2 syntax: no backreferences or lookaround) are protected too (label \"regex\").");
    ImGui::SameLine(w);
    ImGui::SetNextItemWidth(w * 0.55f);
    ImGui::InputText("mark label", &ws.mark_label);
    help_marker("The label a selection gets when you protect it (Ctrl+P in the source).");
}

void draw_source_spans(Controller& ctl) {
    auto& ws = ctl.state().ws;
    ctl.workspace().sync_spans();
    if (!ws.protect_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "protect: %s", ws.protect_error.c_str());
    if (ws.preview.empty()) return;
    ImGui::TextDisabled("protected in the source: %zu", ws.preview.size());
    size_t remove = ws.marked_spans.size();
    for (size_t i = 0; i < ws.marked_spans.size(); ++i) {
        const Span& m = ws.marked_spans[i];
        const std::string text = ws.source.substr(byte_of_code_point(ws.source, m.start),
                                                  byte_of_code_point(ws.source, m.end) - byte_of_code_point(ws.source, m.start));
        ImGui::PushID(int(i));
        ImGui::SameLine();
        const SpanColour c = span_colour(m.label);
        ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(c.r / 255.f, c.g / 255.f, c.b / 255.f, 0.85f));
        if (ImGui::SmallButton((text + " (" + m.label + ")  x").c_str())) remove = i;
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Marked by you: click to stop protecting it");
        ImGui::PopID();
    }
    if (remove < ws.marked_spans.size()) ctl.workspace().remove_mark(remove);
    draw_marked_text(mark_spans({{DiffOp::Equal, ws.source}}, ws.preview), ws.preview, ImGui::GetContentRegionAvail().x - 12.0f,
                     false);
}

void draw_forced_tag(const CandidateVm& c) {
    if (c.forced_spans <= 0) return;
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.62f, 0.2f, 1), "[!] %s", forced_tag(c.forced_spans).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", forced_tooltip(c.forced_spans).c_str());
}

}  // namespace t5s::ui
