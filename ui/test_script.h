#pragma once
// The app's test mode: a script of keyboard actions and checks, replayed frame by frame.
//   frames N                 run N frames
//   key CHORD                press and release, e.g. "ctrl+enter", "a", "shift+enter", "f1", "down"
//   type TEXT                UTF-8 characters to the focused text field (rest of the line; \n = newline)
//   wait_idle [SECONDS]      until no job runs (default 60 s; failure if it times out)
//   wait_model [SECONDS]     until a model is loaded
//   screenshot NAME [PANEL]  PNG of the window, or of one panel ("Workspace", "Model", ...)
//   expect_export FILE       FILE holds exactly the accepted/edited pairs made in this session
//   expect_candidates N      the workspace shows >= N candidates
//   log TEXT                 print a line
//   fill_history N           add N synthetic generations to the history (background thread; for
//                            measuring frame time while exporting a large history)
//   export_all FILE          export everything (not only accepted) to FILE, overwriting
//   train_history STEPS DIR  fine-tune the open model on the history's accepted pairs (Training panel)
//   show_past_runs           open the panel's "Past runs" section with the last run selected
//   expect_training_run N    the last run is listed from the history as completed with N points
//   expect_error TEXT        within 60 s, an error shown in a panel or the log contains TEXT (files the
//                            app cannot use: the message is on screen and the app keeps running)
// Lines starting with # and blank lines are skipped.
#include <optional>
#include <string>
#include <vector>

#include "keymap.h"

namespace t5s::ui {

struct ScriptStep {
    int line = 0;
    std::string op;
    std::string arg;   // the rest of the line (trimmed)
};

// Throws std::runtime_error("script:LINE: problem") on an unknown op.
std::vector<ScriptStep> parse_script(const std::string& text);
// "ctrl+shift+e" -> chord; nullopt if a part is unknown.
std::optional<KeyChord> parse_chord(const std::string& text);

// (source, target) pairs from an export file (JSONL with source/target, or CSV/TSV with a header).
std::vector<std::pair<std::string, std::string>> read_exported_pairs(const std::string& path);

// p50 / p99 / max of frame times in ms.
struct FrameStats {
    size_t frames = 0;
    double p50 = 0, p99 = 0, max = 0;
};
FrameStats frame_stats(std::vector<double> ms);

}  // namespace t5s::ui
