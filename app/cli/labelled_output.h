#pragma once
// `generate --input FILE --output OUT`: every candidate as a labelled row, in the format the rows
// came in (or --output-format): its text, its spans at their offsets in it, the row's label and the
// source (t5s::OutputWriter). Written atomically when the run ends.
#include <string>

#include "t5s/atomic_file.h"
#include "cli/input_rows.h"
#include "t5s/input_reader.h"
#include "t5s/model.h"

namespace t5s::cli {

class LabelledOutput {
public:
    LabelledOutput(const std::string& path, InputFormat format);
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
