// build_report: score statistics and plots as Markdown sections with PNG files beside them.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "report/bar_chart.h"
#include "report/route_section.h"
#include "t5s/error.h"
#include "t5s/score_report.h"

namespace t5s {

namespace {

std::string stats_table(const std::vector<ScoreSummary>& scores) {
    std::string md =
        "| score | count | missing | mean | min | q1 | median | q3 | max |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& s : scores) {
        md += "| " + s.name + " | " + std::to_string(s.count) + " | " + std::to_string(s.missing);
        for (double v : {s.mean, s.min, s.q1, s.median, s.q3, s.max}) md += " | " + (s.count ? report_number(v) : "-");
        md += " |\n";
    }
    return md;
}

std::string histogram_section(const ScoreSummary& s, const std::string& file) {
    std::string md = "\n### Histogram: " + s.name + "\n\n![" + s.name + " histogram](" + file + ")\n\n" +
                     "| from | to | count |\n|---|---|---|\n";
    for (size_t i = 0; i < s.bin_counts.size(); ++i)
        md += "| " + report_number(s.bin_edges[i]) + " | " + report_number(s.bin_edges[i + 1]) + " | " +
              std::to_string(s.bin_counts[i]) + " |\n";
    return md;
}

std::vector<int64_t> sources_by_candidates(const std::vector<int64_t>& per_source) {
    const int64_t largest = per_source.empty() ? 0 : *std::max_element(per_source.begin(), per_source.end());
    std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(largest, 0)) + 1, 0);
    for (int64_t k : per_source) ++out[static_cast<size_t>(std::max<int64_t>(k, 0))];
    return out;
}

std::string candidates_section(const std::vector<int64_t>& by_k, size_t sources, const std::string& file) {
    std::string md = "\n## Candidates per source\n\n" + std::to_string(sources) +
                     " sources. Bars: how many sources have k candidates, k = 0 on the left.\n\n![candidates per source](" +
                     file + ")\n\n| candidates | sources |\n|---|---|\n";
    for (size_t k = 0; k < by_k.size(); ++k) md += "| " + std::to_string(k) + " | " + std::to_string(by_k[k]) + " |\n";
    return md;
}

}  // namespace

std::string report_number(double value) { return nlohmann::json(value).dump(); }

Report build_report(const ReportInput& input) {
    Report report;
    for (size_t i = 0; i < input.score_names.size(); ++i) {
        static const std::vector<std::optional<double>> kNone;
        report.scores.push_back(
            summarize_scores(input.score_names[i], i < input.score_values.size() ? input.score_values[i] : kNone));
    }
    report.markdown =
        "## Score statistics\n\nOver the candidates; missing = not computed for that candidate.\n\n" + stats_table(report.scores);
    for (const auto& s : report.scores) {
        if (s.count == 0) continue;
        const std::string file = "plots/" + s.name + ".png";
        report.markdown += histogram_section(s, file);
        report.plots.push_back({file, report::draw_bar_chart(s.bin_counts)});
    }
    report.sources_by_candidates = sources_by_candidates(input.candidates_per_source);
    const std::string file = "plots/candidates_per_source.png";
    report.markdown += candidates_section(report.sources_by_candidates, input.candidates_per_source.size(), file);
    report.plots.push_back({file, report::draw_bar_chart(report.sources_by_candidates)});
    report::add_route_section(input, &report);
    return report;
}

void prepare_report_folder(const std::filesystem::path& dir, bool overwrite, const std::string& what, const std::string& hint) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
        throw Error(ErrorCode::InvalidArgument, what + " " + dir.string() + " is a file, not a folder");
    if (std::filesystem::is_directory(dir, ec) && !std::filesystem::is_empty(dir, ec) && !overwrite)
        throw Error(ErrorCode::InvalidArgument, what + " " + dir.string() + " is not empty" + hint);
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(ErrorCode::InvalidArgument, "cannot create the " + what + " " + dir.string() + ": " + ec.message());
}

void write_report_plots(const std::filesystem::path& dir, const Report& report) {
    for (const auto& plot : report.plots) {
        const std::filesystem::path path = dir / plot.file;
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
            throw Error(ErrorCode::InvalidArgument,
                        "cannot create the folder " + path.parent_path().string() + ": " + ec.message());
        write_png_file(path, plot.image);
    }
}

}  // namespace t5s
