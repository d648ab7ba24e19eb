#pragma once
// Reading rows for batch augmentation and review: .txt (one row a line), .jsonl (one object a
// line), .csv / .tsv (header line, RFC 4180 quoting). Malformed rows are skipped with a
// "file:line: problem" warning; a missing file or column throws t5s::Error.
#include <filesystem>
#include <string>
#include <vector>

namespace t5s::detail {

struct DatasetRows {
    std::vector<std::string> columns;  // empty for .txt
    std::string column;                // the column used
    std::vector<std::string> rows;
    std::vector<std::string> warnings;
};

DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column);
// Parses CSV/TSV text into records (fields), tracking the line each record starts on.
struct CsvRecord { int line = 0; std::vector<std::string> fields; };
std::vector<CsvRecord> parse_delimited(const std::string& text, char delimiter, std::string* error);
bool is_valid_utf8(const std::string& text);

}  // namespace t5s::detail
