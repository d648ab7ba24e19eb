#pragma once
// The one reader of input rows for every front end (generate --input, train, sts, the app's batch
// panel): plain text, JSON lines, CSV, TSV and Label Studio JSON exports. Torch-free.
//
// Formats (input_format_of): .jsonl/.ndjson JSON lines; .csv; .tsv/.tab; .json a Label Studio
// export when it starts with '[' (else JSON lines); any other name (.txt, none) JSON lines when
// its first non-blank line starts with '{', else one text per line.
//  - text: each line is a row's text, verbatim; a line starting with '{' (after spaces) is a JSON
//    row as in JSON lines (generate's contract).
//  - JSON lines: an object per line; the text fields are strings, "spans" (or "entities") a list of
//    [start, end, label], "label" any JSON value.
//  - CSV / TSV: a header row naming the columns (RFC 4180 quoting, quoted fields may span lines), or
//    none with InputFields::no_header (columns by position); every record has the header's number
//    of fields; a "spans" cell holds the JSON list, a "label" cell the label (text).
//  - Label Studio: an array of tasks; the text is data's field by the column rule (below; else
//    data's only string field); the first annotation not cancelled (else the first prediction)
//    gives `labels` results -> spans [start, end, label] and `choices` -> the row's label.
//
// The one rule, in every format: a line ends at LF (a CR before it is dropped: CRLF); a UTF-8 BOM at
// the start of the file is dropped; blank lines (whitespace only: t5s/source_text.h's empty text)
// are skipped; a row with invalid UTF-8, malformed JSON, a missing or non-string field, an empty
// text, a wrong number of fields, bad quoting or spans outside the text is a bad row, named
// "file:line: reason" ("file: task N: reason" for Label Studio) on one line. BadRowPolicy::Fail stops at the first one
// (t5s::Error), Skip reports it and goes on.
//
// Offsets: spans are Unicode code points [start, end) in every format — what spaCy, doccano and
// Label Studio's Text tag store (its editor counts characters with JavaScript's string iterator,
// i.e. by code point, not UTF-16 units).
//
// Memory: text, JSON lines, CSV and TSV are read as a stream (one row at a time); a Label Studio
// export is one JSON document and is parsed whole.
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5s/enum_names.h"
#include "t5s/spans.h"

namespace t5s {

enum class InputFormat { Text, Jsonl, Csv, Tsv, LabelStudio };
template <>
struct EnumNames<InputFormat> {
    static constexpr const char* kWhat = "format";
    static constexpr EnumName<InputFormat> kNames[] = {{InputFormat::Text, "txt"},
                                                       {InputFormat::Jsonl, "jsonl"},
                                                       {InputFormat::Csv, "csv"},
                                                       {InputFormat::Tsv, "tsv"},
                                                       {InputFormat::LabelStudio, "labelstudio"}};
};
// By extension, then by content (see above). Throws t5s::Error(FileNotFound) when unreadable.
InputFormat input_format_of(const std::string& path);
// The format a name alone says (.jsonl/.ndjson, .csv, .tsv/.tab, in any case); none for any other
// name (.json, .txt, none: the content decides). Also what `generate --output FILE` writes.
std::optional<InputFormat> input_format_named(const std::string& path);
// The fields a file offers as a row's text, for a front end that lets the user pick one (the app's
// batch panel): CSV/TSV its header; JSON lines the string fields of its first JSON object; a Label
// Studio export the string fields of its first task's data (the file is parsed whole); plain text
// none. Throws t5s::Error(FileNotFound) when unreadable; a malformed file gives none (the reader
// names its problem).
std::vector<std::string> input_columns(const std::string& path, InputFormat format);

enum class BadRowPolicy { Skip, Fail };
template <>
struct EnumNames<BadRowPolicy> {
    static constexpr const char* kWhat = "--on-bad-row";
    static constexpr EnumName<BadRowPolicy> kNames[] = {{BadRowPolicy::Skip, "skip"}, {BadRowPolicy::Fail, "fail"}};
};

struct BadRow {
    std::string where;   // "file:line" or "file: task N"
    std::string reason;  // one line
};

// ---- the column rule -------------------------------------------------------------------------------
// Which CSV/TSV column, JSON-lines key or Label Studio data field holds a row's text and, for pairs,
// its target: one rule for every front end (generate, train, sts, the app's batch panel). The first
// of these names that the file has wins, compared in any case (the exact spelling before another
// case): a file with both `text` and `sentence` takes `text`. A field the user names (--text-field,
// --source-field, --target-field) replaces the list.
const std::vector<std::string>& text_column_names();    // text, sentence, sentence1, source, input, src
const std::vector<std::string>& target_column_names();  // target, output, paraphrase, sentence2, tgt
// The column of `columns` that `names` picks under the rule; "" when none.
std::string pick_column(const std::vector<std::string>& columns, const std::vector<std::string>& names);

// What a front end reads from each row.
struct InputFields {
    // The text fields, each with the names it may have (the column rule): one for generate and the
    // batch panel, two (text, target) for train and sts. With more than one, a plain text file is
    // read as TSV.
    std::vector<std::vector<std::string>> texts = {text_column_names()};
    bool numeric_label = false;  // the row must have a numeric "label" (sts)
    // CSV/TSV without a header row, read by position: column 1 the text, column 2 the target (then
    // "label" where numeric_label). Other formats ignore it.
    bool no_header = false;
};

// The user's choice of columns (--text-field, --source-field, --target-field, --no-header).
struct ColumnChoice {
    std::string text_field;    // "" = the rule's text names
    std::string target_field;  // "" = the rule's target names
    bool no_header = false;
};
InputFields text_fields(const ColumnChoice& choice);  // one text: generate, the batch panel
InputFields pair_fields(const ColumnChoice& choice);  // text and target: train, sts

struct InputRecord {
    std::string where;               // "file:line" or "file: task N"
    std::vector<std::string> texts;  // in InputFields::texts order
    std::vector<Span> spans;         // of texts[0]: code points, checked inside it, no overlap
    std::string label_json;          // the row's label as JSON text ("" = none), e.g. "\"PER\"", "4.2"
};

class InputReader {
public:
    // Opens the file (format: input_format_of unless given). on_bad is called for every bad row
    // under Skip (may be empty); under Fail the first bad row throws t5s::Error("where: reason").
    InputReader(std::string path, InputFields fields, BadRowPolicy policy, std::function<void(const BadRow&)> on_bad = {},
                std::optional<InputFormat> format = {});
    ~InputReader();
    InputReader(const InputReader&) = delete;
    InputReader& operator=(const InputReader&) = delete;

    InputFormat format() const { return format_; }
    const std::string& path() const { return path_; }
    // The next good row; false at the end.
    bool next(InputRecord* record);

    class Source;  // one per format (engine/src/input/)

private:
    std::string path_;
    InputFormat format_;
    BadRowPolicy policy_;
    std::function<void(const BadRow&)> on_bad_;
    std::unique_ptr<Source> source_;
};

// Lines of a stream under the one rule (LF / CRLF, BOM at the start dropped). Used by the row
// formats and by readers of other JSON-lines files (merge's parts, resumed --out files).
class LineReader {
public:
    explicit LineReader(std::istream& in) : in_(in) {}
    // The next line (without its end); false at the end of the input.
    bool next(std::string* line);
    int64_t line_no() const { return line_no_; }          // 1-based number of the line last read
    bool ended_with_newline() const { return newline_; }  // false: the last line has no LF (a cut write?)

private:
    std::istream& in_;
    int64_t line_no_ = 0;
    bool newline_ = true;
};

bool is_blank_line(const std::string& line);  // t5s::is_empty_text: only spaces, tabs, CR (or empty)

// ---- writing rows back (the same formats) --------------------------------------------------------
// One output row: a text with its spans (code points) and the label of the row it came from.
struct OutputRow {
    std::string text;
    std::vector<Span> spans;
    std::string label_json;  // "" = none
    std::string source;      // the input it paraphrases ("" = not written: a row read back as is)
    bool accepted = false;   // Label Studio: written as an annotation (else a prediction)
};

// Writes rows in a format so that InputReader reads them back equal (text, spans, label): JSON lines
// {"text", "spans", "label"[, "source"]}; CSV/TSV with the header text,label,spans[,source] (RFC
// 4180 quoting); Label Studio import JSON: tasks with data.text (and data.source) whose prediction
// (or annotation, for accepted rows) holds `labels` results [start, end) in code points with their
// text, and a `choices` result with the label. For the Label Studio config see README.
class OutputWriter {
public:
    // with_source: write the "source" field/column (generate's output).
    OutputWriter(InputFormat format, bool with_source, std::string model_version = "t5studio");
    std::string begin() const;              // the header / "[\n"
    std::string row(const OutputRow& row);  // one row, with its separator
    std::string end() const;                // "\n]\n" for Label Studio, else ""

private:
    InputFormat format_;
    bool with_source_;
    std::string model_version_;
    int64_t rows_ = 0;
};

// A label's text as CSV/TSV and Label Studio carry it: a JSON string's value, else the JSON text.
std::string label_text(const std::string& label_json);

}  // namespace t5s
