// LoadDataset's rows through the one input reader (BadRowPolicy::Skip): the column choice is the
// app's; formats, bad-row rules and span parsing are the reader's.
#include "engine_thread/dataset_reader.h"

#include <algorithm>

#include "t5s/error.h"
#include "t5s/input_reader.h"

namespace t5s::detail {
namespace {

// The column asked for (it must exist), else the one the reader's column rule picks (the same as
// generate's and train's), else the first: the panel shows the columns and lets the user choose.
std::string chosen_column(const std::vector<std::string>& columns, const std::string& wanted, const std::string& file) {
    if (!wanted.empty()) {
        if (std::find(columns.begin(), columns.end(), wanted) == columns.end())
            throw Error(ErrorCode::InvalidArgument, file + ": no column '" + wanted + "'");
        return wanted;
    }
    const std::string ruled = pick_column(columns, text_column_names());
    return ruled.empty() ? columns.front() : ruled;
}

}  // namespace

DatasetRows read_dataset(const std::filesystem::path& path, const std::string& column, bool no_header) {
    const std::string file = path.string();
    const InputFormat format = input_format_of(file);
    DatasetRows out;
    const bool by_position = no_header && (format == InputFormat::Csv || format == InputFormat::Tsv);
    if (!by_position) out.columns = input_columns(file, format);
    InputFields fields = text_fields({"", "", by_position});  // plain text, a headerless file: the reader's rule
    if (!out.columns.empty()) {
        out.column = chosen_column(out.columns, column, file);
        fields.texts = {{out.column}};
    }
    InputReader reader(
        file, fields, BadRowPolicy::Skip, [&](const BadRow& bad) { out.warnings.push_back(bad.where + ": " + bad.reason); },
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
