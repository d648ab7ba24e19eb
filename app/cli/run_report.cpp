#include "cli/run_report.h"

#include <filesystem>

#include "t5s/atomic_file.h"
#include "t5s/drop_reason.h"
#include "t5s/score_names.h"

namespace t5s::cli {

RunReport::RunReport(std::string dir) : dir_(std::move(dir)) {
    prepare_report_folder(dir_, /*overwrite=*/false, "report folder");
    input_.score_names = {"score"};
    for (const char* name : score_names()) input_.score_names.push_back(name);
    input_.score_values.resize(input_.score_names.size());
}

void RunReport::add(const std::vector<GenerationResult>& results) {
    for (const auto& r : results) {
        input_.candidates_per_source.push_back(static_cast<int64_t>(r.candidates.size()));
        for (const auto& c : r.candidates) {
            input_.score_values[0].push_back(c.score);
            input_.candidate_routes.push_back(route_steps(c.route));  // "" outside recipes: no per-route section
            size_t i = 1;
            for_each_score(c.scores,
                           [&](const char*, const std::optional<double>& value) { input_.score_values[i++].push_back(value); });
        }
        for (const auto& d : r.dropped) ++dropped_[to_string(d.reason)];
    }
}

void RunReport::write(const std::string& model) const {
    const Report report = build_report(input_);
    int64_t candidates = 0;
    for (int64_t n : input_.candidates_per_source) candidates += n;
    std::string md = "# Run report\n\n`t5studio generate` with the model `" + model +
                     "`: " + std::to_string(input_.candidates_per_source.size()) + " sources, " + std::to_string(candidates) +
                     " candidates kept.\n\n| dropped while generating | candidates |\n|---|---|\n";
    for (const auto& [reason, n] : dropped_) md += "| " + reason + " | " + std::to_string(n) + " |\n";
    md += "\n" + report.markdown;
    write_report_plots(dir_, report);
    write_file_atomic(std::filesystem::path(dir_) / "README.md", md);
}

}  // namespace t5s::cli
