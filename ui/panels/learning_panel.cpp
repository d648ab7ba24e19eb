// The learning loop (issue 25): the workspace's "learn from my decisions" switch with its status
// line, and the Learning window: the adopted adapter versions of the loaded model with their
// held-out loss before/after (a curve over the versions), "use this one" per version, "learn now",
// the last round of this session with its training-loss curve, and the loop's settings.
#include <imgui.h>

#include <algorithm>
#include <chrono>

#include "controllers/learning_controller.h"
#include "panels.h"

namespace t5s::ui {

namespace {

const ImVec4 kRed(1, 0.4f, 0.4f, 1), kGreen(0.4f, 0.9f, 0.4f, 1);

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Held-out loss before / after each adopted version, by version number; the "after" line starts at
// the base (x = 0) with the first version's "before".
void draw_versions_curve(const LearningVm& l) {
    RingSeries before(l.versions.size() + 1), after(l.versions.size() + 2);
    if (!l.versions.empty() && l.versions.front().loss_before >= 0) after.push(0.0, l.versions.front().loss_before);
    for (const auto& v : l.versions) {
        if (v.loss_before >= 0) before.push(double(v.version), v.loss_before);
        if (v.loss_after >= 0) after.push(double(v.version), v.loss_after);
    }
    const double last = std::max(4.0, l.versions.empty() ? 0.0 : double(l.versions.back().version));
    ImGui::TextDisabled("held-out loss by version (before: of the version it continued, on the round's held-out pairs)");
    draw_line_chart("versions curve",
                    {{&before, "before", IM_COL32(240, 160, 80, 255)}, {&after, "after", IM_COL32(90, 170, 255, 255)}},
                    Unit::Plain, last, last, 120.0f, XAxis::Absolute);
}

void version_row(Controller& ctl, const AdapterVersionEntry& v, int64_t now) {
    const auto& l = ctl.state().learn;
    ImGui::PushID(int(v.version));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (v.version == l.current)
        ImGui::TextColored(kGreen, "v%lld (in use)", static_cast<long long>(v.version));
    else
        ImGui::Text("v%lld", static_cast<long long>(v.version));
    ImGui::TableNextColumn();
    const int64_t t = parse_iso_utc_ms(v.created_at);
    ImGui::TextUnformatted(t > 0 ? ago_text(double(now - t) / 1000.0).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::Text("%lld (+%lld)", static_cast<long long>(v.pairs_total), static_cast<long long>(v.pairs_new));
    ImGui::TableNextColumn();
    ImGui::Text("%.3f → %.3f", v.loss_before, v.loss_after);
    ImGui::TableNextColumn();
    ImGui::Text("%lld steps, %.0f s", static_cast<long long>(v.steps), v.elapsed_s);
    ImGui::TableNextColumn();
    const bool can = v.version != l.current && !l.use_job && ctl.state().model.info.has_value();
    if (!can) ImGui::BeginDisabled();
    if (ImGui::SmallButton("use this one")) ctl.learning().use_version(v.version);
    if (!can) ImGui::EndDisabled();
    ImGui::PopID();
}

void draw_versions_table(Controller& ctl) {
    const auto& l = ctl.state().learn;
    const int64_t now = now_ms();
    if (!ImGui::BeginTable("versions", 6, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
        return;
    for (const char* h : {"version", "made", "pairs", "held-out loss", "round", ""}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (auto it = l.versions.rbegin(); it != l.versions.rend(); ++it) version_row(ctl, *it, now);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (l.current == 0)
        ImGui::TextColored(kGreen, "base (in use)");
    else
        ImGui::TextUnformatted("base");
    for (int i = 0; i < 4; ++i) ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    const bool can = l.current != 0 && !l.use_job && ctl.state().model.info.has_value();
    if (!can) ImGui::BeginDisabled();
    if (ImGui::SmallButton("use this one##base")) ctl.learning().use_version(0);
    if (!can) ImGui::EndDisabled();
    ImGui::EndTable();
}

void draw_last_round(const LearningVm& l) {
    if (!l.last) return;
    ImGui::TextWrapped("last round: %s", round_summary(*l.last).c_str());
    if (l.last_curve.empty()) return;
    RingSeries curve(l.last_curve.size() + 1);
    for (size_t i = 0; i < l.last_curve.size(); ++i) curve.push(double(i + 1), l.last_curve[i]);
    const double n = double(l.last_curve.size());
    draw_line_chart("round curve", {{&curve, "train loss", IM_COL32(90, 170, 255, 255)}}, Unit::Plain, n, std::max(1.0, n), 90.0f,
                    XAxis::Absolute);
}

}  // namespace

void draw_learning_switch(Controller& ctl) {
    auto& l = ctl.state().learn;
    bool on = l.enabled;
    if (ImGui::Checkbox("learn from my decisions", &on)) ctl.learning().set_enabled(on);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Every %d accepted or edited candidates a short LoRA round continues the adapter in the background;\n"
            "the new version is used only if it lowers the loss on held-out decisions.",
            l.every);
    ImGui::SameLine();
    ImGui::TextDisabled("%s", learning_status_line(l, now_ms()).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("versions...")) ctl.perform(Action::OpenLearning);
}

void draw_learning_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& l = ctl.state().learn;
    if (!l.open) return;
    place_window(ctx, {0.18f, 0.10f, 0.64f, 0.70f});
    if (l.focus) ImGui::SetNextWindowFocus();
    l.focus = false;
    ImGui::SetNextWindowBgAlpha(1.0f);
    if (!ImGui::Begin(kLearningPanel, &l.open)) {
        ImGui::End();
        return;
    }
    draw_learning_switch(ctl);
    ImGui::SetNextItemWidth(90);
    if (ImGui::InputInt("pairs per round", &l.every)) l.every = std::clamp(l.every, 1, 100000);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    if (ImGui::InputInt("steps per round", &l.max_steps)) l.max_steps = std::clamp(l.max_steps, 1, 100000);
    ImGui::SameLine();
    const bool can = !l.round_job && ctl.state().model.info.has_value() && !ctl.state().engine_dead;
    if (!can) ImGui::BeginDisabled();
    if (ImGui::Button("Learn now")) ctl.learning().learn_now();
    if (!can) ImGui::EndDisabled();
    if (l.round_job) {
        ImGui::SameLine();
        if (ImGui::Button("Cancel round")) ctl.learning().cancel_round();
    }
    ImGui::SameLine();
    if (ImGui::Button("Refresh")) ctl.learning().refresh();
    if (!l.error.empty()) ImGui::TextColored(kRed, "%s", l.error.c_str());
    ImGui::TextDisabled("folder: %s   (%lld rejected rounds)", l.adapter_dir.empty() ? "(open a model)" : l.adapter_dir.c_str(),
                        static_cast<long long>(l.rejected_rounds));
    draw_last_round(l);
    ImGui::Separator();
    if (!l.versions.empty()) draw_versions_curve(l);
    draw_versions_table(ctl);
    ImGui::End();
}

}  // namespace t5s::ui
