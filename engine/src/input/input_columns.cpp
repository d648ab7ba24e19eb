// The column rule (which column holds the text, which the target) and input_columns: the text
// fields a file offers, for a front end that lets the user pick one (the app's batch panel). Reads
// only what names them: the header record, the first JSON object.
#include <algorithm>
#include <cctype>

#include "input/delimited_text.h"
#include "input/input_source.h"

namespace t5s {

const std::vector<std::string>& text_column_names() {
    static const std::vector<std::string> names = {"text", "sentence", "sentence1", "source", "input", "src"};
    return names;
}

const std::vector<std::string>& target_column_names() {
    static const std::vector<std::string> names = {"target", "output", "paraphrase", "sentence2", "tgt"};
    return names;
}

namespace {

bool same_in_any_case(const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
               return std::tolower(x) == std::tolower(y);
           });
}

}  // namespace

std::string pick_column(const std::vector<std::string>& columns, const std::vector<std::string>& names) {
    for (const auto& name : names) {
        if (std::find(columns.begin(), columns.end(), name) != columns.end()) return name;
        for (const auto& c : columns)
            if (same_in_any_case(c, name)) return c;
    }
    return "";
}

namespace {

std::vector<std::string> chosen_or(const std::string& chosen, const std::vector<std::string>& rule) {
    return chosen.empty() ? rule : std::vector<std::string>{chosen};
}

}  // namespace

InputFields text_fields(const ColumnChoice& choice) {
    InputFields fields;
    fields.texts = {chosen_or(choice.text_field, text_column_names())};
    fields.no_header = choice.no_header;
    return fields;
}

InputFields pair_fields(const ColumnChoice& choice) {
    InputFields fields = text_fields(choice);
    fields.texts.push_back(chosen_or(choice.target_field, target_column_names()));
    return fields;
}

namespace {

// The keys of `object` whose values are strings (nlohmann keeps keys sorted).
std::vector<std::string> string_fields(const nlohmann::json& object) {
    std::vector<std::string> out;
    if (!object.is_object()) return out;
    for (auto it = object.begin(); it != object.end(); ++it)
        if (it->is_string()) out.push_back(it.key());
    return out;
}

// The first non-blank record, as the CSV/TSV source reads its header (BOM dropped).
std::vector<std::string> header_of(const std::string& path, char separator) {
    std::ifstream in = input::open_input(path);
    int64_t line = 0;
    DelimitedRecord header;
    while (read_delimited_record(in, separator, &line, &header)) {
        if (header.fields.empty() || (header.fields.size() == 1 && is_blank_line(header.fields[0]))) continue;
        if (header.fields[0].compare(0, 3, "\xEF\xBB\xBF") == 0) header.fields[0].erase(0, 3);
        return header.fields;
    }
    return {};
}

// The string fields of the first line that is a JSON object (blank and malformed lines passed over:
// the reader reports them as bad rows).
std::vector<std::string> first_object_fields(const std::string& path) {
    std::ifstream in = input::open_input(path);
    LineReader lines(in);
    std::string line;
    while (lines.next(&line)) {
        if (is_blank_line(line)) continue;
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_object()) return string_fields(j);
    }
    return {};
}

// The string fields of the first task's data (the export is parsed whole, as its source does).
std::vector<std::string> first_task_fields(const std::string& path) {
    std::ifstream in = input::open_input(path);
    const nlohmann::json tasks = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (tasks.is_discarded() || !tasks.is_array()) return {};  // the reader names the problem
    for (const auto& task : tasks)
        if (task.is_object() && task.contains("data")) return string_fields(task["data"]);
    return {};
}

}  // namespace

std::vector<std::string> input_columns(const std::string& path, InputFormat format) {
    switch (format) {
        case InputFormat::Text: return {};
        case InputFormat::Jsonl: return first_object_fields(path);
        case InputFormat::Csv: return header_of(path, ',');
        case InputFormat::Tsv: return header_of(path, '\t');
        case InputFormat::LabelStudio: return first_task_fields(path);
    }
    return {};
}

}  // namespace t5s
