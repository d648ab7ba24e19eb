#pragma once
// Reading rows for batch augmentation and review: .txt (one row a line), .jsonl (one object a
// line), .csv / .tsv (header line, RFC 4180 quoting). Malformed rows are skipped with a
// "file:line: problem" warning; a missing file or column throws t5s::Error. Labelled JSONL rows
// (issue 27) keep their "spans" (or "entities": [[start, end, label], ...] or {"start"/"start_offset",
// "end"/"end_offset", "label"} objects; Unicode code points into the text column, as spaCy,
// doccano and Label Studio count) and their "label"; a row whose spans do not fit its text is skipped.
#include <filesystem>
#include <string>
#include <vector>

#include "t5s/span_preview.h"

namespace t5s::detail {

struct DatasetRows {
    std::vector<std::string> columns;  // empty for .txt
    std::string column;                // the column used
    std::vector<std::string> rows;
    std::vector<std::string> warnings;
    std::vector<std::vector<Span>> spans;  // per row when a row has "spans"/"entities"/"label", else empty
    std::vector<std::string> labels;       // per row likewise ("" = none; a non-string label as JSON text)
};

DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column);
// Parses CSV/TSV text into records (fields), tracking the line each record starts on.
struct CsvRecord { int line = 0; std::vector<std::string> fields; };
std::vector<CsvRecord> parse_delimited(const std::string& text, char delimiter, std::string* error);
bool is_valid_utf8(const std::string& text);

}  // namespace t5s::detail
