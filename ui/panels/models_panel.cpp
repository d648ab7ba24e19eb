// Models window (File > Models..., Ctrl+M): the Local tab lists the models in the Hugging Face cache,
// the app's models folder and recently opened folders with the memory each needs against this
// machine; the Download tab offers the curated catalogue and any ORG/NAME[@REV], one progress bar
// per download (cancel, resume, open when done). Everything it shows comes from engine events.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <utility>

#include "panels.h"

namespace t5s::ui {

namespace {

const ImVec4 kRed(1, 0.4f, 0.4f, 1), kGreen(0.4f, 0.9f, 0.4f, 1), kAmber(1, 0.8f, 0.3f, 1);

ImVec4 fit_colour(const std::string& label) {
    return label == "fits" ? kGreen : label == "tight" ? kAmber : label == "too big" ? kRed : ImVec4(0.6f, 0.6f, 0.6f, 1);
}

void local_row(Controller& ctl, size_t i) {
    auto& m = ctl.state().models;
    const hub::StoredModel& row = m.local[i];
    ImGui::PushID(int(i));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (ImGui::Selectable(row.name.c_str(), m.selected == int(i), ImGuiSelectableFlags_SpanAllColumns)) m.selected = int(i);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.commit.empty() ? "(folder)"
                                              : (row.revision.empty() ? row.commit.substr(0, 8) : row.revision).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", row.architecture.c_str(), row.kind == "encoder" ? " (encoder)" : "");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.parameters > 0 ? human_count(double(row.parameters)).c_str() : "?");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(human_bytes(double(row.disk_bytes)).c_str());
    for (const MemoryFit& f : memory_fits(row.parameters, m.available_bytes)) {
        ImGui::TableNextColumn();
        ImGui::TextColored(fit_colour(f.label), "%s %s", f.bytes > 0 ? human_bytes(double(f.bytes)).c_str() : "",
                           f.label.c_str());
    }
    ImGui::PopID();
}

void local_actions(Controller& ctl) {
    auto& m = ctl.state().models;
    const bool have = m.selected >= 0 && m.selected < int(m.local.size());
    if (!have) ImGui::BeginDisabled();
    if (ImGui::Button("Open")) ctl.models().open_local(size_t(m.selected));
    ImGui::SameLine();
    const bool in_cache = have && !m.local[size_t(m.selected)].commit.empty();
    if (!in_cache) ImGui::BeginDisabled();
    if (ImGui::Button("Delete from cache")) m.confirm_delete = m.local[size_t(m.selected)].name;
    if (!in_cache) ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Show folder")) m.status = m.local[size_t(m.selected)].dir.string();
    if (!have) ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Refresh")) ctl.models().refresh();
    if (!m.confirm_delete.empty()) {
        ImGui::TextColored(kAmber, "Delete every snapshot and file of %s from the cache?", m.confirm_delete.c_str());
        ImGui::SameLine();
        if (ImGui::Button("Delete")) ctl.models().delete_model(m.confirm_delete);
        ImGui::SameLine();
        if (ImGui::Button("Keep")) m.confirm_delete.clear();
    }
}

void draw_local(Controller& ctl) {
    auto& m = ctl.state().models;
    if (m.stale && m.list_job == 0) ctl.models().refresh();
    ImGui::TextDisabled("cache: %s   memory available: %s%s", m.listed_cache.c_str(),
                        human_bytes(double(m.available_bytes)).c_str(), m.list_job ? "   (listing...)" : "");
    local_actions(ctl);
    if (m.local.empty() && m.list_job == 0) ImGui::TextDisabled("No model found yet: get one in the Download tab.");
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (ImGui::BeginTable("local", 8, flags, ImVec2(0, -ImGui::GetFrameHeightWithSpacing()))) {
        for (const char* h : {"name", "revision", "architecture", "parameters", "on disk", "fp32", "bf16", "int8"})
            ImGui::TableSetupColumn(h);
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < m.local.size(); ++i) local_row(ctl, i);
        ImGui::EndTable();
    }
}

void download_row(Controller& ctl, size_t i) {
    auto& d = ctl.state().models.downloads[i];
    ImGui::PushID(int(i) + 10000);
    ImGui::TextUnformatted((d.revision == "main" ? d.repo : d.repo + "@" + d.revision).c_str());
    ImGui::SameLine(ImGui::GetContentRegionAvail().x * 0.35f);
    const float f = d.total > 0 ? float(double(d.done) / double(d.total)) : 0.0f;
    const std::string text = download_progress_text(d);
    ImGui::ProgressBar(d.phase == DownloadPhase::Done ? 1.0f : f, ImVec2(ImGui::GetContentRegionAvail().x * 0.6f, 0),
                       text.c_str());
    ImGui::SameLine();
    if (d.phase == DownloadPhase::Running) {
        if (ImGui::Button("Cancel")) ctl.models().cancel_download(i);
    } else if (d.phase == DownloadPhase::Done) {
        if (ImGui::Button("Open")) ctl.models().open_download(i);
    } else if (ImGui::Button("Resume")) {
        ctl.models().start_download(d.repo + "@" + d.revision);
    }
    if (d.phase == DownloadPhase::Running) ImGui::TextDisabled("  %s %s", d.step.c_str(), d.file.c_str());
    else if (d.phase == DownloadPhase::Done) ImGui::TextColored(kGreen, "  done: %s", d.snapshot.c_str());
    else ImGui::TextColored(d.phase == DownloadPhase::Failed ? kRed : kAmber, "  %s", d.error.c_str());
    ImGui::PopID();
}

void draw_catalogue(Controller& ctl) {
    auto& m = ctl.state().models;
    if (!m.catalogue_error.empty()) ImGui::TextColored(kAmber, "%s", m.catalogue_error.c_str());
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("catalogue", 6, flags, ImVec2(0, 0))) return;
    const std::pair<const char*, float> columns[] = {{"repository", 1.7f}, {"languages", 0.9f}, {"parameters", 0.5f},
                                                     {"licence", 0.7f},    {"good for", 3.2f},  {"", 0.5f}};
    for (const auto& [h, weight] : columns) ImGui::TableSetupColumn(h, ImGuiTableColumnFlags_WidthStretch, weight);
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < m.catalogue.size(); ++i) {
        const CatalogueEntry& c = m.catalogue[i];
        ImGui::PushID(int(i) + 20000);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.repo.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.languages.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.parameters.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.licence.c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s%s", c.good_for.c_str(),
                           c.task_prefix.empty() ? "" : ("  [prefix \"" + c.task_prefix + "\"]").c_str());
        ImGui::TableNextColumn();
        if (ImGui::SmallButton("Download")) ctl.models().start_download(c.repo);
        ImGui::PopID();
    }
    ImGui::EndTable();
}

void draw_download(Controller& ctl) {
    auto& m = ctl.state().models;
    ImGui::SetNextItemWidth(-110);
    const bool enter = ImGui::InputTextWithHint("##repo", "any repository: ORG/NAME or ORG/NAME@REVISION", &m.repo_input,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if (ImGui::Button("Download") || enter) ctl.models().start_download_from_input();
    for (size_t i = 0; i < m.downloads.size(); ++i) download_row(ctl, i);
    if (!m.downloads.empty()) ImGui::Separator();
    draw_catalogue(ctl);
}

}  // namespace

void draw_models_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& m = ctl.state().models;
    if (!m.open) return;
    place_window(ctx, {0.12f, 0.08f, 0.76f, 0.80f});
    if (m.focus) ImGui::SetNextWindowFocus();
    m.focus = false;
    ImGui::SetNextWindowBgAlpha(1.0f);  // a window over the panels: opaque, so its table reads cleanly
    if (!ImGui::Begin(kModelsPanel, &m.open)) {
        ImGui::End();
        return;
    }
    if (!m.error.empty()) ImGui::TextColored(kRed, "%s", m.error.c_str());
    if (!m.status.empty()) ImGui::TextWrapped("%s", m.status.c_str());
    if (ImGui::BeginTabBar("models_tabs")) {
        const int tab = m.select_tab;
        m.select_tab = -1;
        if (ImGui::BeginTabItem("Local", nullptr, tab == 0 ? ImGuiTabItemFlags_SetSelected : 0)) {
            draw_local(ctl);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Download", nullptr, tab == 1 ? ImGuiTabItemFlags_SetSelected : 0)) {
            draw_download(ctl);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::End();
}

}  // namespace t5s::ui
