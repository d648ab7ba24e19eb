// Batch augmentation: load txt / JSONL / CSV / TSV (choose the column), N candidates per row,
// progress, rows/s, ETA, kept / dropped candidates by reason, pause / resume / cancel, and review
// of the rows in the workspace.
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace t5s::ui {

void draw_batch_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& s = ctl.state();
    auto& b = s.batch;
    place_window(ctx, {0.70f, 0.0f, 0.30f, 0.36f});
    if (s.focus_batch) ImGui::SetNextWindowFocus();
    if (!ImGui::Begin(kBatchPanel)) {
        ImGui::End();
        return;
    }
    if (s.focus_batch) {
        ImGui::SetKeyboardFocusHere();
        s.focus_batch = false;
    }
    ImGui::SetNextItemWidth(-70);
    if (ImGui::InputTextWithHint("##file", "rows file: .txt .jsonl .csv .tsv (or drop it on the window)", &b.path,
                                 ImGuiInputTextFlags_EnterReturnsTrue))
        ctl.load_dataset();
    action_tooltip(ctl.keymap(), Action::OpenBatch);
    ImGui::SameLine();
    if (ImGui::Button("Open")) ctl.load_dataset();
    if (!b.columns.empty()) {
        ImGui::SetNextItemWidth(160);
        if (ImGui::BeginCombo("column", b.column.c_str())) {
            for (const auto& c : b.columns)
                if (ImGui::Selectable(c.c_str(), c == b.column)) {
                    b.column = c;
                    ctl.load_dataset();
                }
            ImGui::EndCombo();
        }
    }
    if (b.phase == BatchPhase::Loading) ImGui::TextDisabled("reading...");
    if (!b.rows.empty()) {
        ImGui::Text("%zu rows", b.rows.size());
        if (!b.warnings.empty()) {
            ImGui::SameLine();
            ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%zu skipped", b.warnings.size());
            if (ImGui::IsItemHovered()) {
                ImGui::BeginTooltip();
                for (size_t i = 0; i < b.warnings.size() && i < 12; ++i) ImGui::TextUnformatted(b.warnings[i].c_str());
                ImGui::EndTooltip();
            }
        }
        ImGui::SameLine();
        action_button(ctl, "Review rows", Action::ReviewQueue, !s.ws.generating());
    }
    ImGui::SetNextItemWidth(120);
    ImGui::SliderInt("per row", &b.per_row, 1, 16);
    ImGui::SameLine();
    const bool running = b.phase == BatchPhase::Running, paused = b.phase == BatchPhase::Paused;
    if (!running && !paused) {
        if (b.rows.empty() || !s.model.info) ImGui::BeginDisabled();
        if (ImGui::Button("Run batch")) ctl.start_batch();
        if (b.rows.empty() || !s.model.info) ImGui::EndDisabled();
    } else {
        if (running && ImGui::Button("Pause")) ctl.pause_batch();
        if (paused && ImGui::Button("Resume")) ctl.resume_batch();
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) ctl.cancel_batch();
    }
    if (b.total > 0 && (running || paused || b.phase == BatchPhase::Done)) {
        char overlay[96];
        std::snprintf(overlay, sizeof overlay, "%lld / %lld", static_cast<long long>(b.done), static_cast<long long>(b.total));
        ImGui::ProgressBar(float(double(b.done) / double(b.total)), ImVec2(-1, 0), overlay);
        if (b.eta_s >= 0) ImGui::Text("%.2f rows/s, ETA %.0f s%s", b.rate, b.eta_s, paused ? " (paused)" : "");
        else ImGui::Text("%.2f rows/s%s", b.rate, paused ? " (paused)" : "");
        ImGui::TextUnformatted(kept_dropped_line(b).c_str());
        help_marker("Candidates returned by the rows finished in this run, and those the filters (no copy, distinct, the quality "
                    "thresholds of Generation settings) dropped, by reason. Dropped ones stay in the history.");
    }
    ImGui::TextDisabled("results go to the history; resuming skips rows already done");
    if (!b.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", b.error.c_str());
    ImGui::BeginChild("rows", ImVec2(0, 0), true);
    const bool show_results = !b.preview.empty();
    const auto& items = show_results ? b.preview : b.rows;
    ImGuiListClipper clip;
    clip.Begin(int(items.size()));
    while (clip.Step())
        for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i)
            ImGui::Text("%s%d  %s", show_results ? "=> " : "", i + 1, items[size_t(i)].c_str());
    ImGui::EndChild();
    ImGui::End();
}

}  // namespace t5s::ui
