// The workspace's recipe picker, editor and route tags (recipe_widgets.h).
#include "panels/recipe_widgets.h"

#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "widgets.h"

namespace t5s::ui {

namespace {

const ImVec4 kErrorColour(1.0f, 0.4f, 0.4f, 1.0f);
const ImVec4 kRouteColour(0.75f, 0.65f, 1.0f, 1.0f);

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// "None", the file's name, or "(untitled)"; a star when the editor holds unsaved changes.
std::string picker_label(const RecipeVm& r) {
    if (!r.active()) return "None";
    std::string label = r.path.empty() ? "(untitled)" : file_name(r.path);
    return r.text != r.saved_text ? label + " *" : label;
}

void draw_picker(Controller& ctl) {
    RecipeVm& r = ctl.state().ws.recipe;
    ImGui::SetNextItemWidth(260);
    if (ImGui::BeginCombo("recipe", picker_label(r).c_str())) {
        if (ImGui::Selectable("None (plain generation)", !r.active())) ctl.workspace().choose_recipe("");
        for (const std::string& path : r.shipped)
            if (ImGui::Selectable(file_name(path).c_str(), path == r.path)) ctl.workspace().choose_recipe(path);
        if (!r.recent.empty()) ImGui::Separator();
        for (const std::string& path : r.recent)  // a copy: choosing one reorders the list
            if (ImGui::Selectable(path.c_str(), path == r.path)) {
                ctl.workspace().choose_recipe(std::string(path));
                break;
            }
        ImGui::EndCombo();
    }
    help_marker(
        "A recipe chains generation steps, e.g. English > Chinese > English, and pools the outputs of the steps it "
        "names as candidates; each candidate shows the route it took. None: one plain generation. The settings "
        "above are every step's base; a step's own settings go on top.");
    ImGui::SetNextItemWidth(260);
    const bool enter =
        ImGui::InputTextWithHint("##recipe path", "recipe file (.json)", &r.path_input, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if (ImGui::Button("Open file") || enter) ctl.workspace().choose_recipe(r.path_input);
    ImGui::SameLine();
    if (ImGui::Button("New")) {
        ctl.workspace().choose_recipe("");
        r.text = "{\"steps\": [{\"name\": \"step\"}], \"candidates\": [\"step\"]}";
        r.editor_open = true;
    }
}

void draw_editor(Controller& ctl) {
    RecipeVm& r = ctl.state().ws.recipe;
    ImGui::SetNextItemOpen(r.editor_open);
    r.editor_open = ImGui::TreeNode("recipe editor");
    if (!r.editor_open) return;
    const bool saving = r.save_job != 0;
    if (saving) ImGui::BeginDisabled();
    if (ImGui::InputTextMultiline("##recipe text", &r.text, ImVec2(-1, ImGui::GetTextLineHeight() * 10))) ctl.note_text(r.text);
    ImGui::SetNextItemWidth(260);
    ImGui::InputTextWithHint("##recipe save as", "save as (path)", &r.save_as);
    ImGui::SameLine();
    if (ImGui::Button("Save as...")) ctl.workspace().save_recipe_as(r.save_as);
    if (saving) ImGui::EndDisabled();
    ImGui::TreePop();
}

}  // namespace

void draw_recipe_settings(Controller& ctl) {
    ctl.workspace().check_recipe();  // cheap when the text is unchanged
    draw_picker(ctl);
    const RecipeVm& r = ctl.state().ws.recipe;
    if (!r.error.empty()) ImGui::TextColored(kErrorColour, "%s", r.error.c_str());
    else if (!r.steps.empty()) ImGui::TextDisabled("%s", r.steps.c_str());
    if (r.active() || r.editor_open) draw_editor(ctl);
}

void draw_route_tag(const CandidateVm& c) { draw_route_tag(c.route); }

void draw_route_tag(const Route& route) {
    if (route.empty()) return;
    ImGui::SameLine();
    ImGui::TextColored(kRouteColour, "[%s]", route_steps(route).c_str());
    if (!ImGui::IsItemHovered()) return;
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
    for (const RouteLeg& leg : route) ImGui::Text("%s: %s", leg.step.c_str(), leg.text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

}  // namespace t5s::ui
