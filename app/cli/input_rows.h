#pragma once
// The rows of a `generate --input` file, read lazily: a 10 M-row file is never held in memory.
// The file is read by the one input reader (t5s/input_reader.h: text, JSON lines, CSV, TSV or a Label
// Studio export; its line rule and bad rows): a row has its "text", optionally spans ([[start, end,
// label], ...] in code points) and a label (any JSON value, carried into the output). Good rows are
// numbered 0, 1, ... in file order: the global index (skipped bad rows take no number).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/input_reader.h"
#include "t5s/spans.h"

namespace t5s::cli {

struct InputRow {
    std::string text;
    std::vector<Span> spans;  // protected spans of the row (code points)
    nlohmann::json label;     // the row's label; null when it has none
    std::string where;        // "file:line" or "file: task N"
};

class InputRows {
public:
    // Reads the file once, in constant memory (a Label Studio export: parsed whole): counts its rows
    // and checks every one, so that a bad row is reported before any model is loaded. Under
    // BadRowPolicy::Fail a bad row throws t5s::Error naming file and line; under Skip it is counted
    // (bad_rows(), the first ones kept in bad_row_samples()). Also throws for the file: missing, a
    // directory, no rows.
    // `fields`: the column rule, or the user's --text-field / --no-header (t5s::text_fields).
    explicit InputRows(std::string path, BadRowPolicy policy = BadRowPolicy::Fail, InputFields fields = {});

    int64_t size() const { return rows_; }
    InputFormat format() const { return format_; }
    int64_t bad_rows() const { return bad_rows_; }
    const std::vector<BadRow>& bad_row_samples() const { return bad_samples_; }  // the first 10

    // Reads the file again from the start and calls visit(first_row, texts) for every global batch
    // b (rows [b*batch_size, (b+1)*batch_size)) for which wanted(b) is true; other batches are
    // skipped without being kept. Memory: one batch.
    void for_each_batch(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                        const std::function<void(int64_t, const std::vector<std::string>&)>& visit) const;
    // The same with each row's spans and label.
    void for_each_batch_rows(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                             const std::function<void(int64_t, const std::vector<InputRow>&)>& visit) const;

private:
    // Calls row(index, row) for every row whose parse(index) is true (the others are only counted);
    // returns the number of rows; counts the bad rows skipped and keeps the first 10.
    int64_t scan(const std::function<bool(int64_t)>& parse, const std::function<void(int64_t, InputRow&&)>& row, int64_t* bad,
                 std::vector<BadRow>* samples) const;

    std::string path_;
    BadRowPolicy policy_;
    InputFields fields_;
    InputFormat format_ = InputFormat::Text;
    int64_t rows_ = 0;
    int64_t bad_rows_ = 0;
    std::vector<BadRow> bad_samples_;
};

}  // namespace t5s::cli
