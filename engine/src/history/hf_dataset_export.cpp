// export_hf_dataset: the data file through export_to, then the card and plots computed from that
// file as written, so the card's numbers are the data's.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "history/hf_dataset_card.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/hf_dataset.h"
#include "t5s/score_names.h"

namespace t5s {

namespace fs = std::filesystem;

namespace {

std::optional<double> number_or_null(const nlohmann::json& row, const char* key) {
    const auto it = row.find(key);
    return it != row.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

history::DataFileSummary summarize_data_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, "cannot read back the data file " + path.string());
    history::DataFileSummary d;
    d.report.score_names = {"score"};
    for (const char* name : score_names()) d.report.score_names.push_back(name);
    d.report.score_values.resize(d.report.score_names.size());
    std::string line;
    int64_t generation = -1;
    while (std::getline(in, line)) {
        const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
        if (!row.is_object())
            throw Error(ErrorCode::CorruptFile,
                        "data file " + path.string() + ": line " + std::to_string(d.rows + 1) + " is not a JSON object");
        ++d.rows;
        d.has_source_spans |= row.contains("source_spans");
        d.has_target_spans |= row.contains("target_spans");
        d.has_label |= row.contains("label");
        const int64_t gid = row.value("generation_id", int64_t{0});
        if (gid != generation) {  // rows come grouped by generation
            generation = gid;
            ++d.generations;
            d.report.candidates_per_source.push_back(0);
        }
        if (row.value("kind", "") == "original") {
            ++d.originals;
            continue;
        }
        ++d.candidates;
        ++d.report.candidates_per_source.back();
        ++d.states[row["state"].is_string() ? row["state"].get<std::string>() : "none"];
        const auto route = row.find("route");
        d.has_route |= route != row.end();
        d.report.candidate_routes.push_back(
            route == row.end() ? std::string()
                               : route_steps(route_of_json_text(
                                     route->dump(), "data file " + path.string() + ": line " + std::to_string(d.rows))));
        for (size_t i = 0; i < d.report.score_names.size(); ++i)
            d.report.score_values[i].push_back(number_or_null(row, d.report.score_names[i].c_str()));
    }
    return d;
}

// An earlier export's plots, which this one may not redraw (a score no longer present).
void remove_old_plots(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir / "plots", ec)) return;
    for (const auto& entry : fs::directory_iterator(dir / "plots", ec))
        if (entry.path().extension() == ".png") fs::remove(entry.path(), ec);
}

}  // namespace

HfDatasetResult export_hf_dataset(HistoryStore& store, const std::string& dir, const ExportOptions& options,
                                  const std::function<void(const ExportProgress&)>& progress, const std::atomic<bool>* cancel) {
    prepare_report_folder(fs::path(dir), options.overwrite, "export folder", " (--force replaces its dataset files)");
    prepare_report_folder(fs::path(dir) / "data", /*overwrite=*/true, "export folder");
    ExportOptions data_options = options;
    data_options.format = ExportFormat::HfDataset;
    data_options.with_scores = true;
    data_options.overwrite = true;  // the folder was checked above
    HfDatasetResult result;
    result.dir = dir;
    const fs::path data_path = fs::path(dir) / history::kHfDataFile;
    result.data = store.export_to(data_path.string(), data_options, progress, cancel);
    result.files.push_back(history::kHfDataFile);

    const history::DataFileSummary data = summarize_data_file(data_path);
    const HistoryProvenance provenance = store.provenance(options.filter);
    const Report report = build_report(data.report);
    remove_old_plots(dir);
    write_report_plots(dir, report);
    for (const auto& plot : report.plots) result.files.push_back(plot.file);
    write_file_atomic(fs::path(dir) / "README.md", history::dataset_card(data, provenance, options, result.data, report));
    result.files.push_back("README.md");
    return result;
}

}  // namespace t5s
