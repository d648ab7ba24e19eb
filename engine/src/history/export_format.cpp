#include "history/export_format.h"

#include <ctime>
#include <nlohmann/json.hpp>

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

// RFC 4180 quoting for both CSV and TSV (only the separator differs): a field holding the
// separator, a quote or a line break is quoted, quotes doubled. This is what the dataset reader
// (delimited_text.h), pandas and Python's csv module read back, so an exported file trains as is.
void append_delimited_field(std::string_view field, char separator, std::string& out) {
    const char specials[] = {separator, '"', '\r', '\n', '\0'};
    if (field.find_first_of(specials) == std::string_view::npos) {
        out.append(field.data(), field.size());
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
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

std::string export_header(ExportFormat format, bool with_scores) {
    if (format == ExportFormat::Jsonl) return {};
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
    out += format == ExportFormat::Csv ? "\r\n" : "\n";
    return out;
}

void append_export_row(ExportFormat format, const ExportRow& row, std::string& out, bool with_scores) {
    const std::string kind = row.original ? "original" : "candidate";
    const std::string state = row.original ? "" : to_string(row.state);
    const std::string created = iso8601_utc(row.created_at_ms);
    if (format == ExportFormat::Jsonl) {
        nlohmann::ordered_json j;
        j["source"] = row.source;
        j["target"] = row.target;
        j["kind"] = kind;
        j["state"] = row.original ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(state);
        j["score"] = row.original ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.score);
        j["rank"] = row.original ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.rank);
        j["generation_id"] = row.generation_id;
        j["model"] = row.model;
        j["model_hash"] = row.model_hash;
        j["created_at"] = created;
        for (int k = 0; with_scores && k < 4; ++k) {
            const auto v = score_at(row.original ? nullptr : row.scores, k);
            j[kScoreColumns[k]] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
        }
        auto spans_json = [](const std::vector<Span>& spans) {
            nlohmann::ordered_json a = nlohmann::ordered_json::array();
            for (const auto& s : spans) a.push_back({s.start, s.end, s.label});
            return a;
        };
        if (row.source_spans && !row.source_spans->empty()) {
            j["source_spans"] = spans_json(*row.source_spans);
            if (row.target_spans) j["target_spans"] = spans_json(*row.target_spans);
        }
        out += j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
        out.push_back('\n');
        return;
    }
    const std::string score = row.original ? "" : format_number(row.score);
    const std::string rank = row.original ? "" : std::to_string(row.rank);
    const std::string gen = std::to_string(row.generation_id);
    std::string score_texts[4];
    for (int k = 0; with_scores && k < 4; ++k) {
        const auto v = score_at(row.original ? nullptr : row.scores, k);
        if (v) score_texts[k] = format_number(*v);
    }
    const std::string_view fields[] = {row.source, row.target, kind, state, score, rank, gen, row.model, row.model_hash, created,
                                       score_texts[0], score_texts[1], score_texts[2], score_texts[3]};
    const bool csv = format == ExportFormat::Csv;
    const size_t count = with_scores ? 14 : 10;
    for (size_t i = 0; i < count; ++i) {
        if (i) out.push_back(csv ? ',' : '\t');
        append_delimited_field(fields[i], csv ? ',' : '\t', out);
    }
    out += csv ? "\r\n" : "\n";
}

}  // namespace t5s::history
