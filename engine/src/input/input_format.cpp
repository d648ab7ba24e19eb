// Input formats by name, by extension and by content; the one line rule (LineReader).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "input/input_source.h"
#include "t5s/error.h"
#include "t5s/source_text.h"

namespace t5s {
namespace {

std::string lower_extension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

// The first byte that is not whitespace (nor the BOM), or 0.
char first_content_byte(const std::string& path) {
    std::ifstream in = input::open_input(path);
    char head[3] = {0, 0, 0};
    in.read(head, 3);
    if (!(in.gcount() == 3 && head[0] == '\xEF' && head[1] == '\xBB' && head[2] == '\xBF')) {
        in.clear();
        in.seekg(0);
    }
    char c = 0;
    while (in.get(c))
        if (!std::isspace(static_cast<unsigned char>(c))) return c;
    return 0;
}

}  // namespace

std::optional<InputFormat> input_format_named(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".jsonl" || ext == ".ndjson") return InputFormat::Jsonl;
    if (ext == ".csv") return InputFormat::Csv;
    if (ext == ".tsv" || ext == ".tab") return InputFormat::Tsv;
    return std::nullopt;
}

InputFormat input_format_of(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw Error(ErrorCode::InvalidArgument, path + ": is a directory, not an input file");
    if (const std::optional<InputFormat> named = input_format_named(path)) return *named;
    const std::string ext = lower_extension(path);
    const char first = first_content_byte(path);
    if (ext == ".json") return first == '[' ? InputFormat::LabelStudio : InputFormat::Jsonl;
    return first == '{' ? InputFormat::Jsonl : InputFormat::Text;
}

// A blank line is one whose text would be empty: one rule for skipping lines and for a row's text.
bool is_blank_line(const std::string& line) { return is_empty_text(line); }

bool LineReader::next(std::string* line) {
    if (!std::getline(in_, *line)) {
        if (in_.bad()) throw Error(ErrorCode::CorruptFile, "read error at line " + std::to_string(line_no_ + 1));
        return false;
    }
    newline_ = !in_.eof();
    if (++line_no_ == 1 && line->compare(0, 3, "\xEF\xBB\xBF") == 0) line->erase(0, 3);  // BOM
    if (!line->empty() && line->back() == '\r') line->pop_back();
    return true;
}

namespace input {

std::ifstream open_input(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    if (!in && !std::filesystem::exists(path, ec))
        throw Error(ErrorCode::FileNotFound, path + ": cannot open input file (not found)");
    if (!in) throw Error(ErrorCode::FileNotFound, path + ": cannot open input file");
    return in;
}

}  // namespace input
}  // namespace t5s
