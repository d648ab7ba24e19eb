// F1: every action and its key.
#include <imgui.h>

#include "panels.h"

namespace t5s::ui {

void draw_help_panel(PanelContext& ctx) {
    auto& s = ctx.ctl.state();
    if (!s.show_help) return;
    ImGui::SetNextWindowPos(ImVec2(ctx.width * 0.5f, ctx.height * 0.5f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(560, 0), ImGuiCond_Appearing);
    if (ImGui::Begin(kHelpPanel, &s.show_help, ImGuiWindowFlags_NoCollapse)) {
        if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
            ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, 120);
            ImGui::TableSetupColumn("action");
            for (const auto& b : ctx.ctl.keymap().bindings()) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(Keymap::chord_label(b.chord).c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(b.description);
            }
            ImGui::EndTable();
        }
        ImGui::TextDisabled("Letter keys act when no text field has the keyboard focus.");
    }
    ImGui::End();
}

}  // namespace t5s::ui
