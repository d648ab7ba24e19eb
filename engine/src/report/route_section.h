#pragma once
// The "Candidates per route" section of a report: how many candidates each recipe route made (a
// table in the order of the bars of its plot) and each route's mean scores.
#include <string>

#include "t5s/score_report.h"

namespace t5s::report {

// Fills report->candidates_by_route and appends the section and its plot; nothing without routes.
void add_route_section(const ReportInput& input, Report* report);

}  // namespace t5s::report
