#include "cli/input_rows.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/span_json.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s::cli {
namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

InputRow decode_row(std::string& line, bool jsonl, const std::string& where) {
    InputRow row;
    std::string& text = row.text;
    if (jsonl || line[line.find_first_not_of(" \t")] == '{') {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception& e) {
            throw Error(ErrorCode::InvalidArgument, where + ": malformed JSON line (" + std::string(e.what()) + ")");
        }
        if (!j.is_object() || !j.contains("text") || !j["text"].is_string())
            throw Error(ErrorCode::InvalidArgument, where + ": JSONL row needs a string field \"text\"");
        text = j["text"].get<std::string>();
        row.spans = row_spans(j, where);
        if (j.contains("label")) row.label = j["label"];
    } else {
        text = std::move(line);
    }
    require_valid_utf8(text, where);
    return row;
}

}  // namespace

InputRows::InputRows(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec))
        throw Error(ErrorCode::InvalidArgument, path_ + ": is a directory, not an input file");
    jsonl_ = path_.size() >= 6 && path_.substr(path_.size() - 6) == ".jsonl";
    rows_ = scan([](int64_t) { return true; }, [](int64_t, InputRow&&) {});
    if (rows_ == 0) throw Error(ErrorCode::InvalidArgument, path_ + ": no inputs (the file is empty or has only blank lines)");
}

int64_t InputRows::scan(const std::function<bool(int64_t)>& parse, const std::function<void(int64_t, InputRow&&)>& row) const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, path_ + ": cannot open input file");
    std::string line;
    int64_t line_no = 0, index = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (blank(line)) continue;
        if (parse(index)) row(index, decode_row(line, jsonl_, path_ + ":" + std::to_string(line_no)));
        ++index;
    }
    if (in.bad()) throw Error(ErrorCode::InvalidArgument, path_ + ": read error at line " + std::to_string(line_no + 1));
    return index;
}

void InputRows::for_each_batch(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                               const std::function<void(int64_t, const std::vector<std::string>&)>& visit) const {
    for_each_batch_rows(batch_size, wanted, [&](int64_t first, const std::vector<InputRow>& rows) {
        std::vector<std::string> texts;
        for (const auto& r : rows) texts.push_back(r.text);
        visit(first, texts);
    });
}

void InputRows::for_each_batch_rows(int64_t batch_size, const std::function<bool(int64_t)>& wanted,
                                    const std::function<void(int64_t, const std::vector<InputRow>&)>& visit) const {
    std::vector<InputRow> batch;
    int64_t first = -1;
    auto flush = [&] {
        if (!batch.empty()) visit(first, batch);
        batch.clear();
    };
    const int64_t rows = scan([&](int64_t index) { return wanted(index / batch_size); },
         [&](int64_t index, InputRow&& row) {
             const int64_t start = index - index % batch_size;
             if (start != first) flush(), first = start;
             batch.push_back(std::move(row));
             if (static_cast<int64_t>(batch.size()) == batch_size) flush();
         });
    flush();
    if (rows != rows_)
        throw Error(ErrorCode::InvalidArgument, path_ + ": changed while being read (" + std::to_string(rows_) + " rows, now " +
                                                    std::to_string(rows) + ")");
}

}  // namespace t5s::cli
