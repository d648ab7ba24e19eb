#pragma once
// LoadDataset's rows: the app's batch panel reads its file with the one input reader
// (t5s/input_reader.h: text, JSON lines, CSV, TSV, Label Studio exports; spans in code points,
// checked by the core's span rules) under BadRowPolicy::Skip. This adapter only picks the text
// column and gathers the rows, their spans and labels, and the skipped rows' "file:line: reason".
#include <filesystem>
#include <string>
#include <vector>

#include "t5s/spans.h"

namespace t5s::detail {

struct DatasetRows {
    std::vector<std::string> columns;  // the file's text columns (input_columns); empty for plain text
    std::string column;                // the column used ("" for plain text)
    std::vector<std::string> rows;
    std::vector<std::string> warnings;     // one "file:line: reason" per skipped row, in file order
    std::vector<std::vector<Span>> spans;  // per row when a row has spans or a label, else empty
    std::vector<std::string> labels;       // per row likewise ("" = none; a non-string label as JSON text)
};

// `column` "" = the column the reader's rule picks (t5s/input_reader.h: text, sentence, sentence1,
// source, input, src, any case), else the first column. `no_header`: a CSV/TSV without a header
// row, its column 1 the text (no columns to choose). Throws t5s::Error for a missing file, an
// unknown column or a file without its header.
DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column, bool no_header = false);

}  // namespace t5s::detail
