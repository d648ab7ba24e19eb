// Model panel: path field, recent list, drag-and-drop (handled by the window), a small folder
// browser (listing runs on the engine's io lane), device / precision, model info.
#include <cstdio>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "kernel_rows.h"
#include "panels.h"

namespace t5s::ui {

namespace {

void draw_browser(Controller& ctl) {
    auto& m = ctl.state().model;
    if (ImGui::Button("Up")) ctl.browse(std::filesystem::path(m.browser_dir).parent_path().string());
    ImGui::SameLine();
    ImGui::TextWrapped("%s", m.browser_dir.c_str());
    if (!m.browser_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", m.browser_error.c_str());
    ImGui::BeginChild("browser", ImVec2(0, 110), true);
    for (const auto& e : m.browser_entries) {
        if (!e.is_dir) continue;
        const std::string label = (e.is_model_dir ? "[model] " : "") + e.name + "/";
        if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
            const std::string full = (std::filesystem::path(m.browser_dir) / e.name).string();
            if (e.is_model_dir) {
                m.path_input = full;
                if (ImGui::IsMouseDoubleClicked(0)) ctl.load_model();
            } else {
                ctl.browse(full);
            }
        }
    }
    ImGui::EndChild();
}

void draw_info(Controller& ctl, const ModelVm& m) {
    if (!m.info) {
        ImGui::TextDisabled("No model loaded. Type a folder, drop one on the window, or browse.");
        if (ImGui::Button("Get a model...")) ctl.perform(Action::OpenModels);  // the Models window
        action_tooltip(ctl.keymap(), Action::OpenModels);
        return;
    }
    const auto& i = *m.info;
    if (ImGui::BeginTable("info", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
        auto row = [](const char* k, const std::string& v) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(k);
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", v.c_str());
        };
        row("folder", i.dir.string());
        row("type", i.model_type + " - " + i.variant);
        row("parameters", human_count(double(i.parameter_count)));
        row("weights", human_bytes(double(i.weight_bytes)) + " as " + i.precision + " (stored " + i.stored_dtype + ")");
        row("device", i.device + ", " + std::to_string(i.threads) + " threads");
        if (!m.recommended.empty()) row("recommended", m.recommended);
        row("shape", "d_model " + std::to_string(i.config.d_model) + ", layers " + std::to_string(i.config.num_layers) + "/" +
                         std::to_string(i.config.num_decoder_layers) + ", heads " + std::to_string(i.config.num_heads) +
                         ", d_ff " + std::to_string(i.config.d_ff));
        row("vocabulary", std::to_string(i.tokenizer_vocab) + " (embedding " + std::to_string(i.config.vocab_size) + ")");
        for (const auto& [label, value] : cpu_kernel_rows(i)) row(label.c_str(), value);
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.0f ms", m.load_ms);
        row("load time", ms);
        ImGui::EndTable();
    }
}

// The embedding model behind the similarity score: path, load / unload, recent, one info line.
void draw_embedder(Controller& ctl) {
    auto& m = ctl.state().model;
    if (!ImGui::CollapsingHeader("Embedding model", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const bool busy = m.embedder_job != 0;
    ImGui::SetNextItemWidth(-140);
    if (ImGui::InputTextWithHint("##embedder", "sentence-transformers folder (modules.json)", &m.embedder_input,
                                 ImGuiInputTextFlags_EnterReturnsTrue) &&
        !busy)
        ctl.load_embedder();
    ImGui::SameLine();
    if (busy) ImGui::BeginDisabled();
    if (ImGui::Button(busy ? "Loading##emb" : "Load##emb")) ctl.load_embedder();
    ImGui::SameLine();
    if (!m.embedder) ImGui::BeginDisabled();
    if (ImGui::Button("Unload##emb")) ctl.unload_embedder();
    if (!m.embedder) ImGui::EndDisabled();
    if (busy) ImGui::EndDisabled();
    help_marker(
        "A sentence-transformers model (BERT or XLM-R encoder; mean, CLS or max pooling; Dense and Normalize)\n"
        "scores how well each candidate keeps its source's meaning (cosine similarity).\n"
        "It runs on the device and precision chosen above.");
    if (!m.embedder_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", m.embedder_error.c_str());
    if (m.embedder) {
        const auto& e = *m.embedder;
        char line[256];
        std::snprintf(line, sizeof line, "%s, %s pooling%s%s, dim %d, max %d tokens, %s on %s, %.0f ms", e.architecture.c_str(),
                      e.pooling.c_str(), e.dense_layers ? " + Dense" : "", e.normalize ? " + Normalize" : "", e.dim,
                      e.max_seq_length, e.precision.c_str(), e.device.c_str(), m.embedder_load_ms);
        ImGui::TextWrapped("%s", line);
    } else {
        ImGui::TextDisabled("No embedding model: similarity scores are off.");
    }
    for (const auto& r : m.recent_embedders) {
        const bool current = m.embedder && m.embedder->dir.string() == r;
        if (ImGui::Selectable((r + "##emb_recent").c_str(), current, ImGuiSelectableFlags_AllowDoubleClick)) {
            m.embedder_input = r;
            if (ImGui::IsMouseDoubleClicked(0) && !busy) ctl.load_embedder();
        }
    }
}

// LoRA adapters of the loaded base: "none" plus every folder added for it; a click applies one at the
// next request without reloading the base.
void draw_adapters(Controller& ctl) {
    auto& m = ctl.state().model;
    if (!m.info || !ImGui::CollapsingHeader("Adapters (LoRA)", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const bool busy = m.adapter_job != 0;
    if (busy) ImGui::BeginDisabled();
    if (ImGui::RadioButton("none (base model)", m.active_adapter.empty()) && !m.active_adapter.empty()) ctl.use_adapter("");
    for (const auto& a : m.adapters[m.info->dir.string()]) {
        if (ImGui::RadioButton(a.c_str(), m.active_adapter == a) && m.active_adapter != a) ctl.use_adapter(a);
    }
    ImGui::SetNextItemWidth(-70);
    if (ImGui::InputTextWithHint("##adapter", "adapter folder (adapter_config.json, adapter_model.safetensors)", &m.adapter_input,
                                 ImGuiInputTextFlags_EnterReturnsTrue))
        ctl.add_adapter();
    ImGui::SameLine();
    if (ImGui::Button("Add")) ctl.add_adapter();
    if (busy) ImGui::EndDisabled();
    help_marker(
        "PEFT LoRA adapters made for this base (t5studio train --lora, or peft's save_pretrained).\n"
        "Switching applies at the next request; the base stays loaded.");
    if (!m.adapter_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", m.adapter_error.c_str());
}

}  // namespace

void draw_model_panel(PanelContext& ctx) {
    Controller& ctl = ctx.ctl;
    auto& s = ctl.state();
    auto& m = s.model;
    place_window(ctx, {0.0f, 0.0f, 0.25f, 0.50f});
    if (!ImGui::Begin(kModelPanel)) {
        ImGui::End();
        return;
    }
    const bool busy = m.load_job != 0;
    if (s.focus_model_path) {
        ImGui::SetKeyboardFocusHere();
        s.focus_model_path = false;
    }
    ImGui::SetNextItemWidth(-70);
    if (ImGui::InputTextWithHint("##path", "model folder (config.json, model.safetensors, spiece.model)", &m.path_input,
                                 ImGuiInputTextFlags_EnterReturnsTrue) &&
        !busy)
        ctl.load_model();
    action_tooltip(ctl.keymap(), Action::OpenModel);
    ImGui::SameLine();
    if (busy) ImGui::BeginDisabled();
    if (ImGui::Button(busy ? "Loading" : "Load")) ctl.load_model();
    if (busy) ImGui::EndDisabled();

    ImGui::SetNextItemWidth(90);
    enum_combo("device", &m.device);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    enum_combo("precision", &m.precision);
    help_marker(
        "CPU: fp32 is exact, bf16 halves memory, int8 quantises the linear layers.\n"
        "CUDA: bf16 (or fp16 with fp32 feed-forward outputs) is the measured default.");
    ImGui::SetNextItemWidth(90);
    ImGui::InputInt("threads (0 = cores)", &m.threads);
    if (m.threads < 0) m.threads = 0;
    if (!m.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", m.error.c_str());

    if (!m.recent.empty() && ImGui::CollapsingHeader("Recent", ImGuiTreeNodeFlags_DefaultOpen)) {
        for (const auto& r : m.recent) {
            if (ImGui::Selectable(r.c_str(), m.info && m.info->dir.string() == r, ImGuiSelectableFlags_AllowDoubleClick)) {
                m.path_input = r;
                if (ImGui::IsMouseDoubleClicked(0) && !busy) ctl.load_model();
            }
        }
    }
    if (ImGui::CollapsingHeader("Browse")) {
        if (m.browser_dir.empty() && !m.browser_job) {
            std::filesystem::path start = m.path_input.empty() ? std::filesystem::path(".") : std::filesystem::path(m.path_input);
            ctl.browse(std::filesystem::absolute(start).lexically_normal().string());
        }
        draw_browser(ctl);
    }
    draw_adapters(ctl);
    ImGui::Separator();
    draw_info(ctl, m);
    ImGui::Separator();
    draw_embedder(ctl);
    ImGui::End();
}

}  // namespace t5s::ui
