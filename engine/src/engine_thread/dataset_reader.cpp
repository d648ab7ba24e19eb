// LoadDataset's rows through the one input reader (BadRowPolicy::Skip): the column choice is the
// app's; formats, bad-row rules and span parsing are the reader's.
#include "engine_thread/dataset_reader.h"

#include <algorithm>
#include <cctype>

#include "t5s/error.h"
#include "t5s/input_reader.h"

namespace t5s::detail {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The column asked for (it must exist), else the first text-looking one, else the first.
std::string pick_column(const std::vector<std::string>& columns, const std::string& wanted, const std::string& file) {
    if (!wanted.empty()) {
        if (std::find(columns.begin(), columns.end(), wanted) == columns.end())
            throw Error(ErrorCode::InvalidArgument, file + ": no column '" + wanted + "'");
        return wanted;
    }
    for (const char* name : {"text", "source", "input", "sentence", "sentence1"})
        for (const auto& c : columns)
            if (lower(c) == name) return c;
    return columns.front();
}

}  // namespace

DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column) {
    const std::string file = path.string();
    const InputFormat format = input_format_of(file);
    DatasetRows out;
    out.columns = input_columns(file, format);
    InputFields fields;  // plain text, or a file naming no text column: the reader's "text" (its rows are then bad)
    if (!out.columns.empty()) {
        out.column = pick_column(out.columns, column, file);
        fields.texts = {{out.column}};
    }
    InputReader reader(file, fields, BadRowPolicy::Skip, [&](const BadRow& bad) { out.warnings.push_back(bad.where + ": " + bad.reason); },
                       format);
    InputRecord record;
    bool labelled = false;
    while (reader.next(&record)) {
        labelled = labelled || !record.spans.empty() || !record.label_json.empty();
        out.rows.push_back(std::move(record.texts[0]));
        out.spans.push_back(std::move(record.spans));
        out.labels.push_back(record.label_json.empty() ? std::string() : label_text(record.label_json));
    }
    if (!labelled) out.spans.clear(), out.labels.clear();
    return out;
}

}  // namespace t5s::detail
