#pragma once
// The rows of a `generate --input` file, read lazily: a 10 M-row file is never held in memory.
// A row is a non-blank line: plain text, or (a .jsonl file, or a line starting with '{') a JSON
// object with a string "text", optionally "spans" (or "entities", [[start, end, label], ...] in
// code points) and a "label" (any JSON value, carried into the output). Rows are numbered 0, 1, ...
// in file order: the global index.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/spans.h"

namespace t5s::cli {

struct InputRow {
    std::string text;
    std::vector<Span> spans;  // protected spans of the row (code points)
    nlohmann::json label;     // the row's label; null when it has none
};

class InputRows {
public:
    // Reads the file once, in constant memory: counts its rows and checks every one (JSON, "text",
    // UTF-8), so that a bad row is reported before any model is loaded. Throws t5s::Error naming
    // file and line (or the file: missing, a directory, no rows).
    explicit InputRows(std::string path);

    int64_t size() const { return rows_; }

    // Reads the file again from the start and calls visit(first_row, texts) for every global batch
    // b (rows [b*batch_size, (b+1)*batch_size)) for which wanted(b) is true; other batches are
    // skipped without being kept. Memory: one batch.
    void for_each_batch(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                        const std::function<void(int64_t, const std::vector<std::string>&)>& visit) const;
    // The same with each row's spans and label.
    void for_each_batch_rows(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                             const std::function<void(int64_t, const std::vector<InputRow>&)>& visit) const;

private:
    // Calls row(index, text) for every row whose parse(index) is true (the others are only counted);
    // returns the number of rows.
    int64_t scan(const std::function<bool(int64_t)>& parse, const std::function<void(int64_t, InputRow&&)>& row) const;

    std::string path_;
    bool jsonl_ = false;
    int64_t rows_ = 0;
};

}  // namespace t5s::cli
