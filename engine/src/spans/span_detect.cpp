#include "spans/span_detect.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "t5s/error.h"
#include "t5s/spans.h"

namespace t5s {

const std::vector<std::string>& span_detector_names() {
    static const std::vector<std::string> names = {"placeholders", "numbers", "urls", "emails"};
    return names;
}

namespace spans {
namespace {

// {name}, {{x}}, %s / %d / %(name)s, <tag> / </tag> / <br/>, [ID-4411]-style bracketed ids.
const char* const kPlaceholder =
    R"(\{\{[^{}\n]{1,80}\}\}|\{[A-Za-z_][A-Za-z0-9_.]{0,63}\}|%(?:\([A-Za-z_][A-Za-z0-9_]*\))?[sdifx]|)"
    R"(</?[A-Za-z][A-Za-z0-9_-]*(?:\s[^<>\n]{0,80})?/?>|\[[A-Z][A-Z0-9]*-[A-Za-z0-9-]+\])";
// A number (signs, currency, thousands and decimals, times, fractions) with an optional unit.
const char* const kNumber =
    R"((?:(?:\$|€|£|¥)\s?)?[-+]?[0-9]+(?:[.,:/][0-9]+)*(?:\s?(?:%|°C|°F|°|kg|km|cm|mm|mg|ml|GB|MB|KB|TB|kB|px|ms|min|USD|EUR|km/h|m|g|l|h|s)(?![A-Za-z]))?)";
const char* const kUrl = R"((?:https?://|www\.)[^\s<>"'{}]+)";
const char* const kEmail = R"([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})";

constexpr size_t kMaxRegexBytes = 256;
constexpr int kMaxRegexDepth = 8;

bool ascii_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

void find_all(std::string_view text, const std::regex& re, const std::string& label, bool word_edges, std::vector<ByteSpan>* out) {
    const std::string s(text);
    for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
        size_t b = static_cast<size_t>(it->position()), e = b + static_cast<size_t>(it->length());
        // std::regex works on bytes: a match (a user's `.`, a class) may cut a character; widen it
        // to whole code points.
        while (b > 0 && continuation(s[b])) --b;
        while (e < s.size() && continuation(s[e])) ++e;
        if (e == b) continue;
        if (label == "url") {
            while (e > b && std::string_view(".,;:!?)]").find(s[e - 1]) != std::string_view::npos) --e;  // sentence punctuation
        }
        // A number inside a word ("mp3", "A4x") is not one.
        if (word_edges && ((b > 0 && ascii_word(s[b - 1])) || (e < s.size() && ascii_word(s[e])))) continue;
        out->push_back({b, e, label});
    }
}

}  // namespace

std::vector<std::string> parse_protect(const std::string& protect) {
    std::vector<std::string> out;
    std::stringstream in(protect);
    for (std::string name; std::getline(in, name, ',');) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (name.empty()) continue;
        const auto& known = span_detector_names();
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw Error(ErrorCode::InvalidArgument, "invalid generation setting: protect: unknown detector '" + name +
                                                        "' (placeholders, numbers, urls, emails)");
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
}

void check_protect_regex(const std::string& regex) {
    if (regex.empty()) return;
    // libstdc++'s std::regex compiles and matches recursively: a long or deeply nested pattern (from
    // a request body) could exhaust the stack. Patterns that protect spans are short.
    int depth = 0, deepest = 0;
    for (char c : regex) deepest = std::max(deepest, depth += c == '(' ? 1 : c == ')' ? -1 : 0);
    if (regex.size() > kMaxRegexBytes || deepest > kMaxRegexDepth)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: protect_regex: at most " + std::to_string(kMaxRegexBytes) +
                                                    " bytes and " + std::to_string(kMaxRegexDepth) + " nested groups");
    try {
        std::regex re(regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: protect_regex: " + std::string(e.what()));
    }
}

std::vector<ByteSpan> detect_spans(std::string_view text, const std::vector<std::string>& detectors, const std::string& regex) {
    std::vector<ByteSpan> out;
    auto has = [&](const char* name) { return std::find(detectors.begin(), detectors.end(), name) != detectors.end(); };
    if (has("placeholders")) find_all(text, std::regex(kPlaceholder), "placeholder", false, &out);
    if (has("urls")) find_all(text, std::regex(kUrl, std::regex::icase), "url", false, &out);
    if (has("emails")) find_all(text, std::regex(kEmail), "email", false, &out);
    if (has("numbers")) find_all(text, std::regex(kNumber), "number", true, &out);
    if (!regex.empty()) find_all(text, std::regex(regex, std::regex::ECMAScript), "regex", false, &out);
    std::stable_sort(out.begin(), out.end(), [](const ByteSpan& a, const ByteSpan& b) { return a.begin < b.begin; });
    return out;
}

}  // namespace spans
}  // namespace t5s
