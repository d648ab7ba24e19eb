#include "history/hf_dataset_card.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "t5s/score_names.h"
#include "t5s/text_offsets.h"

namespace t5s::history {

namespace {

using ojson = nlohmann::ordered_json;

// The features in the data file's column order (export_format.cpp), as `datasets` writes them in YAML.
std::string features_yaml(const DataFileSummary& d) {
    std::vector<std::pair<std::string, std::string>> columns = {
        {"source", "string"},     {"target", "string"},    {"kind", "string"},         {"state", "string"},
        {"score", "float64"},     {"rank", "int64"},       {"generation_id", "int64"}, {"model", "string"},
        {"model_hash", "string"}, {"created_at", "string"}};
    for (const char* name : score_names()) columns.push_back({name, "float64"});
    std::string y = "  features:\n";
    for (const auto& [name, type] : columns) y += "  - name: " + name + "\n    dtype: " + type + "\n";
    const char* spans[] = {"source_spans", "target_spans"};
    for (int i = 0; i < 2; ++i) {
        if (!(i == 0 ? d.has_source_spans : d.has_target_spans)) continue;
        y += std::string("  - name: ") + spans[i] +
             "\n    list:\n    - name: start\n      dtype: int64\n"
             "    - name: end\n      dtype: int64\n    - name: label\n      dtype: string\n";
    }
    if (d.has_label) y += "  - name: label\n    dtype: string\n";
    if (d.has_route)
        y += "  - name: route\n    list:\n    - name: step\n      dtype: string\n    - name: text\n      dtype: string\n";
    return y;
}

// num_bytes is the data file's size (the Hub's own cards give the Arrow size; `datasets` checks
// only num_examples, which it compares with the rows it read).
std::string yaml_header(const DataFileSummary& d, int64_t bytes) {
    return std::string(
               "---\npretty_name: T5 Studio paraphrases\ntask_categories:\n- text2text-generation\n"
               "tags:\n- paraphrase\n- synthetic\nconfigs:\n- config_name: default\n  data_files:\n"
               "  - split: train\n    path: ") +
           kHfDataFile + "\ndataset_info:\n" + features_yaml(d) +
           "  splits:\n  - name: train\n    num_bytes: " + std::to_string(bytes) +
           "\n    num_examples: " + std::to_string(d.rows) + "\n---\n";
}

// Text for a table cell: at most max_bytes (cut at a character boundary), '|' escaped, one line.
std::string cell(std::string text, size_t max_bytes = 120) {
    if (text.size() > max_bytes) text = std::string(utf8_prefix(text, max_bytes)) + "...";
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n' || c == '\r') out += ' ';
        else out += c;
    }
    return out;
}

std::string counts_table(const char* what, const std::vector<HistoryProvenance::Count>& rows, const char* of,
                         size_t max_bytes = 120) {
    std::string md = std::string("| ") + what + " | " + of + " |\n|---|---|\n";
    for (const auto& r : rows) md += "| " + cell(r.value, max_bytes) + " | " + std::to_string(r.n) + " |\n";
    return md;
}

// The settings that differ between generations (each value with its generation count), then the
// ones every generation shares, folded (the Hub renders <details>).
std::string settings_table(const std::vector<HistoryProvenance::Count>& settings) {
    std::vector<std::string> keys;
    std::map<std::string, std::vector<std::pair<std::string, int64_t>>> values;
    for (const auto& s : settings) {
        const ojson j = ojson::parse(s.value, nullptr, false);
        if (!j.is_object()) continue;
        for (const auto& [key, value] : j.items()) {
            auto& v = values[key];
            if (v.empty()) keys.push_back(key);
            const std::string text = value.dump(-1, ' ', false, ojson::error_handler_t::replace);
            auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == text; });
            if (it == v.end()) v.push_back({text, s.n});
            else it->second += s.n;
        }
    }
    const std::string header = "| setting | value |\n|---|---|\n";
    std::string differ, shared;
    for (const auto& key : keys) {
        const auto& v = values[key];
        std::string text;
        for (size_t i = 0; i < v.size() && i < 5; ++i)
            text += (i ? ", " : "") + v[i].first + (v.size() > 1 ? " (" + std::to_string(v[i].second) + ")" : "");
        if (v.size() > 5) text += ", ... " + std::to_string(v.size() - 5) + " more";
        (v.size() > 1 ? differ : shared) += "| " + key + " | " + cell(text, 300) + " |\n";
    }
    std::string md = differ.empty() ? "Every generation used the same settings.\n\n" : header + differ + "\n";
    if (!shared.empty())
        md += "<details>\n<summary>Settings every generation shares</summary>\n\n" + header + shared + "\n</details>\n";
    return md;
}

std::string seeds_text(const std::vector<int64_t>& seeds) {
    std::string s = std::to_string(seeds.size()) + (seeds.size() == 1 ? " seed" : " distinct seeds") + " (-1 = none recorded): ";
    for (size_t i = 0; i < seeds.size() && i < 20; ++i) s += (i ? ", " : "") + std::to_string(seeds[i]);
    if (seeds.size() > 20) s += ", ...";
    return s + "\n";
}

std::string filters_text(const ExportOptions& o) {
    std::string s;
    auto item = [&](const std::string& line) { s += "- " + line + "\n"; };
    if (o.filter.accepted_only) item("only accepted and edited candidates");
    if (!o.filter.text.empty()) item("only generations containing `" + cell(o.filter.text) + "`");
    if (!o.filter.model.empty()) item("only generations of model `" + cell(o.filter.model) + "`");
    const std::pair<const char*, std::optional<double>> bounds[] = {{"similarity >= ", o.min_similarity},
                                                                    {"similarity <= ", o.max_similarity},
                                                                    {"change >= ", o.min_change},
                                                                    {"change <= ", o.max_change},
                                                                    {"back_score >= ", o.min_back_score}};
    for (const auto& [what, bound] : bounds)
        if (bound) item(std::string("only candidates with ") + what + report_number(*bound));
    if (o.dedupe) item("repeated (source, target) pairs skipped");
    if (o.near_dedupe) item("near-duplicate targets skipped (MinHash Jaccard >= " + report_number(*o.near_dedupe) + ")");
    if (o.include_originals) item("one `original` row per generation (target = source) before its candidates");
    return s.empty() ? "- none: every candidate of the history\n" : s;
}

std::string kept_table(const DataFileSummary& d, const HistoryProvenance& p, const ExportResult& w) {
    std::string md = "| what | count |\n|---|---|\n";
    auto row = [&](const std::string& what, int64_t n) { md += "| " + what + " | " + std::to_string(n) + " |\n"; };
    row("generations matching the filters", p.generations);
    row("candidates those generations kept", p.candidates);
    row("rows written", d.rows);
    row("candidate rows written", d.candidates);
    row("original rows written", d.originals);
    row("generations with rows written", d.generations);
    for (const auto& [state, n] : d.states) row("candidate rows in state " + state, n);
    row("rows skipped as exact duplicates", w.duplicates_skipped);
    row("rows skipped as near duplicates", w.near_duplicates_skipped);
    for (const auto& r : p.dropped) row("candidates dropped while generating: " + cell(r.value), r.n);
    return md;
}

}  // namespace

std::string dataset_card(const DataFileSummary& data, const HistoryProvenance& provenance, const ExportOptions& options,
                         const ExportResult& written, const Report& report) {
    std::string md = yaml_header(data, written.bytes_written);
    md +=
        "\n# T5 Studio paraphrases\n\nParaphrase candidates generated with T5 models in T5 Studio and exported "
        "from its history with `t5studio export --format hf-dataset`. Load with "
        "`datasets.load_dataset(\"path/to/this/folder\")`.\n";
    md += "\n## Data\n\n`" + std::string(kHfDataFile) + "`: " + std::to_string(data.rows) +
          " rows, one JSON object per line: source, target, kind (`candidate` or `original`), state (`none`, "
          "`accepted`, `rejected`, `edited`), score (the model's log-probability), rank, generation_id, model, "
          "model_hash, created_at (UTC), the quality scores (null where not computed)" +
          (data.has_source_spans ? ", protected spans as {start, end, label} in code points" : "") +
          (data.has_label ? ", the input's label" : "") +
          (data.has_route ? ", a recipe candidate's route as [{step, text}, ...] (the steps that made it and each one's output)"
                          : "") +
          ".\n";
    md += "\n## How it was made\n\n### Models\n\n" + counts_table("model (content hash)", provenance.models, "generations");
    if (!provenance.recipes.empty())
        md +=
            "\n### Recipes\n\nGenerations made by `t5studio generate --recipe FILE` (docs/recipes.md); the section "
            "\"Candidates per route\" below counts the routes.\n\n" +
            counts_table("recipe file (content hash)", provenance.recipes, "generations", /*max_bytes=*/400);  // the whole hash
    md += "\n### Settings\n\n" + std::to_string(provenance.settings.size()) +
          " distinct setting sets (seed and protected spans aside).\n\n" + settings_table(provenance.settings);
    md += "\n### Seeds\n\n" + seeds_text(provenance.seeds);
    md += "\n### Export filters\n\n" + filters_text(options);
    md += "\n### Kept and dropped\n\n" + kept_table(data, provenance, written);
    md += "\n" + report.markdown;
    return md;
}

}  // namespace t5s::history
