// The learning loop: the workspace's "learn from my decisions" switch with its status
// line, and the Learning window: the adopted adapter versions of the loaded model with their
// held-out loss before/after (a curve over the versions), the one in use highlighted, each one's
// training-loss curve (from its manifest; click a version to chart it large), "use this one" per
// version, "learn now", a rejected last round with its curve, and the round's settings (pairs per
// round, steps, learning rate).
#include <imgui.h>

#include <algorithm>
#include <chrono>

#include "controllers/learning_controller.h"
#include "panels.h"
#include "settings.h"

namespace t5s::ui {

namespace {

const ImVec4 kRed(1, 0.4f, 0.4f, 1), kGreen(0.4f, 0.9f, 0.4f, 1);
const ImU32 kInUseRow = IM_COL32(50, 110, 60, 110), kCurveColor = IM_COL32(90, 170, 255, 255);

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

// The version whose training curve is charted: the one clicked, else the one in use, else the newest.
const AdapterVersionEntry* shown_version(const LearningVm& l) {
    const AdapterVersionEntry* in_use = nullptr;
    for (const auto& v : l.versions) {
        if (v.version == l.shown_version) return &v;
        if (v.version == l.current) in_use = &v;
    }
    return in_use ? in_use : l.versions.empty() ? nullptr : &l.versions.back();
}

// The version column: the one in use on a highlighted row, in green; a click charts its curve.
void version_cell(LearningVm& l, const AdapterVersionEntry& v) {
    const bool in_use = v.version == l.current;
    if (in_use) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, kInUseRow);
    const std::string label = "v" + std::to_string(v.version) + (in_use ? " (in use)" : "");
    if (in_use) ImGui::PushStyleColor(ImGuiCol_Text, kGreen);
    const AdapterVersionEntry* shown = shown_version(l);
    if (ImGui::Selectable(label.c_str(), shown && shown->version == v.version)) l.shown_version = v.version;
    if (in_use) ImGui::PopStyleColor();
}

void version_row(Controller& ctl, const AdapterVersionEntry& v, int64_t now) {
    auto& l = ctl.state().learn;
    ImGui::PushID(int(v.version));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    version_cell(l, v);
    ImGui::TableNextColumn();
    const int64_t t = parse_iso_utc_ms(v.created_at);
    ImGui::TextUnformatted(t > 0 ? ago_text(double(now - t) / 1000.0).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::Text("%lld (+%lld)", static_cast<long long>(v.pairs_total), static_cast<long long>(v.pairs_new));
    ImGui::TableNextColumn();
    ImGui::Text("%.3f → %.3f", v.loss_before, v.loss_after);
    ImGui::TableNextColumn();
    if (v.lr > 0) ImGui::Text("%lld steps, lr %.0e, %.0f s", static_cast<long long>(v.steps), v.lr, v.elapsed_s);
    else ImGui::Text("%lld steps, %.0f s", static_cast<long long>(v.steps), v.elapsed_s);
    ImGui::TableNextColumn();
    if (v.train_losses.size() >= 2) draw_sparkline("curve", v.train_losses, 120.0f, ImGui::GetTextLineHeight(), kCurveColor);
    else ImGui::TextDisabled("-");
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
    if (!ImGui::BeginTable("versions", 7, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
        return;
    for (const char* h : {"version", "made", "pairs", "held-out loss", "round", "training loss", ""}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (auto it = l.versions.rbegin(); it != l.versions.rend(); ++it) version_row(ctl, *it, now);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (l.current == 0) {
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, kInUseRow);
        ImGui::TextColored(kGreen, "base (in use)");
    } else {
        ImGui::TextUnformatted("base");
    }
    for (int i = 0; i < 5; ++i) ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    const bool can = l.current != 0 && !l.use_job && ctl.state().model.info.has_value();
    if (!can) ImGui::BeginDisabled();
    if (ImGui::SmallButton("use this one##base")) ctl.learning().use_version(0);
    if (!can) ImGui::EndDisabled();
    ImGui::EndTable();
}

// The charted version's training loss per step, as recorded in its manifest.
void draw_version_curve(const LearningVm& l) {
    const AdapterVersionEntry* v = shown_version(l);
    if (!v) return;
    const auto n = static_cast<long long>(v->version);
    if (v->train_losses.empty()) {
        ImGui::TextDisabled("v%lld: its manifest has no training curve (made before curves were recorded)", n);
        return;
    }
    ImGui::TextDisabled("training loss per step of v%lld (round %lld%s; click a version to chart it)", n,
                        static_cast<long long>(v->round), v->lora_r > 0 ? (", LoRA r " + std::to_string(v->lora_r)).c_str() : "");
    RingSeries curve(v->train_losses.size() + 1);
    for (size_t i = 0; i < v->train_losses.size(); ++i) curve.push(double(i + 1), v->train_losses[i]);
    const double steps = double(v->train_losses.size());
    draw_line_chart("version curve", {{&curve, "train loss", kCurveColor}}, Unit::Plain, steps, std::max(1.0, steps), 110.0f,
                    XAxis::Absolute);
}

// The last round of this session; its curve only when it was not adopted (an adopted one is a version).
void draw_last_round(const LearningVm& l) {
    if (!l.last) return;
    ImGui::TextWrapped("last round: %s", round_summary(*l.last).c_str());
    if (l.last_curve.empty() || l.last->status == "adopted") return;
    RingSeries curve(l.last_curve.size() + 1);
    for (size_t i = 0; i < l.last_curve.size(); ++i) curve.push(double(i + 1), l.last_curve[i]);
    const double n = double(l.last_curve.size());
    draw_line_chart("round curve", {{&curve, "train loss", kCurveColor}}, Unit::Plain, n, std::max(1.0, n), 90.0f,
                    XAxis::Absolute);
}

// A count edited in ImGui's int box, kept inside the app's range of the learning table's row `json`.
void input_count(const char* label, int64_t& value, const char* json) {
    int shown = static_cast<int>(value);
    if (ImGui::InputInt(label, &shown)) value = static_cast<int64_t>(clamp_learning_option(json, shown));
}

// The next round's settings (saved in settings.json): how often, how long, how fast.
void draw_round_settings(LearningVm& l) {
    ImGui::SetNextItemWidth(90);
    input_count("pairs per round", l.round.every, "min_new_pairs");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    input_count("steps per round", l.round.max_steps, "max_steps");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("at most: a round makes about 3 passes over its new and replayed pairs");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    if (ImGui::InputDouble("learning rate", &l.round.lr, 0, 0, "%.1e")) l.round.lr = clamp_learning_option("lr", l.round.lr);
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
            static_cast<int>(l.round.every));
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
    draw_round_settings(l);
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
    draw_version_curve(l);
    ImGui::End();
}

}  // namespace t5s::ui
