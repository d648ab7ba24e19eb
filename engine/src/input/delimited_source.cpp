// CSV / TSV source: a header row naming the columns, then one row per record (RFC 4180 quoting,
// the shared reader in delimited_text.h), streamed.
#include <algorithm>

#include "delimited_text.h"
#include "input/input_source.h"
#include "t5s/error.h"

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
        if (header.fields.empty() || blank_record(header)) throw Error(ErrorCode::CorruptFile, path + ":1: missing header row");
        header_ = std::move(header.fields);
        if (header_[0].compare(0, 3, "\xEF\xBB\xBF") == 0) header_[0].erase(0, 3);  // BOM
        const std::string at = path + ":" + std::to_string(header.first_line);
        for (const auto& names : fields.texts) require_column(names, at);
        if (fields.numeric_label) require_column({"label"}, at);
    }

    bool next(InputRecord* record) override {
        DelimitedRecord r;
        while (read_delimited_record(in_, sep_, &line_, &r)) {
            if (blank_record(r) && !r.unterminated_quote) continue;
            const std::string where = path_ + ":" + std::to_string(r.first_line);
            if (r.unterminated_quote) throw RowProblem{where, "unterminated quoted field"};
            if (r.stray_quote) throw RowProblem{where, "stray quote: text after a quoted field's closing quote"};
            if (r.fields.size() != header_.size())
                throw RowProblem{where, std::string(r.fields.size() < header_.size() ? "missing" : "extra") + " column (" +
                                            std::to_string(r.fields.size()) + " fields, header has " + std::to_string(header_.size()) + ")"};
            record_from_object(object_of(r.fields, where), fields_, where, record);
            return true;
        }
        return false;
    }

private:
    void require_column(const std::vector<std::string>& names, const std::string& at) const {
        for (const auto& n : names)
            if (std::find(header_.begin(), header_.end(), n) != header_.end()) return;
        std::string looked;
        for (const auto& n : names) looked += (looked.empty() ? "" : "/") + n;
        throw Error(ErrorCode::CorruptFile, at + ": header has no " + names[0] + " column (looked for " + looked + ")");
    }

    // The record as {column: cell}; "spans" parsed as JSON, an empty "label" left out.
    nlohmann::json object_of(std::vector<std::string>& cells, const std::string& where) const {
        nlohmann::json row = nlohmann::json::object();
        for (size_t k = 0; k < header_.size(); ++k) {
            const std::string& column = header_[k];
            if ((column == "spans" || column == "label") && cells[k].empty()) continue;
            if (column == "spans") {
                row[column] = nlohmann::json::parse(cells[k], nullptr, false);
                if (row[column].is_discarded()) throw RowProblem{where, "'spans' is not a JSON list of [start, end, label]"};
            } else if (column == "label" && fields_.numeric_label) {
                const nlohmann::json number = nlohmann::json::parse(cells[k], nullptr, false);
                row[column] = number.is_number() ? number : nlohmann::json(cells[k]);
            } else {
                row[column] = std::move(cells[k]);
            }
        }
        return row;
    }

    std::string path_;
    char sep_;
    InputFields fields_;
    std::ifstream in_;
    int64_t line_ = 0;
    std::vector<std::string> header_;
};

}  // namespace

std::unique_ptr<InputReader::Source> delimited_source(const std::string& path, char separator, const InputFields& fields) {
    return std::make_unique<DelimitedSource>(path, separator, fields);
}

}  // namespace t5s::input
