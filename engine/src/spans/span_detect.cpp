#include "spans/span_detect.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <sstream>

#include "t5s/error.h"
#include "t5s/spans.h"
#include "t5s/text_offsets.h"

namespace t5s {

const std::vector<std::string>& span_detector_names() {
    static const std::vector<std::string> names = {"placeholders", "numbers", "urls", "emails"};
    return names;
}

namespace spans {
namespace {

// RE2 matches in time linear in the text, without recursion: a text or a user's pattern from a
// request cannot exhaust the stack or the CPU (std::regex did both). The patterns run in Latin-1
// mode, i.e. over the text's bytes as std::regex did: "€" in a pattern is its three UTF-8 bytes,
// and a match that cuts a character is widened to whole code points (find_all).
//
// [\t\n\v\f\r ] is std::regex's \s (RE2's lacks \v).
//
// {name}, {{x}}, %s / %d / %(name)s, <tag> / </tag> / <br/>, [ID-4411]-style bracketed ids.
const char* const kPlaceholder =
    R"(\{\{[^{}\n]{1,80}\}\}|\{[A-Za-z_][A-Za-z0-9_.]{0,63}\}|%(?:\([A-Za-z_][A-Za-z0-9_]*\))?[sdifx]|)"
    R"(</?[A-Za-z][A-Za-z0-9_-]*(?:[\t\n\v\f\r ][^<>\n]{0,80})?/?>|\[[A-Z][A-Z0-9]*-[A-Za-z0-9-]+\])";
// A number (signs, currency, thousands and decimals, times, fractions); its unit is number_end's.
const char* const kNumber = R"((?:(?:\$|€|£|¥)[\t\n\v\f\r ]?)?[-+]?[0-9]+(?:[.,:/][0-9]+)*)";
// Matched case-insensitively (Detectors).
const char* const kUrl = R"((?:https?://|www\.)[^\t\n\v\f\r <>"'{}]+)";
const char* const kEmail = R"([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})";
// A number's optional unit, in the order they are tried: the first one not followed by a letter.
const char* const kUnits[] = {"%",  "°C", "°F", "°",  "kg",  "km",  "cm",  "mm",   "mg", "ml", "GB", "MB", "KB",
                              "TB", "kB", "px", "ms", "min", "USD", "EUR", "km/h", "m",  "g",  "l",  "h",  "s"};

constexpr size_t kMaxRegexBytes = 256;
constexpr int kMaxRegexDepth = 8;
// RE2's time is linear in the text, times the program's size at worst (when counted repetitions
// outgrow its DFA cache): a pattern of 1,600 instructions took 1.8 s per 200 KB here, while the
// worst we found at 500 or fewer took 0.2 s per MiB. Protection patterns ("AB-[0-9]+") compile
// to a few dozen.
constexpr int kMaxRegexProgram = 500;
// Compiled program and DFA cache of one pattern (RE2's default).
constexpr int64_t kRegexMaxMem = 8 << 20;

bool ascii_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ascii_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::unique_ptr<RE2> compile(const std::string& pattern, bool case_sensitive) {
    RE2::Options o;
    o.set_encoding(RE2::Options::EncodingLatin1);
    o.set_max_mem(kRegexMaxMem);
    o.set_case_sensitive(case_sensitive);
    o.set_log_errors(false);
    return std::make_unique<RE2>(pattern, o);
}

// The detectors, compiled once and shared by all threads (matching with a const RE2 is thread-safe).
struct Detectors {
    std::unique_ptr<RE2> placeholder = compile(kPlaceholder, true), url = compile(kUrl, false), email = compile(kEmail, true),
                         number = compile(kNumber, true);
};
const Detectors& compiled_detectors() {
    static const Detectors d;
    return d;
}

// Where a number that ends at `end` ends with its unit: an optional space, then the first unit of
// kUnits not followed by a letter ("5 min", not "5 m" of "5 mins").
size_t number_end(std::string_view s, size_t end) {
    for (size_t at : {end + 1, end}) {
        if (at == end + 1 && (end >= s.size() || !ascii_space(s[end]))) continue;
        for (const char* unit : kUnits) {
            const std::string_view u(unit);
            if (s.substr(at, u.size()) != u) continue;
            if (at + u.size() < s.size() && ascii_letter(s[at + u.size()])) continue;
            return at + u.size();
        }
    }
    return end;
}

enum class Kind { Plain, Url, Number };

void find_all(std::string_view s, const RE2& re, const std::string& label, Kind kind, std::vector<ByteSpan>* out) {
    const re2::StringPiece text(s.data(), s.size());
    re2::StringPiece m;
    for (size_t from = 0; from <= s.size() && re.Match(text, from, s.size(), RE2::UNANCHORED, &m, 1);) {
        size_t b = static_cast<size_t>(m.data() - s.data()), e = b + m.size();
        if (e == b) {  // an empty match: nothing to protect; search on from the next byte
            from = b + 1;
            continue;
        }
        if (kind == Kind::Number) e = number_end(s, e);
        from = e;
        // The patterns match bytes: a match (a user's `.`, a class) may cut a character; widen it
        // to whole code points.
        b = code_point_start(s, b);
        e = code_point_end(s, e);
        if (kind == Kind::Url) {
            while (e > b && std::string_view(".,;:!?)]").find(s[e - 1]) != std::string_view::npos) --e;  // sentence punctuation
        }
        // A number inside a word ("mp3", "A4x") is not one.
        if (kind == Kind::Number && ((b > 0 && ascii_word(s[b - 1])) || (e < s.size() && ascii_word(s[e])))) continue;
        if (e > b) out->push_back({b, e, label});
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

namespace {

// The user's pattern, bounded before and after compiling (see kMaxRegexProgram).
std::unique_ptr<RE2> compile_protect_regex(const std::string& regex) {
    // Patterns that protect spans are short; the bounds keep what a request may compile small.
    int depth = 0, deepest = 0;
    for (char c : regex) deepest = std::max(deepest, depth += c == '(' ? 1 : c == ')' ? -1 : 0);
    if (regex.size() > kMaxRegexBytes || deepest > kMaxRegexDepth)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: protect_regex: at most " +
                                                    std::to_string(kMaxRegexBytes) + " bytes and " +
                                                    std::to_string(kMaxRegexDepth) + " nested groups");
    auto re = compile(regex, true);
    if (!re->ok())
        throw Error(ErrorCode::InvalidArgument,
                    "invalid generation setting: protect_regex: not a valid RE2 regex (no backreferences "
                    "or lookaround): " +
                        re->error());
    if (re->ProgramSize() > kMaxRegexProgram)
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: protect_regex: too complex (" +
                                                    std::to_string(re->ProgramSize()) + " RE2 instructions, at most " +
                                                    std::to_string(kMaxRegexProgram) +
                                                    "): use smaller counted repetitions ({n})");
    return re;
}

}  // namespace

void check_protect_regex(const std::string& regex) {
    if (!regex.empty()) compile_protect_regex(regex);
}

std::vector<ByteSpan> detect_spans(std::string_view text, const std::vector<std::string>& detectors, const std::string& regex) {
    std::vector<ByteSpan> out;
    auto has = [&](const char* name) { return std::find(detectors.begin(), detectors.end(), name) != detectors.end(); };
    const Detectors& d = compiled_detectors();
    if (has("placeholders")) find_all(text, *d.placeholder, "placeholder", Kind::Plain, &out);
    if (has("urls")) find_all(text, *d.url, "url", Kind::Url, &out);
    if (has("emails")) find_all(text, *d.email, "email", Kind::Plain, &out);
    if (has("numbers")) find_all(text, *d.number, "number", Kind::Number, &out);
    if (!regex.empty()) find_all(text, *compile_protect_regex(regex), "regex", Kind::Plain, &out);
    std::stable_sort(out.begin(), out.end(), [](const ByteSpan& a, const ByteSpan& b) { return a.begin < b.begin; });
    return out;
}

}  // namespace spans
}  // namespace t5s
