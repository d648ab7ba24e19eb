#pragma once
// Score statistics and plots of a set of candidates: per score its count, mean, min, max and
// quartiles and a histogram, and how many candidates each source kept. The dataset card of
// `export --format hf-dataset` and the report of `generate --report` share it. Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t5s/png_image.h"

namespace t5s {

struct ScoreSummary {
    std::string name;
    int64_t count = 0;    // candidates with a value
    int64_t missing = 0;  // candidates without one (not computed)
    // Over the values (count > 0 only); quartiles interpolate linearly between the sorted values
    // (numpy.quantile's default).
    double mean = 0, min = 0, max = 0, q1 = 0, median = 0, q3 = 0;
    // Equal-width bins over [min, max] (numpy.histogram's rule: [min - 0.5, max + 0.5] when they are
    // equal): bin i holds edges[i] <= v < edges[i + 1], the last bin also v == max. Empty when count 0.
    std::vector<double> bin_edges;
    std::vector<int64_t> bin_counts;
};

ScoreSummary summarize_scores(std::string name, const std::vector<std::optional<double>>& values, int bins = 10);

struct ReportInput {
    std::vector<std::string> score_names;                          // e.g. score, similarity, back_score
    std::vector<std::vector<std::optional<double>>> score_values;  // per name: one value per candidate
    std::vector<int64_t> candidates_per_source;                    // per source: its candidates
    // Per candidate (as score_values): its recipe route's steps, route_steps() e.g. "pivot > back";
    // "" = none. Empty, or no route at all: no per-route section.
    std::vector<std::string> candidate_routes;
};

struct ReportPlot {
    std::string file;  // relative to the report's folder, e.g. "plots/similarity.png"
    RgbImage image;
};

struct Report {
    std::vector<ScoreSummary> scores;
    std::vector<int64_t> sources_by_candidates;  // [k] = sources with k candidates, k = 0 .. the largest
    // Candidates per route (kRouteNone for those without one), most first, then by name; empty
    // without routes. Bar i of plots/candidates_per_route.png is entry i.
    std::vector<std::pair<std::string, int64_t>> candidates_by_route;
    std::string markdown;  // "## Score statistics" ... with tables and image links
    std::vector<ReportPlot> plots;
};

inline constexpr const char* kRouteNone = "(no recipe)";

Report build_report(const ReportInput& input);

// Makes `dir` ready for a report or dataset: creates it; refuses (Error InvalidArgument, naming
// `what` and the folder) a file there, or a non-empty folder unless `overwrite` (the message then
// ends with `hint`, e.g. " (--force replaces ...)").
void prepare_report_folder(const std::filesystem::path& dir, bool overwrite, const std::string& what,
                           const std::string& hint = "");

// Writes the plots under `dir` (creating their folder), each file atomically.
void write_report_plots(const std::filesystem::path& dir, const Report& report);

// Shortest text that reads back as the same double (JSON's form), e.g. -1.25, 0.1.
std::string report_number(double value);

}  // namespace t5s
