#pragma once
// The per-format row sources behind t5s::InputReader (t5s/input_reader.h).
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "t5s/input_reader.h"

namespace t5s::input {

// A bad row: the source has moved past it; InputReader applies the BadRowPolicy.
struct RowProblem {
    std::string where;
    std::string reason;
};

}  // namespace t5s::input

namespace t5s {

class InputReader::Source {
public:
    virtual ~Source() = default;
    // The next row into *record; false at the end. Throws input::RowProblem for a bad row.
    virtual bool next(InputRecord* record) = 0;
};

}  // namespace t5s

namespace t5s::input {

// Fills record->texts, spans and label_json from a row held as a JSON object (a JSON line, a
// CSV/TSV record by its header, a Label Studio task's fields). Throws RowProblem naming `where`.
void record_from_object(const nlohmann::json& row, const InputFields& fields, const std::string& where, InputRecord* record);
// Why fields.texts[k] is not in a row or header (`holder`) that has `present`: the names looked for,
// what the file has and the flag that names a column ("looked for "text"/..., any case; the header
// has "a"/"b"; name one with --text-field NAME").
std::string no_column_reason(const InputFields& fields, size_t k, const std::vector<std::string>& present,
                             const std::string& holder);
// fields.texts[k]'s role in messages: "text"; for pairs "source" and "target".
std::string field_role(const InputFields& fields, size_t k);
// Throws RowProblem when `text` is not UTF-8 ("invalid UTF-8 in 'name' at byte N").
void require_utf8_field(const std::string& text, const std::string& name, const std::string& where);

std::unique_ptr<InputReader::Source> text_source(const std::string& path, const InputFields& fields);
std::unique_ptr<InputReader::Source> jsonl_source(const std::string& path, const InputFields& fields);
std::unique_ptr<InputReader::Source> delimited_source(const std::string& path, char separator, const InputFields& fields);
std::unique_ptr<InputReader::Source> labelstudio_source(const std::string& path, const InputFields& fields);

// Opens `path` for reading as bytes; throws t5s::Error(FileNotFound) naming it.
std::ifstream open_input(const std::string& path);

}  // namespace t5s::input
