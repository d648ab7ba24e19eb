#pragma once
// The workspace's "Advanced decoding" section (every generation field the panel's own controls do
// not show, from the field table, each marked live or not) and its "Paste settings" box. The
// rows and their controls come from decoding_view.h; these only draw them.
#include "controller.h"

namespace t5s::ui {

void draw_advanced_decoding(Controller& ctl);
void draw_paste_settings(Controller& ctl);

}  // namespace t5s::ui
