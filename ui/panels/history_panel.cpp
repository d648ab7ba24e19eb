// History: search (substring, CJK), accepted-only filter, keyset paging, send back to input, delete;
// candidates with their scores (and protected spans), and on request the candidates the filters
// dropped, with the reason.
// Queries run on the engine's io lane; this panel only draws the last page.

#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"
#include "score_view.h"
#include "time_text.h"

namespace t5s::ui {

namespace {

// A text with its protected spans highlighted, on the line after what was drawn.
void draw_with_spans(const std::string& text, const std::vector<Span>& spans) {
    ImGui::SameLine();
    draw_marked_text(mark_spans({{DiffOp::Equal, text}}, spans), spans, ImGui::GetContentRegionAvail().x - 8.0f, false);
}

void draw_stored_candidates(const StoredGeneration& g, bool show_dropped) {
    const RecordSpans spans = spans_of_settings_json(g.settings_json);  // the selected generation only
    if (!spans.input.empty()) {
        ImGui::TextDisabled("protected:");
        draw_with_spans(g.input, spans.input);
    }
    for (const auto& c : g.candidates) {
        const bool ok = c.state == CandidateState::Accepted || c.state == CandidateState::Edited;
        const ImVec4 colour = ok                                    ? ImVec4(0.4f, 0.9f, 0.4f, 1)
                              : c.state == CandidateState::Rejected ? ImVec4(1, 0.45f, 0.45f, 1)
                                                                    : ImVec4(0.8f, 0.8f, 0.8f, 1);
        const size_t rank = size_t(c.index);
        if (c.state != CandidateState::Edited && rank < spans.candidates.size() && !spans.candidates[rank].empty()) {
            ImGui::TextColored(colour, "%s ", to_string(c.state));  // an edit moved the spans: shown plain
            draw_with_spans(c.final_text, spans.candidates[rank]);
        } else {
            ImGui::TextColored(colour, "%s  %s", to_string(c.state), c.final_text.c_str());
        }
        const std::string scores = score_line(c.scores);
        if (!scores.empty()) ImGui::TextDisabled("      %s", scores.c_str());
    }
    if (!show_dropped) return;
    if (g.dropped.empty()) ImGui::TextDisabled("no dropped candidates");
    for (const auto& d : g.dropped) {
        ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.4f, 1), "dropped (%s)  %s", to_string(d.reason).c_str(),
                           d.candidate.text.c_str());
        const std::string scores = score_line(d.candidate.scores);
        if (!scores.empty()) ImGui::TextDisabled("      %s", scores.c_str());
    }
}

}  // namespace

void draw_history_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& s = ctl.state();
    auto& h = s.history;
    place_window(ctx, {0.70f, 0.36f, 0.30f, 0.40f});
    if (h.focus_search) ImGui::SetNextWindowFocus();
    if (!ImGui::Begin(kHistoryPanel)) {
        ImGui::End();
        return;
    }
    if (h.stale && !h.job && !s.engine_dead) ctl.refresh_history();
    if (h.focus_search) {
        ImGui::SetKeyboardFocusHere();
        h.focus_search = false;
    }
    ImGui::SetNextItemWidth(-150);
    if (ImGui::InputTextWithHint("##search", "search inputs and candidates", &h.search)) ctl.history_search_changed();
    action_tooltip(ctl.keymap(), Action::FocusHistorySearch);
    ImGui::SameLine();
    if (ImGui::Checkbox("accepted", &h.accepted_only)) ctl.history_search_changed();
    if (ImGui::Button("<")) ctl.history_prev_page();
    ImGui::SameLine();
    ImGui::Text("page %zu", h.page_starts.size());
    ImGui::SameLine();
    if (ImGui::Button(">")) ctl.history_next_page();
    ImGui::SameLine();
    if (h.total >= 0) ImGui::Text("%lld generations", static_cast<long long>(h.total));
    ImGui::SameLine();
    ImGui::Checkbox("dropped", &h.show_dropped);
    help_marker(
        "Also list the candidates the filters dropped (no copy, distinct, quality thresholds), with the reason and scores.");
    if (h.job) {
        ImGui::SameLine();
        ImGui::TextDisabled("(loading)");
    }
    if (!h.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", h.error.c_str());
    const bool sel = h.selected >= 0 && h.selected < int(h.page.generations.size());
    action_button(ctl, "Send to input", Action::SendToInput, sel);
    ImGui::SameLine();
    if (!sel) ImGui::BeginDisabled();
    if (ImGui::Button("Delete")) ctl.delete_history(h.selected);
    if (!sel) ImGui::EndDisabled();
    ImGui::BeginChild("entries", ImVec2(0, 0), true);
    for (int i = 0; i < int(h.page.generations.size()); ++i) {
        const auto& g = h.page.generations[size_t(i)];
        ImGui::PushID(i);
        int accepted = 0;
        for (const auto& c : g.candidates) accepted += c.state == CandidateState::Accepted || c.state == CandidateState::Edited;
        const std::string label = local_time_text(g.created_at_ms, "%m-%d %H:%M") + "  " + g.input;
        if (ImGui::Selectable(label.c_str(), h.selected == i, ImGuiSelectableFlags_AllowDoubleClick)) {
            h.selected = i;
            if (ImGui::IsMouseDoubleClicked(0)) ctl.send_to_input(i);
        }
        if (h.selected == i) {
            ImGui::Indent();
            draw_stored_candidates(g, h.show_dropped);
            ImGui::TextDisabled("%s | %s %s | %.0f ms", g.model_path.c_str(), g.precision.c_str(), g.device.c_str(), g.total_ms);
            ImGui::Unindent();
        } else {
            if (accepted > 0) {
                ImGui::SameLine();
                ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "(%d)", accepted);
            }
            if (h.show_dropped && !g.dropped.empty()) {
                ImGui::SameLine();
                ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.4f, 1), "[%zu dropped]", g.dropped.size());
            }
        }
        ImGui::PopID();
    }
    ImGui::EndChild();
    ImGui::End();
}

}  // namespace t5s::ui
