// Text and JSON-lines sources: one row per non-blank line, streamed.
#include "input/input_source.h"
#include "t5s/error.h"

namespace t5s::input {
namespace {

class LineSource : public InputReader::Source {
public:
    LineSource(const std::string& path, const InputFields& fields, bool json)
        : path_(path), fields_(fields), json_(json), in_(open_input(path)), lines_(in_) {}

    bool next(InputRecord* record) override {
        std::string line;
        while (lines_.next(&line)) {
            if (is_blank_line(line)) continue;
            const std::string where = path_ + ":" + std::to_string(lines_.line_no());
            require_utf8_field(line, "line", where);
            if (json_ ||
                line[line.find_first_not_of(" \t")] == '{') {  // text files: a '{' line is a JSON row (generate's contract)
                record_from_object(parse(line, where), fields_, where, record);
            } else {  // the line is the text (checked above: UTF-8, not blank)
                record->where = where;
                record->texts.assign(1, std::move(line));
                record->spans.clear();
                record->label_json.clear();
            }
            return true;
        }
        return false;
    }

private:
    static nlohmann::json parse(const std::string& line, const std::string& where) {
        nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) throw RowProblem{where, "malformed JSON line"};
        return j;
    }

    std::string path_;
    InputFields fields_;
    bool json_;
    std::ifstream in_;
    LineReader lines_;
};

}  // namespace

std::unique_ptr<InputReader::Source> text_source(const std::string& path, const InputFields& fields) {
    return std::make_unique<LineSource>(path, fields, false);
}

std::unique_ptr<InputReader::Source> jsonl_source(const std::string& path, const InputFields& fields) {
    return std::make_unique<LineSource>(path, fields, true);
}

}  // namespace t5s::input
