#include "base/json_text.h"

#include "t5s/error.h"

namespace t5s {
namespace {

using json = nlohmann::json;

// The DOM builder of json::parse, remembering the last key so errors can name it.
class KeyTrackingParser : public nlohmann::detail::json_sax_dom_parser<json> {
public:
    explicit KeyTrackingParser(json& root) : nlohmann::detail::json_sax_dom_parser<json>(root, true) {}
    bool key(json::string_t& k) {
        last_key = k;
        return nlohmann::detail::json_sax_dom_parser<json>::key(k);
    }
    std::string last_key;
};

}  // namespace

json parse_json_text(std::string_view text, const std::string& source) {
    // No valid JSON text holds a raw NUL, but nlohmann's lexer takes one for the end of input.
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
        throw Error(ErrorCode::CorruptFile, source + ": invalid JSON (a NUL byte at byte " + std::to_string(nul) + ")");
    }
    json root;
    KeyTrackingParser sax(root);
    try {
        json::sax_parse(text.begin(), text.end(), &sax);
    } catch (const json::out_of_range&) {
        const std::string where = sax.last_key.empty() ? "a value" : "'" + sax.last_key + "'";
        throw Error(ErrorCode::CorruptFile, source + ": " + where + " holds a number too large to read");
    } catch (const json::exception& e) {
        std::string what = e.what();
        if (what.size() > 200) what = what.substr(0, 200) + "...";
        throw Error(ErrorCode::CorruptFile, source + ": invalid JSON (" + what + ")");
    }
    return root;
}

}  // namespace t5s
