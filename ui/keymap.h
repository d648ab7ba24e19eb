#pragma once
// Every user action and its key. Keys are GLFW key codes (the ImGui 1.86 GLFW backend indexes
// io.KeysDown with them). Letter keys only fire when no text field has keyboard focus.
#include <optional>
#include <string>
#include <vector>

namespace t5s::ui {

enum class Action {
    Generate,
    CancelJob,
    Accept,
    Reject,
    Edit,
    Undo,
    Redo,
    AcceptAndNext,
    NextRow,
    PrevRow,
    SelectNext,
    SelectPrev,
    Select1,
    Select2,
    Select3,
    Select4,
    Select5,
    Select6,
    Select7,
    Select8,
    Select9,
    ToggleHelp,
    OpenExport,
    OpenModel,
    OpenBatch,
    FocusSource,
    FocusHistorySearch,
    SendToInput,
    RestartEngine,
    ResetLayout,
    ZoomIn,
    ZoomOut,
    ReviewQueue,
    OpenTraining,
    OpenModels,
    OpenLearning,
    ProtectSelection,
};

struct KeyChord {
    int key = 0;  // GLFW_KEY_*
    bool ctrl = false;
    bool shift = false;
    bool alt = false;
    bool operator==(const KeyChord& o) const { return key == o.key && ctrl == o.ctrl && shift == o.shift && alt == o.alt; }
};

struct Binding {
    Action action;
    KeyChord chord;
    const char* name;         // short label for buttons ("Accept")
    const char* description;  // one line for F1 help and tooltips
};

class Keymap {
public:
    Keymap();  // default bindings
    const std::vector<Binding>& bindings() const { return bindings_; }
    const Binding* find(Action action) const;
    // The action bound to this chord, considering whether a text field has keyboard focus
    // (plain letters/digits/arrows/Enter/Escape then belong to the text field).
    std::optional<Action> match(const KeyChord& chord, bool text_input_active) const;
    // "Ctrl+Enter", "A", "F1" ...
    static std::string chord_label(const KeyChord& chord);
    std::string label(Action action) const;    // chord label of the action ("" if unbound)
    std::string tooltip(Action action) const;  // "Accept the selected candidate  [A]"
    // True when the chord works while typing (has Ctrl/Alt or is a function key).
    static bool works_while_typing(const KeyChord& chord);

private:
    std::vector<Binding> bindings_;
};

}  // namespace t5s::ui
