// A row held as a JSON object -> InputRecord: the text fields, spans and label, under the one rule.
#include "input/input_source.h"
#include "t5s/error.h"
#include "t5s/source_text.h"
#include "t5s/span_json.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"

namespace t5s::input {
namespace {

// A column name as a message shows it: on one line, at most 40 bytes (a hostile file's names are
// not ours to print whole).
std::string shown_name(const std::string& name) {
    std::string out(utf8_prefix(name, 40));
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return out.size() < name.size() ? out + "..." : out;
}

// "a"/"b"/"c", the first 12 names, then how many more.
std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < 12; ++i) out += (out.empty() ? "\"" : "/\"") + shown_name(names[i]) + "\"";
    if (names.size() > 12) out += " and " + std::to_string(names.size() - 12) + " more";
    return out;
}

std::vector<std::string> keys_of(const nlohmann::json& row) {
    std::vector<std::string> keys;
    for (auto it = row.begin(); it != row.end(); ++it) keys.push_back(it.key());
    return keys;
}

std::string text_field(const nlohmann::json& row, const InputFields& fields, size_t k, const std::string& where) {
    const std::string name = pick_column(keys_of(row), fields.texts[k]);
    if (name.empty())
        throw RowProblem{
            where, "missing " + field_role(fields, k) + " field (" + no_column_reason(fields, k, keys_of(row), "row") + ")"};
    const auto& value = row[name];
    if (!value.is_string()) throw RowProblem{where, "field \"" + name + "\" is not a string"};
    std::string text = value.get<std::string>();
    require_utf8_field(text, name, where);
    if (is_empty_text(text)) throw RowProblem{where, "empty " + field_role(fields, k)};  // the one rule of t5s/source_text.h
    return text;
}

std::vector<Span> spans_of(const nlohmann::json& row, const std::string& text, const std::string& where) {
    const char* key = nullptr;
    const nlohmann::json* given = spans_field(row, &key);
    if (!given) return {};
    const std::string at = std::string("\"") + key + "\"";
    try {
        std::vector<Span> spans = spans_from_json(*given, at);
        check_spans(text, spans, at);
        return spans;
    } catch (const Error& e) {
        throw RowProblem{where, e.what()};
    }
}

}  // namespace

std::string field_role(const InputFields& fields, size_t k) {
    if (fields.texts.size() == 1) return "text";
    return k == 0 ? "source" : k == 1 ? "target" : "field " + std::to_string(k + 1);
}

std::string no_column_reason(const InputFields& fields, size_t k, const std::vector<std::string>& present,
                             const std::string& holder) {
    const std::string role = field_role(fields, k);
    const std::string flag = role == "text" ? "--text-field" : role == "source" ? "--source-field" : "--target-field";
    return "looked for " + quoted_list(fields.texts[k]) + ", any case; the " + holder + " has " +
           (present.empty() ? std::string("none") : quoted_list(present)) + "; name one with " + flag + " NAME";
}

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
    for (size_t k = 0; k < fields.texts.size(); ++k) record->texts.push_back(text_field(row, fields, k, where));
    record->spans = spans_of(row, record->texts.at(0), where);
    record->label_json.clear();
    const auto label = row.find("label");
    if (fields.numeric_label && (label == row.end() || !label->is_number()))
        throw RowProblem{where, "needs a numeric field \"label\""};
    if (label != row.end() && !label->is_null())
        record->label_json = label->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace t5s::input
