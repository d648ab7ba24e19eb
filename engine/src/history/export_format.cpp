#include "history/export_format.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "input/delimited_text.h"
#include "t5s/input_reader.h"

namespace t5s::history {

namespace {

const char* const kColumns[] = {"source", "target", "kind", "state", "score", "rank",
                                "generation_id", "model", "model_hash", "created_at"};
const char* const kScoreColumns[] = {"similarity", "back_score", "change", "fluency"};

std::optional<double> score_at(const CandidateScores* scores, int k) {
    if (!scores) return std::nullopt;
    const std::optional<double>* values[] = {&scores->similarity, &scores->back_score, &scores->change, &scores->fluency};
    return *values[k];
}

}  // namespace

std::string iso8601_utc(int64_t unix_ms) {
    int64_t secs = unix_ms / 1000;
    int64_t ms = unix_ms % 1000;
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    std::time_t t = static_cast<std::time_t>(secs);
    std::tm tm {};
    gmtime_r(&t, &tm);
    char buf[80];
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

std::string format_number(double value) { return nlohmann::json(value).dump(); }

std::string export_header(ExportFormat format, bool with_scores, bool with_labels) {
    if (format != ExportFormat::Csv && format != ExportFormat::Tsv) return {};
    const char sep = format == ExportFormat::Csv ? ',' : '\t';
    std::string out;
    for (size_t i = 0; i < sizeof(kColumns) / sizeof(kColumns[0]); ++i) {
        if (i) out.push_back(sep);
        out += kColumns[i];
    }
    for (size_t i = 0; with_scores && i < 4; ++i) {
        out.push_back(sep);
        out += kScoreColumns[i];
    }
    for (const char* column : {"label", "source_spans", "target_spans"})
        if (with_labels) out += std::string(1, sep) + column;
    out += format == ExportFormat::Csv ? "\r\n" : "\n";
    return out;
}

namespace {

using ojson = nlohmann::ordered_json;

ojson spans_json(const std::vector<Span>& spans) {
    ojson a = ojson::array();
    for (const auto& s : spans) a.push_back({s.start, s.end, s.label});
    return a;
}

void append_jsonl_row(const ExportRow& row, std::string& out, bool with_scores) {
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
    j["created_at"] = iso8601_utc(row.created_at_ms);
    for (int k = 0; with_scores && k < 4; ++k) {
        const auto v = score_at(row.original ? nullptr : row.scores, k);
        j[kScoreColumns[k]] = v ? ojson(*v) : ojson(nullptr);
    }
    if (row.source_spans && !row.source_spans->empty()) {
        j["source_spans"] = spans_json(*row.source_spans);
        if (row.target_spans) j["target_spans"] = spans_json(*row.target_spans);
    }
    if (!row.label_json.empty()) j["label"] = ojson::parse(row.label_json, nullptr, false);
    out += j.dump(-1, ' ', /*ensure_ascii=*/false, ojson::error_handler_t::replace);
    out.push_back('\n');
}

std::string spans_cell(const std::vector<Span>* spans) {
    return spans && !spans->empty() ? spans_json(*spans).dump(-1, ' ', false, ojson::error_handler_t::replace) : std::string();
}

}  // namespace

void append_export_row(ExportFormat format, const ExportRow& row, std::string& out, bool with_scores, bool with_labels) {
    if (format == ExportFormat::Jsonl) return append_jsonl_row(row, out, with_scores);
    const std::string kind = row.original ? "original" : "candidate";
    const std::string state = row.original ? "" : to_string(row.state);
    const std::string created = iso8601_utc(row.created_at_ms);
    const std::string score = row.original ? "" : format_number(row.score);
    const std::string rank = row.original ? "" : std::to_string(row.rank);
    const std::string gen = std::to_string(row.generation_id);
    std::string score_texts[4];
    for (int k = 0; with_scores && k < 4; ++k) {
        const auto v = score_at(row.original ? nullptr : row.scores, k);
        if (v) score_texts[k] = format_number(*v);
    }
    std::vector<std::string_view> fields = {row.source, row.target, kind, state, score, rank, gen, row.model, row.model_hash, created};
    if (with_scores) fields.insert(fields.end(), score_texts, score_texts + 4);
    const std::string label = row.label_json.empty() ? "" : label_text(std::string(row.label_json));
    const std::string source_spans = spans_cell(row.source_spans), target_spans = spans_cell(row.target_spans);
    if (with_labels) fields.insert(fields.end(), {label, source_spans, target_spans});
    const char sep = format == ExportFormat::Csv ? ',' : '\t';
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out.push_back(sep);
        append_delimited_field(fields[i], sep, out);
    }
    out += format == ExportFormat::Csv ? "\r\n" : "\n";
}

}  // namespace t5s::history
