// Batch augmentation: load txt / JSONL / CSV / TSV / a Label Studio export (the one input reader;
// choose the column), N candidates per row, progress, rows/s, ETA, kept / dropped candidates by
// reason, pause / resume / cancel, and review of the rows in the workspace. Labelled rows show
// their span count and label; skipped rows the reader's "file:line: reason"; done rows their
// first candidate and span counts (protected, lost, forced). The workspace's recipe picker is here too:
// with a recipe, every row batch runs through its steps and each row shows its first candidate's route.
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"
#include "panels/recipe_widgets.h"

namespace t5s::ui {

namespace {

// Whether the table has the span columns: a labelled file, or a run that protected spans.
bool with_span_columns(const BatchVm& b) { return !b.row_spans.empty() || !b.labels.empty() || b.span_total.spans > 0; }

// One table row: its number, the file's spans and label, its text; once done, its first candidate
// and the span counts (lost in red, forced in orange).
void draw_row(const BatchVm& b, size_t i, bool spans) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", i + 1);
    if (spans) {
        ImGui::TableNextColumn();
        const size_t given = i < b.row_spans.size() ? b.row_spans[i].size() : 0;
        if (given) ImGui::TextColored(ImVec4(0.55f, 0.75f, 1.0f, 1), "%zu", given);
        if (i < b.labels.size() && !b.labels[i].empty()) {
            ImGui::SameLine();
            ImGui::TextColored(ImVec4(0.8f, 0.7f, 1.0f, 1), "<%s>", b.labels[i].c_str());
        }
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.rows[i].c_str());
    if (i >= b.results.size() || b.results[i].counts.spans < 0) return;
    const auto& r = b.results[i];
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.first.empty() ? "(no candidate)" : r.first.c_str());
    draw_route_tag(r.route);
    if (!spans) return;
    ImGui::TableNextColumn();
    const ImVec4 colour = r.counts.lost     ? ImVec4(1, 0.45f, 0.45f, 1)
                          : r.counts.forced ? ImVec4(1, 0.62f, 0.2f, 1)
                                            : ImVec4(0.55f, 0.75f, 1, 1);
    ImGui::TextColored(colour, "%s", span_counts_text(r.counts).c_str());
}

// "N skipped" with the reader's "file:line: reason" of the first ones on hover.
void draw_skipped(const BatchVm& b) {
    if (b.warnings.empty()) return;
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%zu skipped", b.warnings.size());
    if (!ImGui::IsItemHovered()) return;
    ImGui::BeginTooltip();
    for (size_t i = 0; i < b.warnings.size() && i < 12; ++i) ImGui::TextUnformatted(b.warnings[i].c_str());
    if (b.warnings.size() > 12) ImGui::TextDisabled("... and %zu more", b.warnings.size() - 12);
    ImGui::EndTooltip();
}

// The rows file: its name (Enter or Open reads it), the text column, the rows read and skipped.
void draw_file_row(Controller& ctl, UiState& s) {
    auto& b = s.batch;
    ImGui::SetNextItemWidth(-70);
    if (ImGui::InputTextWithHint("##file", "rows file: .txt .jsonl .csv .tsv, Label Studio .json (or drop it on the window)",
                                 &b.path, ImGuiInputTextFlags_EnterReturnsTrue))
        ctl.load_dataset();
    action_tooltip(ctl.keymap(), Action::OpenBatch);
    ImGui::SameLine();
    if (ImGui::Button("Open")) ctl.load_dataset();
    ImGui::SameLine();
    if (ImGui::Checkbox("no header", &b.no_header)) ctl.load_dataset();  // CSV/TSV read by position: column 1 the text
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
        if (!b.row_spans.empty()) {  // a labelled file
            size_t rows = 0, spans = 0;
            for (const auto& r : b.row_spans) rows += !r.empty(), spans += r.size();
            ImGui::SameLine();
            ImGui::TextColored(ImVec4(0.55f, 0.75f, 1.0f, 1), "(%zu labelled, %zu spans)", rows, spans);
        }
        if (!b.warnings.empty()) ImGui::SameLine();
        draw_skipped(b);
        ImGui::SameLine();
        action_button(ctl, "Review rows", Action::ReviewQueue, !s.ws.generating());
    } else if (b.phase == BatchPhase::Ready) {  // every row was bad: say why
        ImGui::TextUnformatted("0 rows");
        ImGui::SameLine();
        draw_skipped(b);
    }
}

// Progress, rate, kept/dropped candidates and protected spans of the run.
void draw_batch_progress(const BatchVm& b, bool paused) {
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "%lld / %lld", static_cast<long long>(b.done), static_cast<long long>(b.total));
    ImGui::ProgressBar(float(double(b.done) / double(b.total)), ImVec2(-1, 0), overlay);
    if (b.eta_s >= 0) ImGui::Text("%.2f rows/s, ETA %.0f s%s", b.rate, b.eta_s, paused ? " (paused)" : "");
    else ImGui::Text("%.2f rows/s%s", b.rate, paused ? " (paused)" : "");
    ImGui::TextUnformatted(kept_dropped_line(b).c_str());
    help_marker(
        "Candidates returned by the rows finished in this run, and those the filters (no copy, distinct, the quality "
        "thresholds of Generation settings) dropped, by reason. Dropped ones stay in the history.");
    if (const std::string spans = batch_spans_line(b); !spans.empty()) {
        ImGui::TextUnformatted(spans.c_str());
        help_marker(
            "Protected spans of the rows done (the file's spans and the detectors' of Generation settings). A candidate "
            "that lost one is dropped (lost_span); a forced one kept its spans because the decoder put them in.");
    }
}

// One line per row, with its first candidate (and span columns for labelled runs).
void draw_rows_table(const BatchVm& b) {
    const ImGuiTableFlags flags =
        ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    const bool spans = with_span_columns(b);
    if (ImGui::BeginTable(spans ? "rows_spans" : "rows", spans ? 5 : 3, flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 2.2f);
        if (spans) ImGui::TableSetupColumn("spans", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 4.0f);
        ImGui::TableSetupColumn("row", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn("=> first candidate", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        if (spans) ImGui::TableSetupColumn("spans kept", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 8.0f);
        ImGui::TableHeadersRow();
        ImGuiListClipper clip;
        clip.Begin(int(b.rows.size()));
        while (clip.Step())
            for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) draw_row(b, size_t(i), spans);
        ImGui::EndTable();
    }
}

}  // namespace

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
    draw_file_row(ctl, s);
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
    // The workspace's recipe picker itself: a batch runs the workspace's recipe as its settings.
    if (running || paused) ImGui::BeginDisabled();
    if (ImGui::CollapsingHeader(s.ws.recipe.active() ? "Recipe (on)###batch recipe" : "Recipe###batch recipe"))
        draw_recipe_settings(ctl);
    if (running || paused) ImGui::EndDisabled();
    if (b.total > 0 && (running || paused || b.phase == BatchPhase::Done)) draw_batch_progress(b, paused);
    ImGui::TextDisabled("results go to the history; resuming skips rows already done");
    if (!b.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", b.error.c_str());
    draw_rows_table(b);
    ImGui::End();
}

}  // namespace t5s::ui
