// A row held as a JSON object -> InputRecord: the text fields, spans and label, under the one rule.
#include "input/input_source.h"
#include "t5s/error.h"
#include "t5s/span_json.h"
#include "t5s/tokenizer.h"

namespace t5s::input {
namespace {

std::string names_text(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "\"" : "/\"") + n + "\"";
    return out;
}

std::string text_field(const nlohmann::json& row, const std::vector<std::string>& names, const std::string& where) {
    for (const auto& name : names) {
        const auto it = row.find(name);
        if (it == row.end()) continue;
        if (!it->is_string()) throw RowProblem{where, "field \"" + name + "\" is not a string"};
        std::string text = it->get<std::string>();
        require_utf8_field(text, name, where);
        if (is_blank_line(text)) throw RowProblem{where, "empty " + names[0]};
        return text;
    }
    throw RowProblem{where, "missing " + names[0] + " field (looked for " + names_text(names) + ")"};
}

std::vector<Span> spans_of(const nlohmann::json& row, const std::string& text, const std::string& where) {
    const char* key = row.contains("spans") && !row["spans"].is_null()         ? "spans"
                      : row.contains("entities") && !row["entities"].is_null() ? "entities"
                                                                               : nullptr;
    if (!key) return {};
    const std::string at = std::string("\"") + key + "\"";
    try {
        std::vector<Span> spans = spans_from_json(row[key], at);
        check_spans(text, spans, at);
        return spans;
    } catch (const Error& e) {
        throw RowProblem{where, e.what()};
    }
}

}  // namespace

void require_utf8_field(const std::string& text, const std::string& name, const std::string& where) {
    try {
        require_valid_utf8(text, "");
    } catch (const Error& e) {
        const std::string message = e.what();  // ": invalid UTF-8 at byte N"
        throw RowProblem{where, "invalid UTF-8 in '" + name + "'" + message.substr(message.rfind(" at byte"))};
    }
}

void record_from_object(const nlohmann::json& row, const InputFields& fields, const std::string& where, InputRecord* record) {
    if (!row.is_object()) throw RowProblem{where, "expected a JSON object"};
    record->where = where;
    record->texts.clear();
    for (const auto& names : fields.texts) record->texts.push_back(text_field(row, names, where));
    record->spans = spans_of(row, record->texts.at(0), where);
    record->label_json.clear();
    const auto label = row.find("label");
    if (fields.numeric_label && (label == row.end() || !label->is_number()))
        throw RowProblem{where, "needs a numeric field \"label\""};
    if (label != row.end() && !label->is_null()) record->label_json = label->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace t5s::input
