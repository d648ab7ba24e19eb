#pragma once
// What the app remembers between runs, as JSON in $XDG_CONFIG_HOME/t5studio/settings.json
// (~/.config/t5studio), next to the ImGui layout. Reading is tolerant: a missing or malformed
// file gives defaults and a message, never a crash.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "t5s/generation_options.h"
#include "t5s/learning.h"
#include "t5s/model.h"

namespace t5s::ui {

struct UiState;

struct AppSettings {
    float dpi_scale = 1.0f;
    std::vector<std::string> recent_models;
    std::map<std::string, std::string> task_prefix;  // per model path
    std::string last_model;
    std::vector<std::string> recent_embedders;
    std::string last_embedder;                                 // filled into the embedder field, not loaded at start
    std::map<std::string, std::vector<std::string>> adapters;  // LoRA adapters listed per base model path
    Device device = Device::Auto;                              // stored by name; files before names held the combo index
    Precision precision = Precision::Fp32;
    GenerationOptions options;
    bool random_seed = true;
    std::string export_path;
    std::string batch_path;
    int per_row = 3;
    bool learn_enabled = false;                  // "learn from my decisions"
    LearningRoundSettings learn;                 // the rounds' settings; settings.json keeps "every", "max_steps" and "lr"
    std::vector<std::string> recent_recipes;     // recipe files opened or saved, most recent first
    std::vector<std::string> pending_downloads;  // "ORG/NAME@REV" not finished at exit: resumable
    std::string imgui_ini;                       // ImGui window layout (SaveIniSettingsToMemory)
};

// A learning option's value inside the app's range for it, from its row of the field table
// (t5s/training_fields.h: "lr", "min_new_pairs", "max_steps"; `every` uses min_new_pairs' range).
double clamp_learning_option(const char* json, double value);

std::filesystem::path config_dir();  // $XDG_CONFIG_HOME/t5studio or ~/.config/t5studio
std::filesystem::path data_dir();    // $XDG_DATA_HOME/t5studio or ~/.local/share/t5studio

std::string settings_to_json(const AppSettings& s);
AppSettings settings_from_json(const std::string& json, std::string* warning);

void capture_settings(const UiState& state, AppSettings& s);  // view-models -> settings
void restore_settings(const AppSettings& s, UiState& state);  // settings -> view-models

}  // namespace t5s::ui
