// Augment workspace: the annotator loop. Source text, generation settings and quality thresholds
// (hot-swapped into a running request), a recipe (recipe_widgets.h), candidates with score, similarity / change bars and a
// character diff, sorted by the chosen ranking, edit in place, accept / reject, undo / redo,
// accept-and-next through a review queue.
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"
#include "panels/decoding_widgets.h"
#include "panels/recipe_widgets.h"
#include "panels/score_widgets.h"
#include "panels/span_widgets.h"

namespace t5s::ui {

namespace {

void draw_settings(Controller& ctl) {
    auto& ws = ctl.state().ws;
    auto& o = ws.options;
    bool changed = false;
    draw_recipe_settings(ctl);
    changed |= ImGui::Checkbox("sample", &o.do_sample);
    help_marker("On: sampling with temperature / top-k / top-p.  Off: greedy (1 beam) or beam search.");
    ImGui::SameLine();
    changed |= ImGui::Checkbox("distinct", &o.distinct);
    help_marker("Drop duplicate candidates (whitespace and width normalised).");
    ImGui::SameLine();
    changed |= ImGui::Checkbox("no copy", &o.no_copy);
    help_marker("Drop candidates identical to the source.");
    const float w = ImGui::GetContentRegionAvail().x * 0.5f - 8.0f;
    ImGui::PushItemWidth(w * 0.55f);
    if (!o.do_sample) ImGui::BeginDisabled();
    changed |= option_slider("temperature", o, &GenerationOptions::temperature);
    ImGui::SameLine(w);
    changed |= option_slider("top-p", o, &GenerationOptions::top_p);
    changed |= option_slider("top-k", o, &GenerationOptions::top_k, o.top_k == 0 ? "off" : "%d");
    if (!o.do_sample) ImGui::EndDisabled();
    ImGui::SameLine(w);
    changed |= option_slider("rep. penalty", o, &GenerationOptions::repetition_penalty);
    changed |= option_slider("candidates", o, &GenerationOptions::num_return_sequences);
    ImGui::SameLine(w);
    changed |= option_slider("beams", o, &GenerationOptions::num_beams);
    changed |= option_slider("max new tokens", o, &GenerationOptions::max_new_tokens);
    ImGui::SameLine(w);
    changed |= option_slider("batch size", o, &GenerationOptions::batch_size);
    changed |= ImGui::Checkbox("random seed", &ws.random_seed);
    if (!ws.random_seed) {
        ImGui::SameLine(w);
        int seed = int(o.seed < 0 ? 0 : o.seed);
        if (ImGui::InputInt("seed", &seed)) {
            o.seed = seed < 0 ? 0 : seed;
            changed = true;
        }
    }
    ImGui::PopItemWidth();
    if (!o.do_sample && o.num_return_sequences > o.num_beams)
        ImGui::TextDisabled("beam search: %d beams used to return %d candidates", o.num_return_sequences, o.num_return_sequences);
    draw_protect_settings(ctl);
    ImGui::TextDisabled("quality thresholds (off = no filter)");
    changed |= draw_threshold_sliders(o, ctl.state().model.embedder.has_value());
    if (changed) ctl.settings_changed();
    draw_paste_settings(ctl);
    draw_advanced_decoding(ctl);
}

void draw_candidates(Controller& ctl) {
    auto& ws = ctl.state().ws;
    auto& list = ws.list;
    const float wrap = ImGui::GetContentRegionAvail().x - 12.0f;
    const GenerationOptions thresholds = ctl.effective_options();  // what the next generation filters by
    for (int i = 0; i < int(list.size()); ++i) {
        const auto& c = list.items()[size_t(i)];
        ImGui::PushID(i);
        const bool sel = i == list.selected();
        ImVec4 tag(0.7f, 0.7f, 0.7f, 1);
        if (c.state == CandidateState::Accepted) tag = ImVec4(0.4f, 0.9f, 0.4f, 1);
        if (c.state == CandidateState::Edited) tag = ImVec4(0.4f, 0.8f, 1.0f, 1);
        if (c.state == CandidateState::Rejected) tag = ImVec4(1.0f, 0.45f, 0.45f, 1);
        char head[96];
        std::snprintf(head, sizeof head, "%d.  score %.3f", i + 1, c.score);
        if (ImGui::Selectable(head, sel, 0, ImVec2(wrap * 0.25f, 0))) list.select(i);
        ImGui::SameLine();
        ImGui::TextColored(tag, "%-8s", state_label(c.state));
        draw_forced_tag(c);
        draw_route_tag(c);
        ImGui::SameLine();
        draw_score_bars(c, thresholds);
        if (sel && ws.editing) {
            if (ws.focus_edit) {
                ImGui::SetKeyboardFocusHere();
                ws.focus_edit = false;
            }
            const bool enter =
                ImGui::InputTextMultiline("##edit", &ws.edit_buffer, ImVec2(wrap, ImGui::GetTextLineHeight() * 3.5f),
                                          ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine);
            if (ImGui::IsItemEdited()) ctl.note_text(ws.edit_buffer);
            if (enter) ctl.commit_edit();
            else if (ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ctl.cancel_edit();
            ImGui::TextDisabled("Enter saves, Ctrl+Enter new line, Esc cancels");
        } else {
            if (sel) {
                const ImVec2 p = ImGui::GetCursorScreenPos();
                ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x - 4, p.y), ImVec2(p.x - 1, p.y + ImGui::GetTextLineHeight()),
                                                          IM_COL32(255, 200, 60, 255));
            }
            draw_marked_text(mark_spans(c.diff, c.final_spans()), c.final_spans(), wrap, true);
        }
        ImGui::Separator();
        ImGui::PopID();
    }
}

// The tasks the model's config.json lists (t5-small's summarize/translate, a fine-tune's training
// task) as presets of the task prefix.
void draw_task_presets(UiState& s) {
    if (!s.model.info || s.model.info->generation_config.tasks.tasks.empty()) return;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(140);
    if (!ImGui::BeginCombo("##task presets", "model tasks")) return;
    for (const ModelTask& t : s.model.info->generation_config.tasks.tasks) {
        const std::string label = t.name + "  \"" + t.prefix + "\"";
        if (ImGui::Selectable(label.c_str(), s.ws.task_prefix == t.prefix)) s.ws.task_prefix = t.prefix;
    }
    ImGui::EndCombo();
}

// The model in use and, while reviewing a file's rows, the row and its label.
void draw_status_line(const UiState& s) {
    const auto& ws = s.ws;
    if (s.model.info)
        ImGui::TextDisabled("model: %s (%s, %s)", s.model.info->dir.filename().string().c_str(), s.model.info->precision.c_str(),
                            s.model.info->device.c_str());
    else ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "no model loaded (Ctrl+O)");
    if (!ws.queue.empty()) {
        ImGui::SameLine();
        ImGui::Text("  row %d / %d", ws.queue_pos + 1, int(ws.queue.size()));
        if (size_t(ws.queue_pos) < ws.queue_labels.size() && !ws.queue_labels[size_t(ws.queue_pos)].empty()) {
            ImGui::SameLine();
            ImGui::TextColored(ImVec4(0.8f, 0.7f, 1.0f, 1), "<%s>", ws.queue_labels[size_t(ws.queue_pos)].c_str());
        }
    }
}

// Generate / Cancel (/ Prev / Next while reviewing rows) and the running step or the last timings.
void draw_generate_row(Controller& ctl) {
    const auto& s = ctl.state();
    const auto& ws = s.ws;
    const bool can_generate = s.model.info && !ws.generating() && !s.engine_dead;
    action_button(ctl, "Generate", Action::Generate, can_generate);
    ImGui::SameLine();
    action_button(ctl, "Cancel", Action::CancelJob, ws.generating());
    if (!ws.queue.empty()) {
        ImGui::SameLine();
        action_button(ctl, "Prev", Action::PrevRow, ws.queue_pos > 0 && !ws.generating());
        ImGui::SameLine();
        action_button(ctl, "Next", Action::NextRow, ws.queue_pos + 1 < int(ws.queue.size()) && !ws.generating());
    }
    if (ws.generating()) {
        ImGui::SameLine();
        if (ws.recipe.total > 0) {  // a recipe: which of its steps runs
            ImGui::Text("recipe step %lld of %lld,", static_cast<long long>(ws.recipe.step + 1),
                        static_cast<long long>(ws.recipe.total));
            ImGui::SameLine();
        }
        ImGui::Text("generating... step %d, %lld tokens", ws.step, static_cast<long long>(ws.tokens));
    } else if (ws.timings) {
        ImGui::SameLine();
        ImGui::TextDisabled("%.0f ms, %.1f tok/s", ws.timings->run_ms, ws.timings->tokens_per_s);
    }
}

// Accept / Reject / Edit / Undo / Redo / Accept + next, and the ranking.
void draw_decision_buttons(Controller& ctl) {
    const auto& ws = ctl.state().ws;
    const bool any = !ws.list.empty();
    action_button(ctl, "Accept", Action::Accept, any);
    ImGui::SameLine();
    action_button(ctl, "Reject", Action::Reject, any);
    ImGui::SameLine();
    action_button(ctl, "Edit", Action::Edit, any);
    ImGui::SameLine();
    action_button(ctl, "Undo", Action::Undo, ws.list.can_undo());
    ImGui::SameLine();
    action_button(ctl, "Redo", Action::Redo, ws.list.can_redo());
    ImGui::SameLine();
    action_button(ctl, "Accept + next", Action::AcceptAndNext, any);
    ImGui::SameLine();
    draw_rank_combo(ctl);
}

}  // namespace

void draw_workspace_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& s = ctl.state();
    auto& ws = s.ws;
    place_window(ctx, {0.25f, 0.0f, 0.45f, 1.0f});
    if (!ImGui::Begin(kWorkspacePanel)) {
        ImGui::End();
        return;
    }
    draw_status_line(s);
    ImGui::SetNextItemWidth(200);
    ImGui::InputText("task prefix", &ws.task_prefix);
    help_marker(
        "Prepended to the source before tokenising, e.g. \"paraphrase: \". Remembered per model; a model that records a "
        "default task (a T5 Studio fine-tune) starts with its prefix.");
    draw_task_presets(s);
    draw_learning_switch(ctl);
    if (ws.focus_source) {
        ImGui::SetKeyboardFocusHere();
        ws.focus_source = false;
    }
    // The selection is kept for "protect selection" (Ctrl+P), which reads it while the field is active.
    auto keep_selection = [](ImGuiInputTextCallbackData* d) {
        auto* vm = static_cast<WorkspaceVm*>(d->UserData);
        vm->select_begin = size_t(d->SelectionStart);
        vm->select_end = size_t(d->SelectionEnd);
        return 0;
    };
    if (ImGui::InputTextMultiline("##source", &ws.source, ImVec2(-1, ImGui::GetTextLineHeight() * 4.5f),
                                  ImGuiInputTextFlags_CallbackAlways, keep_selection, &ws))
        ctl.note_text(ws.source);  // new characters -> font atlas
    action_tooltip(ctl.keymap(), Action::FocusSource);
    draw_source_spans(ctl);

    draw_generate_row(ctl);
    if (!ws.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", ws.error.c_str());

    if (ImGui::CollapsingHeader("Generation settings", ImGuiTreeNodeFlags_DefaultOpen)) draw_settings(ctl);

    ImGui::Separator();
    const bool any = !ws.list.empty();
    draw_decision_buttons(ctl);
    if (any || !ws.list.dropped().empty()) draw_kept_line(ws.list);
    ImGui::BeginChild("candidates", ImVec2(0, 0), true);
    if (!any && !ws.generating()) ImGui::TextDisabled("Candidates appear here. Ctrl+Enter generates; F1 lists every key.");
    draw_candidates(ctl);
    ImGui::EndChild();
    ImGui::End();
}

}  // namespace t5s::ui
