#include "panels/score_widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "score_view.h"
#include "widgets.h"

namespace t5s::ui {

namespace {

ImU32 tone_colour(BarTone tone) {
    switch (tone) {
        case BarTone::Inside: return IM_COL32(80, 190, 95, 255);
        case BarTone::Outside: return IM_COL32(225, 80, 70, 255);
        case BarTone::Neutral: return IM_COL32(95, 145, 215, 255);
        case BarTone::Absent: break;
    }
    return IM_COL32(110, 110, 110, 255);
}

void draw_bar(const char* label, const ScoreBar& bar, float width) {
    if (bar.tone == BarTone::Absent) ImGui::TextDisabled("%s", label);
    else ImGui::TextUnformatted(label);
    ImGui::SameLine(0, 4);
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = line * 0.55f, y = p.y + (line - h) * 0.5f;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + width, y + h), IM_COL32(55, 55, 60, 255));
    if (bar.tone != BarTone::Absent)
        dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + width * bar.fill, y + h), tone_colour(bar.tone));
    else dl->AddRect(ImVec2(p.x, y), ImVec2(p.x + width, y + h), IM_COL32(90, 90, 90, 255));
    for (const auto& mark : {bar.low, bar.high})
        if (mark)
            dl->AddLine(ImVec2(p.x + width * *mark, y - 2), ImVec2(p.x + width * *mark, y + h + 2), IM_COL32(240, 240, 240, 230),
                        2.0f);
    ImGui::Dummy(ImVec2(width, line));
}

// A threshold with an off box; `low`..`high` is the slider's range (the other bound of a pair
// narrows it so that min never passes max).
bool optional_slider(const char* label, std::optional<double>& value, float low, float high, float initial, const char* help) {
    bool changed = false;
    ImGui::PushID(label);
    bool on = value.has_value();
    if (ImGui::Checkbox("##on", &on)) {
        if (on) value = std::clamp(initial, low, high);
        else value.reset();
        changed = true;
    }
    ImGui::SameLine(0, 4);
    float v = value ? float(*value) : initial;
    if (!on) ImGui::BeginDisabled();
    if (ImGui::SliderFloat(label, &v, low, high, on ? "%.2f" : "off")) {
        value = double(v);
        changed = true;
    }
    if (!on) ImGui::EndDisabled();
    help_marker(help);
    ImGui::PopID();
    return changed;
}

float bound_or(const std::optional<double>& v, float fallback) { return v ? float(*v) : fallback; }

}  // namespace

void draw_score_bars(const CandidateVm& c, const GenerationOptions& o) {
    const float width = ImGui::GetFontSize() * 4.0f;
    ImGui::BeginGroup();
    draw_bar("sim", similarity_bar(c, o), width);
    ImGui::SameLine(0, 10);
    draw_bar("chg", change_bar(c, o), width);
    const std::string reason = outside_reason(c, o);
    if (!reason.empty()) {
        ImGui::SameLine(0, 10);
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "outside: %s", reason.c_str());
    }
    ImGui::EndGroup();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", score_tooltip(c, o).c_str());
}

bool draw_threshold_sliders(GenerationOptions& o, bool has_embedder) {
    using O = GenerationOptions;  // the sliders' ranges come from the field table (t5s/generation_fields.h)
    bool changed = false;
    const float w = ImGui::GetContentRegionAvail().x * 0.5f - 8.0f;
    ImGui::PushItemWidth(w * 0.5f);
    if (!has_embedder) ImGui::BeginDisabled();
    changed |= optional_slider("min similarity", o.min_similarity, slider_min(&O::min_similarity),
                               bound_or(o.max_similarity, slider_max(&O::max_similarity)), 0.7f,
                               "Drop a candidate whose meaning (cosine of sentence embeddings) is further from the source.");
    ImGui::SameLine(w);
    changed |= optional_slider("max similarity", o.max_similarity, bound_or(o.min_similarity, slider_min(&O::min_similarity)),
                               slider_max(&O::max_similarity), 0.98f, "Drop near copies of the source.");
    if (!has_embedder) {
        ImGui::EndDisabled();
        ImGui::TextDisabled("similarity thresholds: load an embedding model in the Model panel");
    }
    changed |= optional_slider("min change", o.min_change, slider_min(&O::min_change),
                               bound_or(o.max_change, slider_max(&O::max_change)), 0.1f,
                               "Drop a candidate whose wording changes less (change = 1 - chrF to the source).");
    ImGui::SameLine(w);
    changed |= optional_slider("max change", o.max_change, bound_or(o.min_change, slider_min(&O::min_change)),
                               slider_max(&O::max_change), 0.8f,
                               "Drop a candidate whose wording changes more (often: the meaning changed too).");
    changed |= optional_slider("min back_score", o.min_back_score, slider_min(&O::min_back_score), slider_max(&O::min_back_score),
                               -4.5f, "Drop a candidate that explains its source badly (mean log-prob of the source given it).");
    ImGui::SameLine(w);
    changed |= optional_slider("near duplicate", o.near_duplicate, slider_min(&O::near_duplicate), slider_max(&O::near_duplicate),
                               0.7f, "Drop a candidate whose chrF with a better-ranked kept one is above this.");
    ImGui::PopItemWidth();
    return changed;
}

void draw_rank_combo(Controller& ctl) {
    auto& ws = ctl.state().ws;
    const bool has_similarity = ctl.state().model.embedder.has_value() || ws.list.all_have_similarity();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.5f);
    if (ImGui::BeginCombo("sort", to_string(ws.options.rank))) {
        for (const auto& n : EnumNames<RankBy>::kNames) {  // the rank's table: its names, in its order
            if (n.alias) continue;
            const bool usable = n.value != RankBy::Similarity || has_similarity;
            if (ImGui::Selectable(n.name, ws.options.rank == n.value, usable ? 0 : ImGuiSelectableFlags_Disabled))
                ctl.workspace().set_rank(n.value);
        }
        ImGui::EndCombo();
    }
    help_marker(
        "Orders the candidates shown now and ranks the next generation: none = decoding order; auto = similarity with an "
        "embedding model, else back_score.");
}

void draw_kept_line(const CandidateList& list) {
    ReasonCounts counts;
    count_reasons(list.dropped(), &counts);
    char head[96];
    std::snprintf(head, sizeof head, "%zu kept, %lld dropped", list.size(), static_cast<long long>(total(counts)));
    std::string line = head;
    if (!counts.empty()) line += " (" + reason_summary(counts) + ")";
    if (list.diversity()) {
        char d[48];
        std::snprintf(d, sizeof d, ", diversity %.2f", *list.diversity());
        line += d;
    }
    ImGui::TextDisabled("%s", line.c_str());
    if (!list.dropped().empty() && ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        for (const auto& d : list.dropped()) {
            const std::string scores = score_line(d.candidate.scores);
            ImGui::Text("%-18s %s", to_string(d.reason).c_str(), d.candidate.text.c_str());
            if (!scores.empty()) ImGui::TextDisabled("    %s", scores.c_str());
        }
        ImGui::EndTooltip();
    }
}

}  // namespace t5s::ui
