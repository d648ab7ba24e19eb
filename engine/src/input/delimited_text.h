#pragma once
// The one reader of delimited text (CSV, TSV) for datasets and training data: RFC 4180 quoting
// (a field that starts with '"' is quoted, '""' inside it is a quote, quoted fields may span
// lines), a '\r' before a line end dropped. Torch-free; fuzzed by tests/fuzz/fuzz_dataset.
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace t5s {

struct DelimitedRecord {
    std::vector<std::string> fields;  // empty for a blank line
    int64_t first_line = 0;           // 1-based line the record starts on
    int64_t last_line = 0;            // line it ends on (> first_line when a quoted field spans lines)
    bool unterminated_quote = false;  // a quoted field ran to the end of the input
    bool stray_quote = false;         // text after a quoted field's closing quote ("ab"c): kept, as
                                      // Python's csv does, but RFC 4180 (and csv's strict mode) refuse it
};

// Reads the next record; false at the end of the input. `line_no` counts the lines read so far.
bool read_delimited_record(std::istream& in, char separator, int64_t* line_no, DelimitedRecord* record);

// Appends one field as read_delimited_record reads it back: a field holding the separator, a quote
// or a line break (CR or LF) is quoted with quotes doubled (RFC 4180, also for TSV: what pandas and
// Python's csv module read back).
void append_delimited_field(std::string_view field, char separator, std::string& out);

}  // namespace t5s
