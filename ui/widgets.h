#pragma once
// Small ImGui helpers shared by the panels.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "controller.h"
#include "span_view.h"
#include "t5s/enum_names.h"
#include "t5s/generation_fields.h"
#include "text_diff.h"

namespace t5s::ui {

// Everything a panel needs besides the view-models.
struct PanelContext {
    Controller& ctl;
    bool reset_layout = false;          // place the window at its default rect this frame
    float width = 1600, height = 1000;  // display size (for default layout)
    float menu_height = 20;
};

// Default rect of a panel, as fractions of the display below the menu bar: x, y, w, h.
struct PanelRect {
    float x, y, w, h;
};
void place_window(const PanelContext& ctx, PanelRect r);

void action_tooltip(const Keymap& keys, Action action);                                      // on the last item
bool action_button(Controller& ctl, const char* label, Action action, bool enabled = true);  // button + key tooltip
void help_marker(const char* text);
// A slider over one generation option whose range comes from the field table (t5s/generation_fields.h).
bool option_slider(const char* label, GenerationOptions& o, float GenerationOptions::*member, const char* format = "%.2f");
bool option_slider(const char* label, GenerationOptions& o, int GenerationOptions::*member, const char* format = "%d");
// The slider range of a generation option (both 0 where the table gives none).
template <class T>
float slider_min(T GenerationOptions::*member) {
    const GenerationField* f = field_of(member);
    return f ? f->ui_min : 0.0f;
}
template <class T>
float slider_max(T GenerationOptions::*member) {
    const GenerationField* f = field_of(member);
    return f ? f->ui_max : 0.0f;
}
// A combo over `names` (the selection is names[*index]); true when the user picked another.
bool names_combo(const char* label, int* index, const std::vector<std::string>& names);
// A combo over the names of E's table (t5s/enum_names.h), leaving out `hidden` values.
template <class E>
bool enum_combo(const char* label, E* value, std::initializer_list<E> hidden = {}) {
    std::vector<std::string> names;
    std::vector<E> values;
    for (const std::string& name : enum_names<E>()) {
        const E v = parse_enum<E>(name);
        if (std::find(hidden.begin(), hidden.end(), v) != hidden.end()) continue;
        names.push_back(name);
        values.push_back(v);
    }
    int index = static_cast<int>(std::find(values.begin(), values.end(), *value) - values.begin());
    if (!names_combo(label, &index, names)) return false;
    *value = values[static_cast<size_t>(index)];
    return true;
}
// Source -> candidate diff with inserted characters highlighted and deleted ones struck through.
void draw_diff(const std::vector<DiffSegment>& diff, float wrap_width, bool show_deleted);
// The same with protected spans (span_view.h's mark_spans over the diff): each span on a background
// of its label's colour, the label as a small tag after it, "label: text" in a tooltip on hover.
void draw_marked_text(const std::vector<MarkedRun>& runs, const std::vector<Span>& spans, float wrap_width, bool show_deleted);
std::string human_bytes(double bytes);
std::string human_count(double n);

}  // namespace t5s::ui
