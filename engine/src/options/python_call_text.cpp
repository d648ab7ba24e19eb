// A reader of pasted generate(...) arguments and JSON objects (python_call_text.h): a cursor over
// the text with Python's lexical rules for what settings use (comments, strings, numbers, brackets),
// literals turned into JSON, any other expression skipped to its comma and kept as text.
#include "python_call_text.h"

#include <cctype>
#include <cstdint>
#include <cstring>

#include "t5s/error.h"
#include "t5s/text_offsets.h"

namespace t5s::pasted {
namespace {

using json = nlohmann::json;

// Thrown where a value turns out not to be a literal (a name, an operator): the caller goes back and
// skips the whole expression instead.
struct NotLiteral {};

bool is_name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::string shortened(const std::string& text) {
    constexpr size_t kShown = 60;
    return text.size() <= kShown ? text : std::string(utf8_prefix(text, kShown)) + "...";
}

class Reader {
public:
    explicit Reader(std::string_view text) : s_(text) {}

    PastedCall read() {
        skip_space();
        PastedCall call;
        if (peek() == '{') {
            call.form = "a JSON object";
            top_object(&call.arguments);
        } else if (const std::optional<std::string> callee = find_settings_call()) {
            call.form = *callee + "(...)";
            arguments(')', &call.arguments);
        } else if (!whole_leading_call(&call)) {
            call.form = "a keyword list";
            arguments('\0', &call.arguments);
        }
        bool any_keyword = false;
        for (const PastedArgument& a : call.arguments) any_keyword = any_keyword || a.kind == PastedArgument::Kind::Keyword;
        if (!any_keyword)
            throw Error(
                ErrorCode::InvalidArgument,
                "pasted settings: no settings found in " + call.form +
                    " (paste generate()'s keyword arguments such as num_beams=5, GenerationConfig(...), or a JSON object)");
        return call;
    }

private:
    char peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
    bool at_end() const { return i_ >= s_.size(); }

    [[noreturn]] void fail(const std::string& problem, size_t at) const {
        const size_t end = std::min(at, s_.size());
        size_t line = 1, line_start = 0;
        for (size_t k = 0; k < end; ++k)
            if (s_[k] == '\n') ++line, line_start = k + 1;
        const int64_t column = 1 + code_point_of_byte(s_.substr(line_start), end - line_start);  // code points, not bytes
        throw Error(ErrorCode::InvalidArgument, "pasted settings: " + problem + " (line " + std::to_string(line) + ", column " +
                                                    std::to_string(column) + ")");
    }
    [[noreturn]] void fail(const std::string& problem) const { fail(problem, i_); }

    // Whitespace, comments and backslash line continuations.
    void skip_space() {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                ++i_;
            } else if (c == '#') {
                while (!at_end() && peek() != '\n') ++i_;
            } else if (c == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
                i_ += peek(1) == '\n' ? 2 : 3;
            } else {
                return;
            }
        }
    }

    std::string name() {
        const size_t start = i_;
        while (!at_end() && is_name_char(peek())) ++i_;
        return std::string(s_.substr(start, i_ - start));
    }

    // At a string's prefix or quote: the prefix letters (r, u, b, f in either case), else npos.
    size_t string_prefix_length() const {
        size_t n = 0;
        while (n < 2 && std::strchr("rRuUbBfF", peek(n)) && peek(n) != '\0') ++n;
        return peek(n) == '\'' || peek(n) == '"' ? n : std::string::npos;
    }

    // One string literal (quotes included) from i_; its value, with Python's escapes (none when raw).
    std::string string_literal() {
        const size_t start = i_;
        bool raw = false;
        while (peek() != '\'' && peek() != '"') raw = raw || peek() == 'r' || peek() == 'R', ++i_;
        const char quote = peek();
        const bool triple = peek(1) == quote && peek(2) == quote;
        i_ += triple ? 3 : 1;
        std::string value;
        for (;;) {
            if (at_end()) fail("a string is never closed", start);
            const char c = peek();
            if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
                i_ += triple ? 3 : 1;
                return value;
            }
            if (c == '\n' && !triple) fail("a string is never closed on its line", start);
            if (c == '\\' && !at_end()) {
                if (raw) {
                    value += c;
                    ++i_;
                    if (!at_end()) value += peek(), ++i_;
                } else {
                    escape(&value);
                }
                continue;
            }
            value += c;
            ++i_;
        }
    }

    uint32_t hex_digits(int count) {
        uint32_t v = 0;
        for (int k = 0; k < count; ++k) {
            const char c = peek();
            if (!std::isxdigit(static_cast<unsigned char>(c)))
                fail("a \\x, \\u or \\U escape needs " + std::to_string(count) + " hex digits");
            v = v * 16 +
                static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
            ++i_;
        }
        return v;
    }

    void escape(std::string* value) {
        ++i_;  // the backslash
        const char c = peek();
        ++i_;
        switch (c) {
            case 'n': *value += '\n'; return;
            case 't': *value += '\t'; return;
            case 'r': *value += '\r'; return;
            case '0': *value += '\0'; return;
            case '\\':
            case '\'':
            case '"':
            case '/': *value += c; return;
            case '\n': return;  // a continued line
            case 'x': utf8_append(*value, hex_digits(2)); return;
            case 'U': {
                const uint32_t cp = hex_digits(8);
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) fail("\\U escape outside Unicode");
                utf8_append(*value, cp);
                return;
            }
            case 'u': {
                uint32_t cp = hex_digits(4);
                if (cp >= 0xD800 && cp < 0xDC00 && peek() == '\\' && peek(1) == 'u') {  // JSON's surrogate pair
                    i_ += 2;
                    const uint32_t low = hex_digits(4);
                    if (low < 0xDC00 || low >= 0xE000) fail("a \\u escape pairs a high surrogate with no low one");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xD800 && cp < 0xE000) {
                    fail("a \\u escape holds a lone surrogate");
                }
                utf8_append(*value, cp);
                return;
            }
            default:  // Python keeps an unknown escape as written
                *value += '\\';
                if (c != '\0') *value += c;
        }
    }

    // A number literal: Python's (1_000, .5, 1., 1e-3, a sign) read as JSON reads it (the locale plays no part).
    json number() {
        const size_t start = i_;
        std::string digits;
        if (peek() == '+' || peek() == '-') digits += peek(), ++i_;
        bool any_digit = false, fraction = false, exponent = false;
        while (!at_end()) {
            const char c = peek();
            if (std::isdigit(static_cast<unsigned char>(c))) {
                digits += c;
                any_digit = true;
            } else if (c == '_' && any_digit && std::isdigit(static_cast<unsigned char>(peek(1)))) {
            } else if (c == '.' && !fraction && !exponent) {
                if (!any_digit) digits += '0';
                digits += '.';
                if (!std::isdigit(static_cast<unsigned char>(peek(1)))) digits += '0';
                fraction = true;
            } else if ((c == 'e' || c == 'E') && any_digit && !exponent) {
                digits += 'e';
                exponent = true;
                if (peek(1) == '+' || peek(1) == '-') digits += peek(1), ++i_;
                if (!std::isdigit(static_cast<unsigned char>(peek(1)))) fail("a number's exponent has no digits", start);
            } else {
                break;
            }
            ++i_;
        }
        if (!any_digit || is_name_char(peek())) throw NotLiteral{};  // 0x1F, 3j, a lone sign: not settings' numbers
        if (digits[0] == '+') digits.erase(0, 1);
        // JSON has no leading zeros: 007 is 7 (Python 3 refuses it; Python 2 read octal; both rare here).
        const size_t lead = digits[0] == '-' ? 1 : 0;
        while (digits.size() > lead + 1 && digits[lead] == '0' && std::isdigit(static_cast<unsigned char>(digits[lead + 1])))
            digits.erase(lead, 1);
        const json v = json::parse(digits, nullptr, /*allow_exceptions=*/false);
        if (v.is_discarded() || !v.is_number()) fail("a number out of range", start);
        if (v.is_number_float() && !std::isfinite(v.get<double>())) fail("a number out of range", start);
        return v;
    }

    // [..], (..) or {..}: the elements up to the closing bracket, each a literal.
    json sequence(char close, int depth) {
        const size_t open_at = i_;
        ++i_;
        json items = json::array();
        bool trailing_comma = false;
        for (;;) {
            skip_space();
            if (at_end()) fail(std::string("'") + s_[open_at] + "' is never closed", open_at);
            if (peek() == close) break;
            items.push_back(literal(depth + 1));
            skip_space();
            trailing_comma = false;
            if (peek() == ',') {
                ++i_;
                trailing_comma = true;
            } else if (peek() != close) {
                throw NotLiteral{};  // an operator after an element: an expression
            }
        }
        ++i_;
        if (close == ')' && items.size() == 1 && !trailing_comma) return items[0];  // (x) is x, (x,) a tuple
        return items;
    }

    json dict(int depth) {
        const size_t open_at = i_;
        ++i_;
        std::vector<std::pair<json, json>> entries;
        bool string_keys = true;
        for (;;) {
            skip_space();
            if (at_end()) fail("'{' is never closed", open_at);
            if (peek() == '}') break;
            json key = literal(depth + 1);
            skip_space();
            if (peek() != ':') throw NotLiteral{};
            ++i_;
            skip_space();
            json value = literal(depth + 1);
            string_keys = string_keys && key.is_string();
            entries.emplace_back(std::move(key), std::move(value));
            skip_space();
            if (peek() == ',') ++i_;
            else if (peek() != '}') throw NotLiteral{};
        }
        ++i_;
        json out = string_keys ? json::object() : json::array();
        for (auto& [key, value] : entries) {
            if (string_keys) out[key.get<std::string>()] = std::move(value);
            else out.push_back(json::array({std::move(key), std::move(value)}));
        }
        return out;
    }

    json literal(int depth) {
        skip_space();
        const char c = peek();
        if ((c == '[' || c == '(' || c == '{') && depth >= kMaxPastedNesting)
            fail("nested more than " + std::to_string(kMaxPastedNesting) + " deep");
        if (c == '[') return sequence(']', depth);
        if (c == '(') return sequence(')', depth);
        if (c == '{') return dict(depth);
        if (c == '+' || c == '-' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) return number();
        if (const size_t prefix = string_prefix_length(); prefix != std::string::npos) {
            for (size_t k = 0; k < prefix; ++k)
                if (peek(k) == 'f' || peek(k) == 'F' || peek(k) == 'b' || peek(k) == 'B') throw NotLiteral{};  // f-strings, bytes
            std::string text = string_literal();
            for (;;) {  // "a" "b" is "ab", as in Python
                skip_space();
                if (string_prefix_length() == std::string::npos || peek() == 'f' || peek() == 'F' || peek() == 'b' ||
                    peek() == 'B')
                    break;
                text += string_literal();
            }
            return text;
        }
        if (is_name_start(c)) {
            const std::string word = name();
            if (word == "True" || word == "true") return true;
            if (word == "False" || word == "false") return false;
            if (word == "None" || word == "null") return nullptr;
        }
        throw NotLiteral{};
    }

    // Skips an expression to the next comma or `close` at its own level; returns its text.
    std::string skip_expression(char close) {
        const size_t start = i_;
        std::string open;  // the closers still owed
        while (!at_end()) {
            const char c = peek();
            if (open.empty() && (is_separator(close) || at_close(close))) break;
            if (string_prefix_length() != std::string::npos &&
                (c == '\'' || c == '"' || !is_name_char(i_ > 0 ? s_[i_ - 1] : ' '))) {
                string_literal();
                continue;
            }
            if (c == '#' || c == '\\') {
                const size_t before = i_;
                skip_space();
                if (i_ != before) continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                if (open.size() >= size_t(kMaxPastedNesting))
                    fail("nested more than " + std::to_string(kMaxPastedNesting) + " deep");
                open += c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (c == ')' || c == ']' || c == '}') {
                if (open.empty() || open.back() != c) fail(std::string("unexpected '") + c + "'");
                open.pop_back();
            }
            ++i_;
        }
        if (!open.empty()) fail(std::string("a bracket is never closed (expected '") + open.back() + "')", start);
        std::string text(s_.substr(start, i_ - start));
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
        return text;
    }

    // After a literal: the separator, or an operator that makes the value an expression.
    bool value_ends_here(char close) {
        skip_space();
        return at_end() || is_separator(close) || at_close(close);
    }
    // A bare keyword list (close '\0') also takes ';' between its settings, as Python statements.
    bool is_separator(char close) const { return peek() == ',' || (close == '\0' && peek() == ';'); }
    bool at_close(char close) const { return close != '\0' && !at_end() && peek() == close; }

    // A keyword's or an object member's value: a literal, or the text of an expression.
    void value(char close, PastedArgument* a) {
        const size_t start = i_;
        try {
            json v = literal(0);
            if (value_ends_here(close)) {
                a->value = std::move(v);
                a->text = shortened(std::string(s_.substr(start, i_ - start)));
                while (!a->text.empty() && std::isspace(static_cast<unsigned char>(a->text.back()))) a->text.pop_back();
                return;
            }
            if (is_name_start(peek()) || peek() == '\'' || peek() == '"' || std::isdigit(static_cast<unsigned char>(peek()))) {
                const size_t here = i_;
                const std::string word = name();
                static const char* const kOperatorWords[] = {"if", "else", "and", "or", "not", "in", "is", "for"};
                bool is_operator = false;
                for (const char* w : kOperatorWords) is_operator = is_operator || word == w;
                i_ = here;
                if (!is_operator) fail("expected ',' before this");
            }
        } catch (const NotLiteral&) {
        }
        i_ = start;
        a->text = shortened(skip_expression(close));
        if (a->text.empty()) fail("a value is missing");
    }

    // Arguments up to `close` (')' of a call; '\0' for a bare list, which ends with the text).
    void arguments(char close, std::vector<PastedArgument>* out) {
        const size_t open_at = i_ > 0 ? i_ - 1 : 0;
        for (;;) {
            skip_space();
            if (at_end()) {
                if (close != '\0') fail("'(' is never closed", open_at);
                return;
            }
            if (at_close(close)) {
                ++i_;
                return;
            }
            out->push_back(argument(close));
            skip_space();
            if (is_separator(close)) ++i_;
            else if (!at_end() && !at_close(close)) fail("expected ',' between arguments");
        }
    }

    PastedArgument argument(char close) {
        PastedArgument a;
        const size_t here = i_;
        if (peek() == '*') {
            a.kind = PastedArgument::Kind::Unpacked;
            const size_t stars = peek(1) == '*' ? 2 : 1;
            i_ += stars;
            skip_space();
            a.text = std::string(stars, '*') + shortened(skip_expression(close));
            return a;
        }
        if (is_name_start(peek()) && string_prefix_length() == std::string::npos) {
            a.key = name();
            skip_space();
            if (peek() == '=' && peek(1) != '=') {
                ++i_;
                skip_space();
                value(close, &a);
                return a;
            }
            i_ = here;
            a.key.clear();
        }
        a.kind = PastedArgument::Kind::Positional;
        a.text = shortened(skip_expression(close));
        if (a.text.empty()) fail(std::string("unexpected '") + peek() + "'");
        return a;
    }

    // A JSON object (or a Python dict literal) as the whole text: its members, in order.
    void top_object(std::vector<PastedArgument>* out) {
        const size_t open_at = i_;
        ++i_;
        for (;;) {
            skip_space();
            if (at_end()) fail("'{' is never closed", open_at);
            if (peek() == '}') break;
            if (string_prefix_length() == std::string::npos) fail("expected a quoted name");
            PastedArgument a;
            a.key = string_literal();
            skip_space();
            if (peek() != ':') fail("expected ':' after the name");
            ++i_;
            skip_space();
            value('}', &a);
            out->push_back(std::move(a));
            skip_space();
            if (at_end()) fail("'{' is never closed", open_at);
            if (peek() == ',') ++i_;
            else if (peek() != '}') fail("expected ',' or '}'");
        }
        ++i_;
        skip_space();
        while (peek() == ';') ++i_, skip_space();
        if (!at_end()) fail("text after the object's closing '}'");
    }

    // Somewhere in the text (code lines before and after are fine), a call of generate or
    // GenerationConfig: i_ is left after its '(' and the callee's name returned.
    std::optional<std::string> find_settings_call() {
        const size_t start = i_;
        while (!at_end()) {
            skip_space();
            if (at_end()) break;
            if (string_prefix_length() != std::string::npos && (i_ == 0 || !is_name_char(s_[i_ - 1]))) {
                string_literal();
            } else if (is_name_start(peek())) {
                const std::string word = name();
                skip_space();
                if ((word == "generate" || word == "GenerationConfig") && peek() == '(') {
                    ++i_;
                    return word;
                }
            } else {
                ++i_;
            }
        }
        i_ = start;
        return std::nullopt;
    }

    // The whole text as one call `name.name(...)` (optionally assigned: `x = f(...)`): dict(...),
    // a pipeline's __call__; i_ is left after its '('.
    std::optional<std::string> leading_call() {
        const size_t start = i_;
        for (int part = 0; part < 2; ++part) {  // [target =] callee(
            std::string callee;
            while (is_name_start(peek())) {
                callee += name();
                skip_space();
                if (peek() != '.') break;
                callee += '.';
                ++i_;
                skip_space();
            }
            if (!callee.empty() && peek() == '(') {
                ++i_;
                return callee;
            }
            if (part == 0 && !callee.empty() && peek() == '=' && peek(1) != '=') {
                const size_t after = i_ + 1;
                i_ = after;
                skip_space();
                continue;
            }
            break;
        }
        i_ = start;
        return std::nullopt;
    }

    // The whole text as one call (dict(...)); else i_ is back at the start (a keyword list whose
    // first value is a call: temperature=float(t), ...).
    bool whole_leading_call(PastedCall* call) {
        const size_t start = i_;
        const std::optional<std::string> callee = leading_call();
        if (!callee) return false;
        std::vector<PastedArgument> arguments_read;
        arguments(')', &arguments_read);
        skip_space();
        while (peek() == ';') ++i_, skip_space();
        if (!at_end()) {
            i_ = start;
            return false;
        }
        call->form = *callee + "(...)";
        call->arguments = std::move(arguments_read);
        return true;
    }

    std::string_view s_;
    size_t i_ = 0;
};

}  // namespace

PastedCall read_pasted_call(std::string_view text) {
    // Strings become JSON, which holds UTF-8 only.
    if (!is_valid_utf8(text)) throw Error(ErrorCode::InvalidArgument, "pasted settings: the text is not valid UTF-8");
    return Reader(text).read();
}

}  // namespace t5s::pasted
