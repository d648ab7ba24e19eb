#include "widgets.h"

#include <cstdio>

#include <imgui.h>

#include "line_chart.h"
#include "t5s/text_offsets.h"

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
    return ImGui::SliderInt(label, &(o.*member), static_cast<int>(slider_min(member)), static_cast<int>(slider_max(member)),
                            format);
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
    draw_marked_text(mark_spans(diff, {}), {}, wrap_width, show_deleted);
}

namespace {

// Where the text drawing is on the line and the window.
struct TextCursor {
    ImVec2 origin;
    float x = 0, y = 0, wrap = 0, line_h = 0;
    ImVec2 at() const { return ImVec2(origin.x + x, origin.y + y); }
    void fit(float w) {  // wraps before a piece of width w that does not fit
        if (x + w > wrap && x > 0) x = 0, y += line_h;
    }
};

ImU32 colour_of(const std::string& label, int alpha) {
    const SpanColour c = span_colour(label);
    return IM_COL32(c.r, c.g, c.b, alpha);
}

// The span's label as a small rounded tag after it.
void draw_span_tag(TextCursor& cur, const Span& span) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize() * 0.72f;
    const char* label = span.label.empty() ? "span" : span.label.c_str();
    const float w = font->CalcTextSizeA(size, 1e9f, 0.0f, label).x + 6.0f;
    cur.fit(w + 3.0f);
    const ImVec2 p(cur.at().x + 2.0f, cur.at().y + ImGui::GetFontSize() - size - 1.0f);
    dl->AddRectFilled(ImVec2(p.x, p.y - 1.0f), ImVec2(p.x + w, p.y + size + 1.0f), colour_of(span.label, 255), 3.0f);
    dl->AddText(font, size, ImVec2(p.x + 3.0f, p.y), IM_COL32(255, 255, 255, 255), label);
    cur.x += w + 4.0f;
}

}  // namespace

void draw_marked_text(const std::vector<MarkedRun>& runs, const std::vector<Span>& spans, float wrap_width, bool show_deleted) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    TextCursor cur{ImGui::GetCursorScreenPos(), 0, 0, wrap_width, ImGui::GetTextLineHeightWithSpacing()};
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const Span* hovered = nullptr;
    for (const auto& run : runs) {
        if (run.op == DiffOp::Delete && !show_deleted) continue;
        const Span* span = run.span >= 0 && size_t(run.span) < spans.size() ? &spans[size_t(run.span)] : nullptr;
        for (auto cp : split_code_points(run.text)) {
            if (cp == "\n") {
                cur.x = 0;
                cur.y += cur.line_h;
                continue;
            }
            const float w = font->CalcTextSizeA(size, 1e9f, 0.0f, cp.data(), cp.data() + cp.size()).x;
            cur.fit(w);
            const ImVec2 p = cur.at();
            ImU32 col = text_col;
            if (span) {
                dl->AddRectFilled(p, ImVec2(p.x + w, p.y + size + 1), colour_of(span->label, 210));
                if (run.op == DiffOp::Insert)
                    dl->AddLine(ImVec2(p.x, p.y + size + 1), ImVec2(p.x + w, p.y + size + 1), IM_COL32(60, 200, 90, 255), 2.0f);
                col = IM_COL32(255, 255, 255, 255);
                if (ImGui::IsMouseHoveringRect(p, ImVec2(p.x + w, p.y + size + 1))) hovered = span;
            } else if (run.op == DiffOp::Insert) {
                dl->AddRectFilled(p, ImVec2(p.x + w, p.y + size + 1), IM_COL32(40, 140, 60, 200));
                col = IM_COL32(255, 255, 255, 255);
            } else if (run.op == DiffOp::Delete) {
                col = IM_COL32(230, 110, 110, 255);
            }
            dl->AddText(font, size, p, col, cp.data(), cp.data() + cp.size());
            if (run.op == DiffOp::Delete)
                dl->AddLine(ImVec2(p.x, p.y + size * 0.55f), ImVec2(p.x + w, p.y + size * 0.55f), col, 1.5f);
            cur.x += w;
        }
        if (span && run.span_end) draw_span_tag(cur, *span);
    }
    ImGui::Dummy(ImVec2(wrap_width, cur.y + cur.line_h));
    if (hovered && ImGui::IsWindowHovered())
        ImGui::SetTooltip("%s: protected span, code points %lld-%lld\nkept exactly in every candidate", hovered->label.c_str(),
                          static_cast<long long>(hovered->start), static_cast<long long>(hovered->end));
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
