// Label Studio JSON export source: an array of tasks, each a row. Parsed whole (one JSON document).
// Offsets of `labels` results are code points, as Label Studio's Text tag counts them (its editor's
// domManager splits the text with the string iterator, [...text]), so they pass through unchanged;
// a result's "text", when present, must be what the task's text holds there.
#include "input/input_source.h"
#include "t5s/error.h"
#include "t5s/span_json.h"
#include "t5s/text_offsets.h"

namespace t5s::input {
namespace {

// The result list the row takes its spans and label from: the first annotation not cancelled, else
// the first prediction; null when there is none.
const nlohmann::json* chosen_results(const nlohmann::json& task) {
    for (const char* key : {"annotations", "predictions"}) {
        if (!task.contains(key) || !task[key].is_array()) continue;
        for (const auto& a : task[key])
            if (a.is_object() && !(a.contains("was_cancelled") && a["was_cancelled"] == true) && a.contains("result") &&
                a["result"].is_array())
                return &a["result"];
    }
    return nullptr;
}

// data's text field under one of `names` (the column rule), else its only string field, copied to
// names[0]; returns the field's name.
std::string pick_text(nlohmann::json& row, const std::vector<std::string>& names) {
    std::vector<std::string> keys;
    for (auto it = row.begin(); it != row.end(); ++it) keys.push_back(it.key());
    const std::string found = pick_column(keys, names);
    if (!found.empty()) return found;
    nlohmann::json only;
    int strings = 0;
    for (auto it = row.begin(); it != row.end(); ++it)
        if (it->is_string()) only = *it, ++strings;
    if (strings == 1) row[names[0]] = only;
    return names[0];
}

void add_result(const nlohmann::json& r, const std::string& text, const std::string& where, nlohmann::json& spans,
                nlohmann::json& label) {
    if (!r.is_object() || !r.contains("value") || !r["value"].is_object()) return;
    const nlohmann::json& v = r["value"];
    if (v.contains("labels") && v["labels"].is_array()) {
        if (!v.contains("start") || !v.contains("end") || !v["start"].is_number_integer() || !v["end"].is_number_integer())
            throw RowProblem{where, "a labels result needs integer value.start and value.end"};
        const int64_t start = v["start"].get<int64_t>(), end = v["end"].get<int64_t>();
        const std::string name = !v["labels"].empty() && v["labels"][0].is_string() ? v["labels"][0].get<std::string>() : "";
        const std::string there(code_point_slice(text, start, end));
        if (v.contains("text") && v["text"].is_string() && start >= 0 && end > start && v["text"].get<std::string>() != there)
            throw RowProblem{where, "labels result [" + std::to_string(start) + ", " + std::to_string(end) + ") says '" +
                                        v["text"].get<std::string>() + "' but the text there (code points) is '" + there + "'"};
        spans.push_back({start, end, name});
    } else if (v.contains("choices") && v["choices"].is_array() && !v["choices"].empty()) {
        label = v["choices"].size() == 1 ? v["choices"][0] : v["choices"];
    }
}

class LabelStudioSource : public InputReader::Source {
public:
    LabelStudioSource(const std::string& path, const InputFields& fields) : path_(path), fields_(fields) {
        std::ifstream in = open_input(path);
        tasks_ = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
        if (tasks_.is_discarded() || !tasks_.is_array())
            throw Error(ErrorCode::CorruptFile, path + ": not a Label Studio export (expected a JSON array of tasks)");
    }

    bool next(InputRecord* record) override {
        if (next_ >= tasks_.size()) return false;
        const nlohmann::json& task = tasks_[next_++];
        const std::string where = path_ + ": task " + std::to_string(next_);
        if (!task.is_object() || !task.contains("data") || !task["data"].is_object())
            throw RowProblem{where, "no \"data\" object"};
        nlohmann::json row = task["data"];
        for (const char* name : kSpanFieldNames) row.erase(name);  // a task's spans are its results
        std::string first;
        for (const auto& names : fields_.texts) {
            const std::string name = pick_text(row, names);
            if (first.empty()) first = name;
        }
        const std::string text = row.contains(first) && row[first].is_string() ? row[first].get<std::string>() : "";
        nlohmann::json spans = nlohmann::json::array(), label = row.value("label", nlohmann::json());
        if (const nlohmann::json* results = chosen_results(task))
            for (const auto& r : *results) add_result(r, text, where, spans, label);
        if (!spans.empty()) row["spans"] = spans;
        if (!label.is_null()) row["label"] = label;
        record_from_object(row, fields_, where, record);
        return true;
    }

private:
    std::string path_;
    InputFields fields_;
    nlohmann::json tasks_;
    size_t next_ = 0;
};

}  // namespace

std::unique_ptr<InputReader::Source> labelstudio_source(const std::string& path, const InputFields& fields) {
    return std::make_unique<LabelStudioSource>(path, fields);
}

}  // namespace t5s::input
