// Training: model folder + data file + output folder, a preset (Quick / Balanced / Thorough) that fills
// the hyperparameters ("Advanced" edits them), the memory estimate and one Start button. While it
// runs: train/eval loss chart, lr, tokens/s, step/total, epoch, ETA, memory, the latest sample
// generations; pause / resume / stop. Afterwards "Use this model" loads the final folder.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "line_chart.h"
#include "panels.h"
#include "t5s/training_fields.h"
#include "time_text.h"

namespace t5s::ui {

namespace {

std::string format_duration(double s) {
    if (s < 0) return "?";
    char buf[48];
    const long long t = static_cast<long long>(s + 0.5);
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%lldh %02lldm", t / 3600, (t / 60) % 60);
    else if (t >= 60) std::snprintf(buf, sizeof buf, "%lldm %02llds", t / 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%llds", t);
    return buf;
}

// A training option's widget range, from its row of the field table (t5s/training_fields.h).
struct WidgetRange {
    int lo, hi;
};
WidgetRange widget_range(const char* json) {
    const TrainingField* f = find_training_field(json);
    return {static_cast<int>(f->ui_min), static_cast<int>(f->ui_max)};
}

void draw_advanced(TrainingVm& t) {
    auto& o = t.options;
    const float w = 160;
    int steps = int(o.steps);
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("steps (0 = from epochs)", &steps)) o.steps = std::max(0, steps);
    ImGui::SetNextItemWidth(w);
    if (o.steps > 0) ImGui::BeginDisabled();
    ImGui::InputDouble("epochs", &o.epochs, 0.5, 1.0, "%.2f");
    if (o.steps > 0) ImGui::EndDisabled();
    o.epochs = std::max(0.01, o.epochs);
    ImGui::SetNextItemWidth(w);
    const WidgetRange batch = widget_range("batch_size"), accum = widget_range("grad_accum");
    if (ImGui::InputInt("batch size", &o.batch_size)) o.batch_size = std::clamp(o.batch_size, batch.lo, batch.hi);
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("grad accumulation", &o.grad_accum)) o.grad_accum = std::clamp(o.grad_accum, accum.lo, accum.hi);
    ImGui::SetNextItemWidth(w);
    ImGui::InputDouble("learning rate", &o.lr, 0, 0, "%.2e");
    help_marker("peak learning rate; -1 = the optimizer's default (5e-4 AdamW, relative step Adafactor)");
    ImGui::SetNextItemWidth(w);
    enum_combo("optimizer", &o.optimizer);
    ImGui::SetNextItemWidth(w);
    enum_combo("schedule", &o.schedule);
    int warmup = int(o.warmup_steps);
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("warmup steps", &warmup)) o.warmup_steps = std::max(0, warmup);
    ImGui::SetNextItemWidth(w);
    enum_combo("precision", &o.precision, {Precision::Int8});  // int8 is inference-only
    help_marker("bf16 and fp16 autocast (the weights stay fp32); fp16 runs on CUDA only");
    ImGui::Checkbox("gradient checkpointing", &o.gradient_checkpointing);
    help_marker("recompute each block in backward: less activation memory, about a third slower");
    int eval_every = int(o.eval_every), save_every = int(o.save_every);
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("eval every (steps)", &eval_every)) o.eval_every = std::max(0, eval_every);
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("save every (steps)", &save_every)) o.save_every = std::max(0, save_every);
    ImGui::SetNextItemWidth(w);
    const WidgetRange source = widget_range("max_source_len"), target = widget_range("max_target_len");
    ImGui::SliderInt("max source tokens", &o.max_source_len, source.lo, source.hi);
    ImGui::SetNextItemWidth(w);
    ImGui::SliderInt("max target tokens", &o.max_target_len, target.lo, target.hi);
    ImGui::Checkbox("unload the open model while training", &t.unload_model);
    help_marker("frees its memory for training; the workspace needs the model loaded again afterwards");
}

// A past run's curve: train and eval loss by step (series cached in the view model).
void draw_run_curve(TrainingVm::RunCurve& c, const StoredTrainingRun& run) {
    if (c.run != run.id || c.points != run.points.size()) {
        // At most ~2000 train points (long runs record every step); every eval point is kept.
        const size_t stride = std::max<size_t>(1, run.points.size() / 2000);
        c.train = RingSeries(run.points.size() / stride + 2);
        c.eval = RingSeries(run.points.size() + 1);
        for (size_t i = 0; i < run.points.size(); ++i) {
            const auto& p = run.points[i];
            if (p.loss >= 0 && (i % stride == 0 || i + 1 == run.points.size())) c.train.push(double(p.step), p.loss);
            if (p.eval_loss >= 0) c.eval.push(double(p.step), p.eval_loss);
        }
        c.last_step = run.points.empty() ? 1.0 : double(run.points.back().step);
        c.run = run.id;
        c.points = run.points.size();
    }
    ImGui::TextDisabled("run %lld: loss by step", static_cast<long long>(run.id));
    draw_line_chart("run curve",
                    {{&c.train, "train loss", IM_COL32(90, 170, 255, 255)}, {&c.eval, "eval loss", IM_COL32(240, 160, 80, 255)}},
                    Unit::Plain, c.last_step, std::max(1.0, c.last_step * 1.02), 150.0f, XAxis::Absolute);
}

// What the buttons of the past-runs table asked for this frame (0 = nothing).
struct RunActions {
    int64_t continue_run = 0, use = 0, forget = 0;
};

void draw_run_row(Controller& ctl, TrainingVm& t, const StoredTrainingRun& r, RunActions& a) {
    ImGui::PushID(static_cast<int>(r.id));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool selected = t.selected_run == r.id;
    if (ImGui::Selectable(local_time_text(r.started_at_ms, "%Y-%m-%d %H:%M").c_str(), selected,
                          ImGuiSelectableFlags_SpanAllColumns))
        t.selected_run = selected ? 0 : r.id;
    ImGui::TableNextColumn();
    const std::string& oj = r.options_json;  // as training_options_to_json writes it (no spaces)
    const bool adapter_run =
        oj.find("\"lora\":true") != std::string::npos ||
        (oj.find("\"adapter_dir\":\"") != std::string::npos && oj.find("\"adapter_dir\":\"\"") == std::string::npos);
    const std::string name = std::filesystem::path(r.model).filename().string();
    ImGui::TextUnformatted(adapter_run ? (name + " + LoRA").c_str() : name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s\n-> %s", r.model.c_str(), r.data.c_str(), r.out_dir.c_str());
    ImGui::TableNextColumn();
    const bool interrupted = ctl.run_interrupted(r);
    if (interrupted) ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "interrupted");
    else if (r.status == "failed") ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "failed");
    else ImGui::TextUnformatted(r.status.c_str());
    if (!r.message.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.message.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld / %lld", static_cast<long long>(r.steps), static_cast<long long>(r.total_steps));
    ImGui::TableNextColumn();
    ImGui::Text("%s / %s", r.last_loss >= 0 ? format_value(r.last_loss, Unit::Plain).c_str() : "-",
                r.best_eval_loss >= 0 ? format_value(r.best_eval_loss, Unit::Plain).c_str() : "-");
    ImGui::TableNextColumn();
    const bool can_continue =
        !t.job && (interrupted || r.status == "stopped" || r.status == "time_limit" || r.status == "failed");
    if (can_continue && ImGui::SmallButton("continue")) a.continue_run = r.id;
    if (!r.final_dir.empty()) {
        if (can_continue) ImGui::SameLine();
        if (ImGui::SmallButton("use")) a.use = r.id;
    }
    if (!(t.job && r.id == t.run_id)) {
        ImGui::SameLine();
        if (ImGui::SmallButton("forget")) a.forget = r.id;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("removes the record; the run's folder stays on disk");
    }
    ImGui::PopID();
}

void draw_past_runs(Controller& ctl) {
    auto& t = ctl.state().train;
    if (t.runs_stale) ctl.refresh_training_runs();
    if (t.runs.empty()) {
        ImGui::TextDisabled(t.runs_job ? "loading..." : "no training runs recorded yet");
        return;
    }
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    RunActions actions;
    if (ImGui::BeginTable("runs", 6, flags, ImVec2(0, 160))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("started");
        ImGui::TableSetupColumn("model / data");
        ImGui::TableSetupColumn("status");
        ImGui::TableSetupColumn("steps");
        ImGui::TableSetupColumn("loss / best eval");
        ImGui::TableSetupColumn("");
        ImGui::TableHeadersRow();
        for (const auto& r : t.runs) draw_run_row(ctl, t, r, actions);
        ImGui::EndTable();
    }
    if (actions.continue_run) ctl.continue_training_run(actions.continue_run);
    if (actions.use) ctl.use_run_model(actions.use);
    if (actions.forget) ctl.delete_training_run(actions.forget);
    for (const auto& r : t.runs)
        if (r.id == t.selected_run) draw_run_curve(t.curve, r);
    if (ImGui::SmallButton("refresh")) ctl.refresh_training_runs();
}

// The run's inputs: model, data, output folder, preset and the advanced options.
void draw_run_setup(Controller& ctl, TrainingVm& t, bool focus, bool active) {
    auto& s = ctl.state();
    ImGui::SetNextItemWidth(-120);
    ImGui::InputTextWithHint("model folder", "HF checkpoint folder to fine-tune", &t.model_dir);
    if (s.model.info && t.model_dir != s.model.info->dir.string()) {
        ImGui::SameLine();
        if (ImGui::SmallButton("open one")) t.model_dir = s.model.info->dir.string();
    }
    ImGui::SetNextItemWidth(-120);
    if (focus && !active) ImGui::SetKeyboardFocusHere();  // the model folder is usually filled already
    if (ImGui::InputTextWithHint("data file", "pairs: .jsonl / .csv / .tsv with source + target (Enter starts)", &t.data_file,
                                 ImGuiInputTextFlags_EnterReturnsTrue))
        ctl.start_training();
    ImGui::Checkbox("+ accepted pairs from the history", &t.data_from_history);
    help_marker(
        "the accepted and edited candidates of the annotators' history become training pairs "
        "(written to the output folder as history-pairs.jsonl); with a data file they are added to it");
    ImGui::SetNextItemWidth(-120);
    ImGui::InputTextWithHint("output folder", "checkpoints and the final model", &t.out_dir);
    ImGui::SetNextItemWidth(160);
    if (ImGui::Combo("preset", &t.preset, "Quick\0Balanced\0Thorough\0LoRA (low memory)\0")) ctl.apply_training_preset(t.preset);
    ImGui::SameLine();
    const auto& o = t.options;
    if (o.steps > 0)
        ImGui::TextDisabled("%lld steps, batch %d x %d, lr %.1e, %s", static_cast<long long>(o.steps), o.batch_size, o.grad_accum,
                            o.lr, to_string(o.schedule));
    else
        ImGui::TextDisabled("%.1f epochs, batch %d x %d, lr %.1e, %s", o.epochs, o.batch_size, o.grad_accum, o.lr,
                            to_string(o.schedule));
    if (ImGui::CollapsingHeader("Advanced")) draw_advanced(t);
}

// Start / pause / resume / stop, "use this model" when done, and the last error.
void draw_run_controls(Controller& ctl, const TrainingVm& t, bool active) {
    if (!active) {
        if (ImGui::Button("Start training")) ctl.start_training();
    } else {
        if (t.phase == TrainPhase::Running && ImGui::Button("Pause")) ctl.pause_training();
        if (t.phase == TrainPhase::Paused && ImGui::Button("Resume")) ctl.resume_training();
        ImGui::SameLine();
        if (ImGui::Button("Stop")) ctl.stop_training();
        help_marker("stops at the next batch, saves a checkpoint and writes the final model");
    }
    if (t.phase == TrainPhase::Done && !t.final_dir.empty()) {
        ImGui::SameLine();
        if (ImGui::Button("Use this model")) ctl.use_trained_model();
        ImGui::SameLine();
        ImGui::TextDisabled("%s (%s)", t.final_dir.c_str(), t.stop_reason.c_str());
    }
    if (!t.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", t.error.c_str());
}

// The running (or last) run: progress, live figures and the loss chart.
void draw_run_progress(TrainingVm& t) {
    const float frac = t.total_steps > 0 ? float(double(t.step) / double(t.total_steps)) : 0.0f;
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "step %lld / %lld%s", static_cast<long long>(t.step),
                  static_cast<long long>(t.total_steps), t.phase == TrainPhase::Paused ? " (paused)" : "");
    ImGui::ProgressBar(frac, ImVec2(-1, 0), overlay);
    ImGui::Text("epoch %.2f   loss %s   eval %s (best %s)   lr %.2e", t.epoch,
                t.loss >= 0 ? format_value(t.loss, Unit::Plain).c_str() : "-",
                t.eval >= 0 ? format_value(t.eval, Unit::Plain).c_str() : "-",
                t.best_eval >= 0 ? format_value(t.best_eval, Unit::Plain).c_str() : "-", t.lr);
    ImGui::Text("%.0f tokens/s   elapsed %s   ETA %s   memory %s (peak %s)   batch %d x %d", t.tokens_per_s,
                format_duration(t.elapsed_s).c_str(), t.job ? format_duration(t.eta_s).c_str() : "-",
                human_bytes(double(t.memory_bytes)).c_str(), human_bytes(double(t.peak_memory_bytes)).c_str(), t.batch_size,
                t.grad_accum);
    const double window = std::max(10.0, t.elapsed_s * 1.02);
    draw_line_chart(
        "loss",
        {{&t.train_loss, "train loss", IM_COL32(90, 170, 255, 255)}, {&t.eval_loss, "eval loss", IM_COL32(240, 160, 80, 255)}},
        Unit::Plain, t.elapsed_s, window, 180.0f);
    if (!t.last_checkpoint.empty()) ImGui::TextDisabled("last checkpoint: %s", t.last_checkpoint.c_str());
}

void draw_samples(const TrainingVm& t) {
    ImGui::TextUnformatted("Samples (latest eval)");
    ImGui::BeginChild("samples", ImVec2(0, 0), true);
    for (const auto& g : t.samples) {
        ImGui::TextWrapped("in:   %s", g.source.c_str());
        ImGui::TextColored(ImVec4(0.6f, 0.85f, 0.6f, 1), "ref:  %s", g.reference.c_str());
        ImGui::TextColored(ImVec4(0.6f, 0.75f, 1.0f, 1), "out:  %s", g.prediction.c_str());
        ImGui::Separator();
    }
    ImGui::EndChild();
}

}  // namespace

void draw_training_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& t = ctl.state().train;
    if (!t.open) return;
    place_window(ctx, {0.25f, 0.0f, 0.45f, 1.0f});  // over the workspace: opaque
    ImGui::SetNextWindowBgAlpha(1.0f);
    const bool focus = t.focus;
    if (focus) {
        ImGui::SetNextWindowFocus();
        t.focus = false;
    }
    if (!ImGui::Begin(kTrainingPanel, &t.open)) {
        ImGui::End();
        return;
    }
    const bool active = t.job != 0;
    if (active) ImGui::BeginDisabled();
    draw_run_setup(ctl, t, focus, active);
    if (active) ImGui::EndDisabled();
    if (!t.estimate.empty()) ImGui::TextWrapped("%s", t.estimate.c_str());
    else ImGui::TextDisabled("memory: estimated when the run starts");
    draw_run_controls(ctl, t, active);
    if (t.phase != TrainPhase::Idle) draw_run_progress(t);
    if (!t.report.empty() && ImGui::CollapsingHeader("Data report")) ImGui::TextUnformatted(t.report.c_str());
    if (t.show_past_runs) {
        ImGui::SetNextItemOpen(true);
        t.show_past_runs = false;
    }
    if (ImGui::CollapsingHeader("Past runs")) draw_past_runs(ctl);
    if (!t.samples.empty()) draw_samples(t);
    ImGui::End();
}

}  // namespace t5s::ui
