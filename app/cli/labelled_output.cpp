#include "cli/labelled_output.h"

#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

#include "common/args.h"
#include "t5s/text_offsets.h"

namespace t5s::cli {
namespace {

// The candidate's spans that are the row's own (same label and text), not those a detector added
// (--protect): the output keeps the row's entities, not "number" or "url" spans.
std::vector<Span> row_spans_in(const Candidate& c, const InputRow& row) {
    std::multiset<std::pair<std::string, std::string>> given;
    for (const Span& s : row.spans) given.insert({s.label, std::string(code_point_slice(row.text, s.start, s.end))});
    std::vector<Span> out;
    for (const Span& s : c.spans) {
        const auto it = given.find({s.label, std::string(code_point_slice(c.text, s.start, s.end))});
        if (it == given.end()) continue;
        given.erase(it);
        out.push_back(s);
    }
    return out;
}

std::string lower_extension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

}  // namespace

InputFormat output_format_for(const std::string& path, const std::string& format_flag, InputFormat input_format) {
    const std::string ext = lower_extension(path);
    const std::optional<InputFormat> named = input_format_named(path);  // the reader's extensions
    const bool json = ext == ".json";  // JSON lines or a Label Studio export, as the reader takes it
    if (!format_flag.empty()) {
        const InputFormat flag = parse_enum<InputFormat>(format_flag);
        const bool contradicts = named ? flag != *named : json && flag != InputFormat::Jsonl && flag != InputFormat::LabelStudio;
        if (contradicts)
            throw UsageError("--output " + path + " is a " + ext + " file but --output-format " + format_flag +
                             " was given: give a name that agrees (or no --output-format)");
        return flag;
    }
    if (named) return *named;
    if (json) return input_format == InputFormat::LabelStudio ? InputFormat::LabelStudio : InputFormat::Jsonl;
    return input_format == InputFormat::Text ? InputFormat::Jsonl : input_format;
}

LabelledOutput::LabelledOutput(const std::string& path, InputFormat format, bool overwrite)
    : format_(format == InputFormat::Text ? InputFormat::Jsonl : format),
      file_(path, overwrite, "output file"),
      writer_(format_, /*with_source=*/true) {
    file_.write(writer_.begin());
}

void LabelledOutput::add(const GenerationResult& result, const InputRow& row) {
    const std::string label =
        row.label.is_null() ? "" : row.label.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // as JSON text
    for (const Candidate& c : result.candidates) {
        OutputRow out{c.text, row_spans_in(c, row), label, result.input, false};
        file_.write(writer_.row(out));
        ++rows_;
    }
}

void LabelledOutput::commit() {
    file_.write(writer_.end());
    file_.commit();
}

}  // namespace t5s::cli
