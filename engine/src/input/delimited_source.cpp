// CSV / TSV source: a header row naming the columns, then one row per record (RFC 4180 quoting,
// the shared reader in delimited_text.h), streamed.
#include <algorithm>
#include <optional>

#include "input/delimited_text.h"
#include "input/input_source.h"
#include "t5s/error.h"
#include "t5s/span_json.h"

namespace t5s::input {
namespace {

bool blank_record(const DelimitedRecord& r) { return r.fields.empty() || (r.fields.size() == 1 && is_blank_line(r.fields[0])); }

class DelimitedSource : public InputReader::Source {
public:
    DelimitedSource(const std::string& path, char separator, const InputFields& fields)
        : path_(path), sep_(separator), fields_(fields), in_(open_input(path)) {
        DelimitedRecord header;
        while (read_delimited_record(in_, sep_, &line_, &header) && blank_record(header)) {
        }
        if (header.fields.empty() || blank_record(header))
            throw Error(ErrorCode::CorruptFile, path + ":1: " + (fields.no_header ? "no rows" : "missing header row"));
        if (header.fields[0].compare(0, 3, "\xEF\xBB\xBF") == 0) header.fields[0].erase(0, 3);  // BOM
        const std::string at = path + ":" + std::to_string(header.first_line);
        if (fields.no_header) {
            by_position(header, at);
            return;
        }
        header_ = std::move(header.fields);
        for (size_t k = 0; k < fields.texts.size(); ++k) require_column(k, at);
        if (fields.numeric_label && std::find(header_.begin(), header_.end(), "label") == header_.end())
            throw Error(ErrorCode::CorruptFile, at + ": header has no label column");
    }

    bool next(InputRecord* record) override {
        DelimitedRecord r;
        while (take_pending(&r) || read_delimited_record(in_, sep_, &line_, &r)) {
            if (blank_record(r) && !r.unterminated_quote) continue;
            const std::string where = path_ + ":" + std::to_string(r.first_line);
            if (r.unterminated_quote) throw RowProblem{where, "unterminated quoted field"};
            if (r.stray_quote) throw RowProblem{where, "stray quote: text after a quoted field's closing quote"};
            if (r.fields.size() != header_.size())
                throw RowProblem{where, std::string(r.fields.size() < header_.size() ? "missing" : "extra") + " column (" +
                                            std::to_string(r.fields.size()) + " fields, header has " +
                                            std::to_string(header_.size()) + ")"};
            record_from_object(object_of(r.fields, where), fields_, where, record);
            return true;
        }
        return false;
    }

private:
    void require_column(size_t k, const std::string& at) const {
        if (!pick_column(header_, fields_.texts[k]).empty()) return;
        throw Error(ErrorCode::CorruptFile, at + ": header has no " + field_role(fields_, k) + " column (" +
                                                no_column_reason(fields_, k, header_, "header") + ")");
    }

    // --no-header: the first record is a row; its columns are named by position (the text fields,
    // then "label" where asked, then "column N"), and the fields look for those names.
    void by_position(DelimitedRecord& first, const std::string& at) {
        const size_t needed = fields_.texts.size() + (fields_.numeric_label ? 1 : 0);
        if (first.fields.size() < needed)
            throw Error(ErrorCode::CorruptFile, at + ": --no-header needs " + std::to_string(needed) +
                                                    " columns, the first row has " + std::to_string(first.fields.size()));
        for (size_t k = 0; k < first.fields.size(); ++k) {
            const bool text = k < fields_.texts.size(), label = !text && k < needed;
            header_.push_back(label ? "label" : "column " + std::to_string(k + 1));
            if (text) fields_.texts[k] = {header_.back()};
        }
        pending_ = std::move(first);
    }

    // The record as {column: cell}; a spans column ("spans", "entities") parsed as JSON, an empty
    // one or an empty "label" left out (so an empty "spans" cell reads "entities", as null does).
    nlohmann::json object_of(std::vector<std::string>& cells, const std::string& where) const {
        nlohmann::json row = nlohmann::json::object();
        for (size_t k = 0; k < header_.size(); ++k) {
            const std::string& column = header_[k];
            const bool spans = is_span_field(column);
            if ((spans || column == "label") && cells[k].empty()) continue;
            if (spans) {
                row[column] = nlohmann::json::parse(cells[k], nullptr, false);
                if (row[column].is_discarded())
                    throw RowProblem{where, "'" + column + "' is not a JSON list of [start, end, label]"};
            } else if (column == "label" && fields_.numeric_label) {
                const nlohmann::json number = nlohmann::json::parse(cells[k], nullptr, false);
                row[column] = number.is_number() ? number : nlohmann::json(cells[k]);
            } else {
                row[column] = std::move(cells[k]);
            }
        }
        return row;
    }

    bool take_pending(DelimitedRecord* r) {
        if (!pending_) return false;
        *r = std::move(*pending_);
        pending_.reset();
        return true;
    }

    std::string path_;
    char sep_;
    InputFields fields_;
    std::ifstream in_;
    int64_t line_ = 0;
    std::vector<std::string> header_;
    std::optional<DelimitedRecord> pending_;  // --no-header: the first row, read with the header's place
};

}  // namespace

std::unique_ptr<InputReader::Source> delimited_source(const std::string& path, char separator, const InputFields& fields) {
    return std::make_unique<DelimitedSource>(path, separator, fields);
}

}  // namespace t5s::input
