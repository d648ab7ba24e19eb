#pragma once
// `generate --input FILE --output OUT`: every candidate as a labelled row, in the format the rows
// came in (or --output-format): its text, its spans at their offsets in it, the row's label and the
// source (t5s::OutputWriter). Written atomically when the run ends.
#include <string>

#include "cli/input_rows.h"
#include "t5s/atomic_file.h"
#include "t5s/input_reader.h"
#include "t5s/model.h"

namespace t5s::cli {

// The format of `--output path`: its extension's (.jsonl/.ndjson, .csv, .tsv/.tab; .json is JSON lines,
// or a Label Studio export when the input is one), else `format_flag` (--output-format), else the
// input's (text input gives JSONL). A flag that contradicts the extension is a UsageError.
InputFormat output_format_for(const std::string& path, const std::string& format_flag, InputFormat input_format);

class LabelledOutput {
public:
    // Refuses an existing `path` unless `overwrite` (--force), as export does: before any row is made.
    LabelledOutput(const std::string& path, InputFormat format, bool overwrite);
    void add(const GenerationResult& result, const InputRow& row);
    void commit();
    int64_t rows() const { return rows_; }
    InputFormat format() const { return format_; }

private:
    InputFormat format_;
    AtomicFile file_;
    OutputWriter writer_;
    int64_t rows_ = 0;
};

}  // namespace t5s::cli
