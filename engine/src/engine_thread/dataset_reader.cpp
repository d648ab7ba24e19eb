#include "engine_thread/dataset_reader.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <sstream>

#include <nlohmann/json.hpp>

#include "delimited_text.h"
#include "t5s/error.h"
#include "utf8.h"

namespace t5s::detail {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::string pick_column(const std::vector<std::string>& columns, const std::string& wanted, const std::string& file) {
    if (!wanted.empty()) {
        if (std::find(columns.begin(), columns.end(), wanted) == columns.end())
            throw Error(ErrorCode::InvalidArgument, file + ": no column '" + wanted + "'");
        return wanted;
    }
    for (const char* name : {"text", "source", "input", "sentence", "sentence1"})
        for (const auto& c : columns)
            if (lower(c) == name) return c;
    if (columns.empty()) throw Error(ErrorCode::CorruptFile, file + ": no columns");
    return columns.front();
}

// One span of a labelled row: [start, end, label] or {"start"|"start_offset", "end"|"end_offset", "label"}.
Span span_of(const nlohmann::json& s) {
    auto offset = [](const nlohmann::json* v) {
        if (!v || !v->is_number_integer() || v->get<int64_t>() < 0) throw std::runtime_error("offsets must be integers >= 0 (code points)");
        return v->get<int64_t>();
    };
    auto member = [&](const char* a, const char* b) { return s.contains(a) ? &s[a] : s.contains(b) ? &s[b] : nullptr; };
    const bool triple = s.is_array() && (s.size() == 2 || s.size() == 3);
    if (!triple && !s.is_object()) throw std::runtime_error("a span must be [start, end, label]");
    Span out;
    out.start = offset(triple ? &s[0] : member("start", "start_offset"));
    out.end = offset(triple ? &s[1] : member("end", "end_offset"));
    const nlohmann::json* label = triple ? (s.size() == 3 ? &s[2] : nullptr) : member("label", "label");
    if (label && !label->is_null()) out.label = label->is_string() ? label->get<std::string>() : label->dump();
    return out;
}

// The row's "spans" (else "entities"), checked against its text: inside it, non-empty, not overlapping.
std::vector<Span> row_spans(const nlohmann::json& row, const std::string& text) {
    const char* key = row.contains("spans") && !row["spans"].is_null() ? "spans" : "entities";
    if (!row.contains(key) || row[key].is_null()) return {};
    if (!row[key].is_array()) throw std::runtime_error(std::string("\"") + key + "\" must be a list of [start, end, label]");
    std::vector<Span> spans;
    for (const auto& s : row[key]) {
        try {
            spans.push_back(span_of(s));
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string("\"") + key + "\": " + e.what());  // names the field
        }
    }
    std::vector<Span> sorted = spans;
    std::sort(sorted.begin(), sorted.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    const int64_t length = code_point_of_byte(text, text.size());
    for (size_t i = 0; i < sorted.size(); ++i) {
        const Span& s = sorted[i];
        const std::string name = "[" + std::to_string(s.start) + ", " + std::to_string(s.end) + "]";
        if (s.end <= s.start || s.end > length)
            throw std::runtime_error(std::string("\"") + key + "\": span " + name + " is not inside the text (" + std::to_string(length) + " code points)");
        if (i > 0 && sorted[i - 1].end > s.start) throw std::runtime_error(std::string("\"") + key + "\": spans overlap at " + name);
    }
    return spans;
}

std::string row_label(const nlohmann::json& row) {
    auto it = row.find("label");
    if (it == row.end() || it->is_null()) return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

// .jsonl: one object a line; the text column, and a labelled row's spans and label.
void read_jsonl(const std::string& text, const std::string& file, const std::string& column, DatasetRows* out) {
    std::istringstream lines(text);
    std::string l;
    int n = 0;
    std::vector<nlohmann::json> objects;
    std::vector<int> line_of;
    while (std::getline(lines, l)) {
        ++n;
        if (!l.empty() && l.back() == '\r') l.pop_back();
        if (l.find_first_not_of(" \t") == std::string::npos) continue;
        try {
            auto j = nlohmann::json::parse(l);
            if (!j.is_object()) { out->warnings.push_back(file + ":" + std::to_string(n) + ": not a JSON object"); continue; }
            if (out->columns.empty())
                for (auto it = j.begin(); it != j.end(); ++it)
                    if (it.value().is_string()) out->columns.push_back(it.key());
            objects.push_back(std::move(j));
            line_of.push_back(n);
        } catch (const std::exception&) {
            out->warnings.push_back(file + ":" + std::to_string(n) + ": malformed JSON");
        }
    }
    out->column = pick_column(out->columns, column, file);
    bool labelled = false;
    for (size_t i = 0; i < objects.size(); ++i) {
        const std::string where = file + ":" + std::to_string(line_of[i]) + ": ";
        auto it = objects[i].find(out->column);
        if (it == objects[i].end() || !it->is_string()) {
            out->warnings.push_back(where + "no string field '" + out->column + "'");
            continue;
        }
        std::string v = it->get<std::string>();
        if (v.empty()) { out->warnings.push_back(where + "empty"); continue; }
        try {
            out->spans.push_back(row_spans(objects[i], v));
        } catch (const std::exception& e) {
            out->warnings.push_back(where + e.what());
            continue;
        }
        out->labels.push_back(row_label(objects[i]));
        labelled = labelled || !out->spans.back().empty() || !out->labels.back().empty();
        out->rows.push_back(std::move(v));
    }
    if (!labelled) out->spans.clear(), out->labels.clear();
}

}  // namespace

// The strict check of the tokenizer (this one accepted F5..F7 lead bytes, overlongs and
// surrogates: found by tests/fuzz/fuzz_export).
bool is_valid_utf8(const std::string& s) { return t5s::is_valid_utf8(std::string_view(s)); }

std::vector<CsvRecord> parse_delimited(const std::string& text, char delim, std::string* error) {
    std::vector<CsvRecord> out;
    std::istringstream in(text);
    int64_t line = 0;
    DelimitedRecord rec;
    while (read_delimited_record(in, delim, &line, &rec)) {
        if (rec.unterminated_quote && error) *error = "unterminated quoted field starting on line " + std::to_string(rec.first_line);
        if (rec.fields.empty() || (rec.fields.size() == 1 && rec.fields[0].empty())) continue;  // blank line
        out.push_back(CsvRecord{static_cast<int>(rec.first_line), std::move(rec.fields)});
    }
    return out;
}

DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column) {
    const std::string file = path.string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(ErrorCode::FileNotFound, file + ": no such file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, file + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // BOM

    DatasetRows out;
    const std::string ext = lower(path.extension().string());
    if (ext == ".jsonl" || ext == ".json") {
        read_jsonl(text, file, column, &out);
        return out;
    }
    if (ext == ".csv" || ext == ".tsv") {
        std::string err;
        auto records = parse_delimited(text, ext == ".csv" ? ',' : '\t', &err);
        if (!err.empty()) out.warnings.push_back(file + ": " + err);
        if (records.empty()) throw Error(ErrorCode::CorruptFile, file + ": empty file (a header line is needed)");
        out.columns = records.front().fields;
        out.column = pick_column(out.columns, column, file);
        const size_t col = size_t(std::find(out.columns.begin(), out.columns.end(), out.column) - out.columns.begin());
        for (size_t r = 1; r < records.size(); ++r) {
            const auto& rec = records[r];
            const std::string where = file + ":" + std::to_string(rec.line) + ": ";
            if (rec.fields.size() != out.columns.size()) {
                out.warnings.push_back(where + std::to_string(rec.fields.size()) + " fields, header has " +
                                       std::to_string(out.columns.size()));
                if (col >= rec.fields.size()) continue;
            }
            if (!is_valid_utf8(rec.fields[col])) { out.warnings.push_back(where + "invalid UTF-8"); continue; }
            if (rec.fields[col].empty()) { out.warnings.push_back(where + "empty"); continue; }
            out.rows.push_back(rec.fields[col]);
        }
        return out;
    }
    // Plain text: one row a line.
    std::istringstream lines(text);
    std::string l;
    int n = 0;
    while (std::getline(lines, l)) {
        ++n;
        if (!l.empty() && l.back() == '\r') l.pop_back();
        if (l.find_first_not_of(" \t") == std::string::npos) continue;
        if (!is_valid_utf8(l)) { out.warnings.push_back(file + ":" + std::to_string(n) + ": invalid UTF-8"); continue; }
        out.rows.push_back(l);
    }
    return out;
}

}  // namespace t5s::detail
