// InputReader: picks the format's source and applies the bad-row policy.
#include "input/input_source.h"
#include "t5s/error.h"

namespace t5s {

InputReader::InputReader(std::string path, InputFields fields, BadRowPolicy policy, std::function<void(const BadRow&)> on_bad,
                         std::optional<InputFormat> format)
    : path_(std::move(path)), format_(format ? *format : input_format_of(path_)), policy_(policy), on_bad_(std::move(on_bad)) {
    if (fields.texts.empty() || fields.texts[0].empty()) throw Error(ErrorCode::Internal, "InputReader: no text field asked for");
    if (format_ == InputFormat::Text && fields.texts.size() > 1) {
        // Pairs need columns: a .txt file is TSV with a header (train's contract); another name is refused.
        const bool txt = path_.size() >= 4 && path_.compare(path_.size() - 4, 4, ".txt") == 0;
        if (!txt) {
            const auto dot = path_.find_last_of("./");
            const std::string ext = dot != std::string::npos && path_[dot] == '.' ? path_.substr(dot) : "";
            throw Error(ErrorCode::InvalidArgument,
                        path_ + ": unknown data format '" + ext + "' (expected .jsonl, .json, .csv or .tsv)");
        }
        format_ = InputFormat::Tsv;
    }
    switch (format_) {
        case InputFormat::Text: source_ = input::text_source(path_, fields); break;
        case InputFormat::Jsonl: source_ = input::jsonl_source(path_, fields); break;
        case InputFormat::Csv: source_ = input::delimited_source(path_, ',', fields); break;
        case InputFormat::Tsv: source_ = input::delimited_source(path_, '\t', fields); break;
        case InputFormat::LabelStudio: source_ = input::labelstudio_source(path_, fields); break;
    }
}

InputReader::~InputReader() = default;

bool InputReader::next(InputRecord* record) {
    while (true) {
        try {
            return source_->next(record);
        } catch (const input::RowProblem& p) {
            if (policy_ == BadRowPolicy::Fail) throw Error(ErrorCode::CorruptFile, p.where + ": " + p.reason);
            if (on_bad_) on_bad_({p.where, p.reason});
        }
    }
}

}  // namespace t5s
