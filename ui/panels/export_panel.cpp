// Export: JSONL (datasets-compatible source/target + metadata), CSV, TSV; accepted/edited only,
// dedupe, originals; streamed with progress on the io lane; never overwrites without asking.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace t5s::ui {

void draw_export_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& s = ctl.state();
    auto& e = s.exp;
    place_window(ctx, {0.70f, 0.76f, 0.30f, 0.24f});
    const bool focus = e.open;
    if (focus) ImGui::SetNextWindowFocus();
    if (!ImGui::Begin(kExportPanel)) {
        ImGui::End();
        return;
    }
    if (focus) {
        ImGui::SetKeyboardFocusHere();
        e.open = false;
    }
    ImGui::SetNextItemWidth(-80);
    const bool enter =
        ImGui::InputTextWithHint("##out", "output file (.jsonl / .csv / .tsv)", &e.path, ImGuiInputTextFlags_EnterReturnsTrue);
    action_tooltip(ctl.keymap(), Action::OpenExport);
    ImGui::SameLine();
    const bool busy = e.job != 0;
    if (busy) ImGui::BeginDisabled();
    const bool clicked = ImGui::Button("Export");
    if (busy) ImGui::EndDisabled();
    if ((enter || clicked) && !busy) {
        if (e.path.size() > 4 && e.path.substr(e.path.size() - 4) == ".csv") e.format = 1;
        else if (e.path.size() > 4 && e.path.substr(e.path.size() - 4) == ".tsv") e.format = 2;
        else e.format = 0;
        ctl.start_export(false);
    }
    ImGui::RadioButton("JSONL", &e.format, 0);
    ImGui::SameLine();
    ImGui::RadioButton("CSV", &e.format, 1);
    ImGui::SameLine();
    ImGui::RadioButton("TSV", &e.format, 2);
    ImGui::Checkbox("accepted / edited only", &e.accepted_only);
    ImGui::SameLine();
    ImGui::Checkbox("dedupe", &e.dedupe);
    ImGui::SameLine();
    ImGui::Checkbox("originals", &e.include_originals);
    if (busy) {
        const float f = e.total > 0 ? float(double(e.done) / double(e.total)) : 0.0f;
        ImGui::ProgressBar(f, ImVec2(-1, 0));
    }
    if (e.result)
        ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "%lld rows (%lld duplicates skipped) -> %s",
                           static_cast<long long>(e.result->rows_written), static_cast<long long>(e.result->duplicates_skipped),
                           e.result->path.c_str());
    if (!e.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", e.error.c_str());
    if (e.confirm_overwrite) ImGui::OpenPopup("Overwrite?");
    if (ImGui::BeginPopupModal("Overwrite?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::Text("%s exists. Replace it?", e.path.c_str());
        if (ImGui::Button("Replace (Enter)") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter))) {
            ctl.start_export(true);
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Keep (Esc)") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
            e.confirm_overwrite = false;
            ImGui::CloseCurrentPopup();
        }
        ImGui::EndPopup();
    }
    ImGui::End();
}

}  // namespace t5s::ui
