#pragma once
// The workspace's recipe widgets: the picker in Generation settings (None, the shipped recipes, a
// file by its path), the editor (the JSON text checked as it is typed, the parser's one-line
// message, Save as...), and a candidate's route tag with its legs on hover. The batch panel draws
// the same picker: a batch runs the workspace's recipe, as it runs the workspace's settings.
#include "controller.h"

namespace t5s::ui {

void draw_recipe_settings(Controller& ctl);
// "pivot > back" on the candidate's line when it came through a recipe; hovering lists each step's text.
void draw_route_tag(const CandidateVm& c);
void draw_route_tag(const Route& route);  // the same for a route alone (the batch panel's rows)

}  // namespace t5s::ui
