#include "history/export_format.h"

#include <nlohmann/json.hpp>

#include "input/delimited_text.h"
#include "t5s/input_reader.h"
#include "t5s/score_names.h"
#include "t5s/utc_time.h"

namespace t5s::history {

namespace {

const char* const kColumns[] = {"source", "target",        "kind",  "state",      "score",
                                "rank",   "generation_id", "model", "model_hash", "created_at"};

// The scores of a row, by name in the listing order (an original row has none: all null).
std::vector<std::pair<const char*, std::optional<double>>> row_scores(const ExportRow& row) {
    std::vector<std::pair<const char*, std::optional<double>>> out;
    const CandidateScores none;
    for_each_score(row.original || !row.scores ? none : *row.scores, [&](const char* name, const std::optional<double>& value) {
        out.push_back({name, value});
    });
    return out;
}

}  // namespace

std::string format_number(double value) { return nlohmann::json(value).dump(); }

std::string export_header(ExportFormat format, bool with_scores, bool with_labels, bool with_route) {
    if (format != ExportFormat::Csv && format != ExportFormat::Tsv) return {};
    const char sep = format == ExportFormat::Csv ? ',' : '\t';
    std::string out;
    for (size_t i = 0; i < sizeof(kColumns) / sizeof(kColumns[0]); ++i) {
        if (i) out.push_back(sep);
        out += kColumns[i];
    }
    for (const char* name : with_scores ? score_names() : std::vector<const char*>{}) {
        out.push_back(sep);
        out += name;
    }
    for (const char* column : {"label", "source_spans", "target_spans"})
        if (with_labels) out += std::string(1, sep) + column;
    if (with_route) out += std::string(1, sep) + "route";
    out += format == ExportFormat::Csv ? "\r\n" : "\n";
    return out;
}

namespace {

using ojson = nlohmann::ordered_json;

// JSONL's [start, end, label] triples; an hf-dataset's {start, end, label} objects (Arrow has no
// list of mixed types).
ojson spans_json(const std::vector<Span>& spans, bool as_objects = false) {
    ojson a = ojson::array();
    for (const auto& s : spans) {
        if (as_objects) a.push_back({{"start", s.start}, {"end", s.end}, {"label", s.label}});
        else a.push_back({s.start, s.end, s.label});
    }
    return a;
}

// hf_dataset: spans as objects and the label as text (a label may be "PER" on one row and 4.2 on
// the next, and an Arrow column has one type).
void append_jsonl_row(const ExportRow& row, std::string& out, bool with_scores, bool hf_dataset = false) {
    ojson j;
    j["source"] = row.source;
    j["target"] = row.target;
    j["kind"] = row.original ? "original" : "candidate";
    j["state"] = row.original ? ojson(nullptr) : ojson(to_string(row.state));
    j["score"] = row.original ? ojson(nullptr) : ojson(row.score);
    j["rank"] = row.original ? ojson(nullptr) : ojson(row.rank);
    j["generation_id"] = row.generation_id;
    j["model"] = row.model;
    j["model_hash"] = row.model_hash;
    j["created_at"] = utc_iso8601(row.created_at_ms);
    if (with_scores)
        for (const auto& [name, value] : row_scores(row)) j[name] = value ? ojson(*value) : ojson(nullptr);
    if (row.source_spans && !row.source_spans->empty()) {
        j["source_spans"] = spans_json(*row.source_spans, hf_dataset);
        if (row.target_spans) j["target_spans"] = spans_json(*row.target_spans, hf_dataset);
    }
    if (!row.label_json.empty())
        j["label"] = hf_dataset ? ojson(label_text(std::string(row.label_json))) : ojson::parse(row.label_json, nullptr, false);
    if (row.route && !row.route->empty()) j["route"] = ojson::parse(route_json_text(*row.route));  // the one stored form
    out += j.dump(-1, ' ', /*ensure_ascii=*/false, ojson::error_handler_t::replace);
    out.push_back('\n');
}

std::string spans_cell(const std::vector<Span>* spans) {
    return spans && !spans->empty() ? spans_json(*spans).dump(-1, ' ', false, ojson::error_handler_t::replace) : std::string();
}

}  // namespace

void append_export_row(ExportFormat format, const ExportRow& row, std::string& out, bool with_scores, bool with_labels,
                       bool with_route) {
    if (format == ExportFormat::Jsonl) return append_jsonl_row(row, out, with_scores);
    if (format == ExportFormat::HfDataset) return append_jsonl_row(row, out, /*with_scores=*/true, /*hf_dataset=*/true);
    const std::string kind = row.original ? "original" : "candidate";
    const std::string state = row.original ? "" : to_string(row.state);
    const std::string created = utc_iso8601(row.created_at_ms);
    const std::string score = row.original ? "" : format_number(row.score);
    const std::string rank = row.original ? "" : std::to_string(row.rank);
    const std::string gen = std::to_string(row.generation_id);
    std::vector<std::string> score_texts;
    if (with_scores)
        for (const auto& [name, value] : row_scores(row)) score_texts.push_back(value ? format_number(*value) : "");
    std::vector<std::string_view> fields = {row.source, row.target, kind,      state,          score,
                                            rank,       gen,        row.model, row.model_hash, created};
    fields.insert(fields.end(), score_texts.begin(), score_texts.end());
    const std::string label = row.label_json.empty() ? "" : label_text(std::string(row.label_json));
    const std::string source_spans = spans_cell(row.source_spans), target_spans = spans_cell(row.target_spans);
    if (with_labels) fields.insert(fields.end(), {label, source_spans, target_spans});
    const std::string route = with_route && row.route ? route_json_text(*row.route) : std::string();
    if (with_route) fields.push_back(route);
    const char sep = format == ExportFormat::Csv ? ',' : '\t';
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out.push_back(sep);
        append_delimited_field(fields[i], sep, out);
    }
    out += format == ExportFormat::Csv ? "\r\n" : "\n";
}

}  // namespace t5s::history
