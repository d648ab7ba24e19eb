#include "cli/input_rows.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s::cli {

InputRows::InputRows(std::string path, BadRowPolicy policy, InputFields fields)
    : path_(std::move(path)), policy_(policy), fields_(std::move(fields)) {
    format_ = input_format_of(path_);
    rows_ = scan([](int64_t) { return true; }, [](int64_t, InputRow&&) {}, &bad_rows_, &bad_samples_);
    if (rows_ == 0) {
        const std::string why = bad_rows_
                                    ? " (all " + std::to_string(bad_rows_) + " rows are bad; first: " + bad_samples_[0].where +
                                          ": " + bad_samples_[0].reason + ")"
                                    : " (the file is empty or has only blank lines)";
        throw Error(ErrorCode::InvalidArgument, path_ + ": no inputs" + why);
    }
}

int64_t InputRows::scan(const std::function<bool(int64_t)>& parse, const std::function<void(int64_t, InputRow&&)>& row,
                        int64_t* bad, std::vector<BadRow>* samples) const {
    *bad = 0;
    samples->clear();
    InputReader reader(
        path_, fields_, policy_,
        [&](const BadRow& b) {
            if (++*bad <= 10) samples->push_back(b);
        },
        format_);
    InputRecord record;
    int64_t index = 0;
    while (reader.next(&record)) {
        if (parse(index)) {
            InputRow r{std::move(record.texts[0]), std::move(record.spans), nlohmann::json(), std::move(record.where)};
            if (!record.label_json.empty()) r.label = nlohmann::json::parse(record.label_json);
            row(index, std::move(r));
        }
        ++index;
    }
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
    int64_t bad = 0;
    std::vector<BadRow> samples;
    const int64_t rows = scan([&](int64_t index) { return wanted(index / batch_size); },
                              [&](int64_t index, InputRow&& row) {
                                  const int64_t start = index - index % batch_size;
                                  if (start != first) flush(), first = start;
                                  batch.push_back(std::move(row));
                                  if (static_cast<int64_t>(batch.size()) == batch_size) flush();
                              },
                              &bad, &samples);
    flush();
    if (rows != rows_)
        throw Error(ErrorCode::InvalidArgument,
                    path_ + ": changed while being read (" + std::to_string(rows_) + " rows, now " + std::to_string(rows) + ")");
}

}  // namespace t5s::cli
