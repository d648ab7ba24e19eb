#include "keymap.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

namespace t5s::ui {

Keymap::Keymap() {
    auto k = [](int key, bool ctrl = false, bool shift = false, bool alt = false) { return KeyChord{key, ctrl, shift, alt}; };
    bindings_ = {
        {Action::Generate, k(GLFW_KEY_ENTER, true), "Generate", "Generate candidates for the source text"},
        {Action::CancelJob, k(GLFW_KEY_PERIOD, true), "Cancel", "Cancel the running generation"},
        {Action::Accept, k(GLFW_KEY_A), "Accept", "Accept the selected candidate"},
        {Action::Reject, k(GLFW_KEY_R), "Reject", "Reject the selected candidate"},
        {Action::Edit, k(GLFW_KEY_E), "Edit", "Edit the selected candidate in place (Enter saves, Esc cancels)"},
        {Action::Undo, k(GLFW_KEY_Z, true), "Undo", "Undo the last accept / reject / edit"},
        {Action::Redo, k(GLFW_KEY_Y, true), "Redo", "Redo what was undone"},
        {Action::AcceptAndNext, k(GLFW_KEY_ENTER, false, true), "Accept + next",
         "Accept the selected candidate, go to the next row and generate"},
        {Action::NextRow, k(GLFW_KEY_N), "Next row", "Next row of the review queue (generates)"},
        {Action::PrevRow, k(GLFW_KEY_P), "Previous row", "Previous row of the review queue"},
        {Action::SelectNext, k(GLFW_KEY_DOWN), "Down", "Select the next candidate"},
        {Action::SelectPrev, k(GLFW_KEY_UP), "Up", "Select the previous candidate"},
        {Action::Select1, k(GLFW_KEY_1), "1", "Select candidate 1"},
        {Action::Select2, k(GLFW_KEY_2), "2", "Select candidate 2"},
        {Action::Select3, k(GLFW_KEY_3), "3", "Select candidate 3"},
        {Action::Select4, k(GLFW_KEY_4), "4", "Select candidate 4"},
        {Action::Select5, k(GLFW_KEY_5), "5", "Select candidate 5"},
        {Action::Select6, k(GLFW_KEY_6), "6", "Select candidate 6"},
        {Action::Select7, k(GLFW_KEY_7), "7", "Select candidate 7"},
        {Action::Select8, k(GLFW_KEY_8), "8", "Select candidate 8"},
        {Action::Select9, k(GLFW_KEY_9), "9", "Select candidate 9"},
        {Action::ToggleHelp, k(GLFW_KEY_F1), "Help", "Show / hide this list of keys"},
        {Action::OpenExport, k(GLFW_KEY_E, true, true), "Export...", "Open the export dialog"},
        {Action::OpenModel, k(GLFW_KEY_O, true), "Open model", "Focus the model path field"},
        {Action::OpenBatch, k(GLFW_KEY_B, true), "Batch", "Focus the batch augmentation panel"},
        {Action::FocusSource, k(GLFW_KEY_F2), "Source", "Put the keyboard focus in the source text"},
        {Action::ProtectSelection, k(GLFW_KEY_P, true), "Protect selection",
         "Protect the words selected in the source: kept exactly in every candidate, with the mark label"},
        {Action::FocusHistorySearch, k(GLFW_KEY_F, true), "Search history", "Focus the history search field"},
        {Action::SendToInput, k(GLFW_KEY_I, true), "Send to input", "Send the selected history entry back to the source"},
        {Action::RestartEngine, k(GLFW_KEY_F5, true), "Restart engine", "Restart the engine thread (after a crash)"},
        {Action::ResetLayout, k(GLFW_KEY_F12, true), "Reset layout", "Put every panel back in its default place"},
        {Action::ZoomIn, k(GLFW_KEY_EQUAL, true), "Zoom in", "Larger UI (DPI scale +10%)"},
        {Action::ReviewQueue, k(GLFW_KEY_R, true), "Review rows", "Walk the loaded file's rows one by one in the workspace"},
        {Action::ZoomOut, k(GLFW_KEY_MINUS, true), "Zoom out", "Smaller UI (DPI scale -10%)"},
        {Action::OpenTraining, k(GLFW_KEY_T, true), "Training", "Open the training panel (fine-tune a model)"},
        {Action::OpenModels, k(GLFW_KEY_M, true), "Models", "Open the Models window (local models, downloads from the Hub)"},
        {Action::OpenLearning, k(GLFW_KEY_L, true), "Learning",
         "Open the Learning window (adapter versions learned from your decisions)"},
    };
}

const Binding* Keymap::find(Action action) const {
    for (const auto& b : bindings_)
        if (b.action == action) return &b;
    return nullptr;
}

bool Keymap::works_while_typing(const KeyChord& c) { return c.ctrl || c.alt || (c.key >= GLFW_KEY_F1 && c.key <= GLFW_KEY_F25); }

std::optional<Action> Keymap::match(const KeyChord& chord, bool text_input_active) const {
    for (const auto& b : bindings_) {
        if (!(b.chord == chord)) continue;
        if (text_input_active && !works_while_typing(b.chord)) return std::nullopt;
        return b.action;
    }
    return std::nullopt;
}

std::string Keymap::chord_label(const KeyChord& c) {
    std::string s;
    if (c.ctrl) s += "Ctrl+";
    if (c.alt) s += "Alt+";
    if (c.shift) s += "Shift+";
    const int k = c.key;
    if (k >= GLFW_KEY_A && k <= GLFW_KEY_Z) s += char('A' + (k - GLFW_KEY_A));
    else if (k >= GLFW_KEY_0 && k <= GLFW_KEY_9) s += char('0' + (k - GLFW_KEY_0));
    else if (k >= GLFW_KEY_F1 && k <= GLFW_KEY_F25) s += "F" + std::to_string(k - GLFW_KEY_F1 + 1);
    else if (k == GLFW_KEY_ENTER) s += "Enter";
    else if (k == GLFW_KEY_ESCAPE) s += "Esc";
    else if (k == GLFW_KEY_UP) s += "Up";
    else if (k == GLFW_KEY_DOWN) s += "Down";
    else if (k == GLFW_KEY_PERIOD) s += ".";
    else if (k == GLFW_KEY_EQUAL) s += "=";
    else if (k == GLFW_KEY_MINUS) s += "-";
    else s += "key" + std::to_string(k);
    return s;
}

std::string Keymap::label(Action action) const {
    const Binding* b = find(action);
    return b ? chord_label(b->chord) : std::string();
}

std::string Keymap::tooltip(Action action) const {
    const Binding* b = find(action);
    if (!b) return {};
    return std::string(b->description) + "  [" + chord_label(b->chord) + "]";
}

}  // namespace t5s::ui
