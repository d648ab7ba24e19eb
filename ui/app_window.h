#pragma once
// The window: GLFW + OpenGL 3 + Dear ImGui, the EngineThread, the controller and the panels.
// One frame: drain events -> apply -> (fonts) -> NewFrame -> keys -> panels -> render.
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;

namespace t5s::ui {

struct AppOptions {
    std::string model;        // open this model folder at start
    std::string adapter;      // with it, this LoRA adapter (--model ADAPTER_FOLDER: model is its base)
    std::string history_db;   // "" = <data dir>/history.db
    std::string config_dir;   // "" = $XDG_CONFIG_HOME/t5studio
    std::string test_script;  // test mode
    std::string screenshot_dir;
    int width = 1600, height = 1000;
    float scale = 0.0f;  // DPI scale override (0 = saved setting)
};

// Parses t5studio's GUI flags; returns false with a message on a bad flag.
bool parse_app_options(int argc, char** argv, AppOptions& out, std::string* error);

int run_app(const AppOptions& options);

}  // namespace t5s::ui
