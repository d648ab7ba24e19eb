// OutputWriter: rows written back in the format they came in (t5s/input_reader.h).
#include "input/delimited_text.h"
#include "input/input_source.h"
#include "t5s/span_json.h"
#include "t5s/text_offsets.h"

namespace t5s {
namespace {

using ojson = nlohmann::ordered_json;

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

// Label Studio results: a `labels` region per span (with its text) and a `choices` result for the label.
ojson labelstudio_results(const OutputRow& row) {
    ojson results = ojson::array();
    for (size_t k = 0; k < row.spans.size(); ++k) {
        const Span& s = row.spans[k];
        ojson labels = ojson::array();
        if (!s.label.empty()) labels.push_back(s.label);
        const std::string text(code_point_slice(row.text, s.start, s.end));
        results.push_back({{"id", "span" + std::to_string(k)},
                           {"from_name", "label"},
                           {"to_name", "text"},
                           {"type", "labels"},
                           {"value", {{"start", s.start}, {"end", s.end}, {"text", text}, {"labels", labels}}}});
    }
    if (!row.label_json.empty()) {
        const ojson label = ojson::parse(row.label_json, nullptr, false);
        ojson choices = ojson::array();
        if (label.is_array()) {
            for (const auto& c : label) choices.push_back(c.is_string() ? c.get<std::string>() : c.dump());
        } else {
            choices.push_back(label_text(row.label_json));
        }
        results.push_back({{"id", "label"},
                           {"from_name", "choice"},
                           {"to_name", "text"},
                           {"type", "choices"},
                           {"value", {{"choices", choices}}}});
    }
    return results;
}

}  // namespace

std::string label_text(const std::string& label_json) {
    const nlohmann::json j = nlohmann::json::parse(label_json, nullptr, false);
    return j.is_string() ? j.get<std::string>() : label_json;
}

OutputWriter::OutputWriter(InputFormat format, bool with_source, std::string model_version)
    : format_(format == InputFormat::Text ? InputFormat::Jsonl : format),
      with_source_(with_source),
      model_version_(std::move(model_version)) {}

std::string OutputWriter::begin() const {
    if (format_ == InputFormat::LabelStudio) return "[\n";
    if (format_ != InputFormat::Csv && format_ != InputFormat::Tsv) return "";
    const char sep = format_ == InputFormat::Csv ? ',' : '\t';
    std::string header = std::string("text") + sep + "label" + sep + "spans";
    if (with_source_) header += std::string(1, sep) + "source";
    return header + (format_ == InputFormat::Csv ? "\r\n" : "\n");
}

std::string OutputWriter::row(const OutputRow& row) {
    const bool first = rows_++ == 0;
    if (format_ == InputFormat::Csv || format_ == InputFormat::Tsv) {
        const char sep = format_ == InputFormat::Csv ? ',' : '\t';
        std::string out;
        append_delimited_field(row.text, sep, out);
        out.push_back(sep);
        append_delimited_field(row.label_json.empty() ? "" : label_text(row.label_json), sep, out);
        out.push_back(sep);
        append_delimited_field(row.spans.empty() ? "" : dump(spans_to_json(row.spans)), sep, out);
        if (with_source_) out.push_back(sep), append_delimited_field(row.source, sep, out);
        return out + (format_ == InputFormat::Csv ? "\r\n" : "\n");
    }
    if (format_ == InputFormat::LabelStudio) {
        ojson data = {{"text", row.text}};
        if (with_source_) data["source"] = row.source;
        ojson task = {{"data", data}};
        ojson result = {{"result", labelstudio_results(row)}};
        if (!row.accepted) result["model_version"] = model_version_;
        task[row.accepted ? "annotations" : "predictions"] = ojson::array({result});
        return (first ? "" : ",\n") + dump(task);
    }
    ojson j = {{"text", row.text}, {"spans", spans_to_json(row.spans)}};
    if (!row.label_json.empty()) j["label"] = ojson::parse(row.label_json, nullptr, false);
    if (with_source_) j["source"] = row.source;
    return dump(j) + "\n";
}

std::string OutputWriter::end() const { return format_ == InputFormat::LabelStudio ? (rows_ ? "\n]\n" : "]\n") : ""; }

}  // namespace t5s
