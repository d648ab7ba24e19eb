#pragma once
// What the desktop app opens with: t5studio's own flags, read by app/desktop/desktop_flags.cpp
// (the CLI's flag machinery), so the UI itself never parses a command line.
#include <string>

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

}  // namespace t5s::ui
