#pragma once
// Small ImGui helpers shared by the panels.
#include <string>
#include <vector>

#include "controller.h"
#include "span_view.h"
#include "text_diff.h"

namespace t5s::ui {

// Everything a panel needs besides the view-models.
struct PanelContext {
    Controller& ctl;
    bool reset_layout = false;   // place the window at its default rect this frame
    float width = 1600, height = 1000;  // display size (for default layout)
    float menu_height = 20;
};

// Default rect of a panel, as fractions of the display below the menu bar: x, y, w, h.
struct PanelRect { float x, y, w, h; };
void place_window(const PanelContext& ctx, PanelRect r);

void action_tooltip(const Keymap& keys, Action action);                        // on the last item
bool action_button(Controller& ctl, const char* label, Action action, bool enabled = true);  // button + key tooltip
void help_marker(const char* text);
// Source -> candidate diff with inserted characters highlighted and deleted ones struck through.
void draw_diff(const std::vector<DiffSegment>& diff, float wrap_width, bool show_deleted);
// The same with protected spans (span_view.h's mark_spans over the diff): each span on a background
// of its label's colour, the label as a small tag after it, "label: text" in a tooltip on hover.
void draw_marked_text(const std::vector<MarkedRun>& runs, const std::vector<Span>& spans, float wrap_width, bool show_deleted);
std::string human_bytes(double bytes);
std::string human_count(double n);

}  // namespace t5s::ui
