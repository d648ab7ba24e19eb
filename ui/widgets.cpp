#include "widgets.h"

#include <cstdio>

#include <imgui.h>

#include "line_chart.h"

namespace t5s::ui {

void place_window(const PanelContext& ctx, PanelRect r) {
    const float h = ctx.height - ctx.menu_height;
    const ImGuiCond cond = ctx.reset_layout ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
    ImGui::SetNextWindowPos(ImVec2(r.x * ctx.width, ctx.menu_height + r.y * h), cond);
    ImGui::SetNextWindowSize(ImVec2(r.w * ctx.width, r.h * h), cond);
}

bool names_combo(const char* label, int* index, const std::vector<std::string>& names) {
    const bool valid = *index >= 0 && *index < static_cast<int>(names.size());
    bool changed = false;
    if (ImGui::BeginCombo(label, valid ? names[static_cast<size_t>(*index)].c_str() : "")) {
        for (int i = 0; i < static_cast<int>(names.size()); ++i) {
            if (ImGui::Selectable(names[static_cast<size_t>(i)].c_str(), i == *index) && i != *index) *index = i, changed = true;
        }
        ImGui::EndCombo();
    }
    return changed;
}

bool option_slider(const char* label, GenerationOptions& o, float GenerationOptions::*member, const char* format) {
    return ImGui::SliderFloat(label, &(o.*member), slider_min(member), slider_max(member), format);
}

bool option_slider(const char* label, GenerationOptions& o, int GenerationOptions::*member, const char* format) {
    return ImGui::SliderInt(label, &(o.*member), static_cast<int>(slider_min(member)), static_cast<int>(slider_max(member)), format);
}

void action_tooltip(const Keymap& keys, Action action) {
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", keys.tooltip(action).c_str());
}

bool action_button(Controller& ctl, const char* label, Action action, bool enabled) {
    const std::string text = std::string(label) + " [" + ctl.keymap().label(action) + "]";
    if (!enabled) ImGui::BeginDisabled();
    const bool clicked = ImGui::Button(text.c_str());
    if (!enabled) ImGui::EndDisabled();
    action_tooltip(ctl.keymap(), action);
    if (clicked) ctl.perform(action);
    return clicked;
}

void help_marker(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

void draw_diff(const std::vector<DiffSegment>& diff, float wrap_width, bool show_deleted) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    float x = 0, y = 0;
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    for (const auto& seg : diff) {
        if (seg.op == DiffOp::Delete && !show_deleted) continue;
        for (auto cp : split_code_points(seg.text)) {
            if (cp == "\n") {
                x = 0;
                y += line_h;
                continue;
            }
            const float w = font->CalcTextSizeA(size, 1e9f, 0.0f, cp.data(), cp.data() + cp.size()).x;
            if (x + w > wrap_width && x > 0) {
                x = 0;
                y += line_h;
            }
            const ImVec2 p(origin.x + x, origin.y + y);
            ImU32 col = text_col;
            if (seg.op == DiffOp::Insert) {
                dl->AddRectFilled(p, ImVec2(p.x + w, p.y + size + 1), IM_COL32(40, 140, 60, 200));
                col = IM_COL32(255, 255, 255, 255);
            } else if (seg.op == DiffOp::Delete) {
                col = IM_COL32(230, 110, 110, 255);
            }
            dl->AddText(font, size, p, col, cp.data(), cp.data() + cp.size());
            if (seg.op == DiffOp::Delete)
                dl->AddLine(ImVec2(p.x, p.y + size * 0.55f), ImVec2(p.x + w, p.y + size * 0.55f), col, 1.5f);
            x += w;
        }
    }
    ImGui::Dummy(ImVec2(wrap_width, y + line_h));
}

std::string human_bytes(double bytes) { return format_value(bytes, Unit::Bytes); }

std::string human_count(double n) {
    char buf[32];
    if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.2f B", n / 1e9);
    else if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.2f M", n / 1e6);
    else if (n >= 1e3) std::snprintf(buf, sizeof buf, "%.1f K", n / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

}  // namespace t5s::ui
