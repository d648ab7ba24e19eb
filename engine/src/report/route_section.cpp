#include "report/route_section.h"

#include <algorithm>
#include <map>

#include "report/bar_chart.h"

namespace t5s::report {

namespace {

// Candidates per route, most first, then by name (a stable order for the bars and the table).
std::vector<std::pair<std::string, int64_t>> count_routes(const std::vector<std::string>& routes) {
    std::map<std::string, int64_t> n;
    for (const auto& r : routes) ++n[r.empty() ? kRouteNone : r];
    std::vector<std::pair<std::string, int64_t>> out(n.begin(), n.end());
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

// The mean of score `s` over the candidates of `route` that have it; "-" when none has.
std::string route_mean(const ReportInput& input, size_t s, const std::string& route) {
    double sum = 0;
    int64_t n = 0;
    const auto& values = input.score_values[s];
    for (size_t i = 0; i < values.size() && i < input.candidate_routes.size(); ++i) {
        const std::string& r = input.candidate_routes[i].empty() ? std::string(kRouteNone) : input.candidate_routes[i];
        if (r == route && values[i]) sum += *values[i], ++n;
    }
    return n ? report_number(sum / static_cast<double>(n)) : "-";
}

// Text for a table cell: '|' escaped.
std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

}  // namespace

void add_route_section(const ReportInput& input, Report* report) {
    const bool any =
        std::any_of(input.candidate_routes.begin(), input.candidate_routes.end(), [](const auto& r) { return !r.empty(); });
    if (!any) return;
    report->candidates_by_route = count_routes(input.candidate_routes);
    const std::string file = "plots/candidates_per_route.png";
    std::string md = "\n## Candidates per route\n\n" + std::to_string(input.candidate_routes.size()) + " candidates, " +
                     std::to_string(report->candidates_by_route.size()) +
                     " routes (the recipe steps that made a candidate). Bars: candidates per route, in the table's order; "
                     "the means are over the candidates that have the score.\n\n![candidates per route](" +
                     file + ")\n\n| route | candidates";
    std::string rule = "|---|---";
    for (const auto& name : input.score_names) md += " | mean " + name, rule += "|---";
    md += " |\n" + rule + "|\n";
    std::vector<int64_t> counts;
    for (const auto& [route, n] : report->candidates_by_route) {
        md += "| " + cell(route) + " | " + std::to_string(n);
        for (size_t s = 0; s < input.score_names.size() && s < input.score_values.size(); ++s)
            md += " | " + route_mean(input, s, route);
        md += " |\n";
        counts.push_back(n);
    }
    report->markdown += md;
    report->plots.push_back({file, draw_bar_chart(counts)});
}

}  // namespace t5s::report
