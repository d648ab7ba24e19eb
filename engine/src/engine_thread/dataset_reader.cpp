#include "engine_thread/dataset_reader.h"

#include <algorithm>
#include <fstream>
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
                if (!j.is_object()) { out.warnings.push_back(file + ":" + std::to_string(n) + ": not a JSON object"); continue; }
                if (out.columns.empty())
                    for (auto it = j.begin(); it != j.end(); ++it)
                        if (it.value().is_string()) out.columns.push_back(it.key());
                objects.push_back(std::move(j));
                line_of.push_back(n);
            } catch (const std::exception& e) {
                out.warnings.push_back(file + ":" + std::to_string(n) + ": malformed JSON");
            }
        }
        out.column = pick_column(out.columns, column, file);
        for (size_t i = 0; i < objects.size(); ++i) {
            auto it = objects[i].find(out.column);
            if (it == objects[i].end() || !it->is_string()) {
                out.warnings.push_back(file + ":" + std::to_string(line_of[i]) + ": no string field '" + out.column + "'");
                continue;
            }
            std::string v = it->get<std::string>();
            if (v.empty()) { out.warnings.push_back(file + ":" + std::to_string(line_of[i]) + ": empty"); continue; }
            out.rows.push_back(std::move(v));
        }
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
