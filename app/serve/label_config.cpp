#include "serve/label_config.h"

#include "t5s/error.h"

namespace t5s::serve {
namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool name_char(char c) { return letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == ':'; }

std::string decode_entities(std::string_view v) {
    static const std::pair<std::string_view, char> kEntities[] = {
        {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        bool decoded = false;
        if (v[i] == '&') {
            for (const auto& [entity, c] : kEntities) {
                if (v.compare(i, entity.size(), entity) != 0) continue;
                out += c;
                i += entity.size() - 1;
                decoded = true;
                break;
            }
        }
        if (!decoded) out += v[i];
    }
    return out;
}

// Scans one tag's attributes from `at` (just after its name) to its '>'. Returns the position
// after the '>', or npos when the text ends first (an unfinished tag).
size_t scan_attributes(std::string_view s, size_t at, ConfigTag* tag) {
    while (at < s.size()) {
        const char c = s[at];
        if (c == '>') return at + 1;
        if (space(c) || c == '/') {
            ++at;
            continue;
        }
        size_t end = at;
        while (end < s.size() && !space(s[end]) && s[end] != '=' && s[end] != '>' && s[end] != '/' && s[end] != '"' &&
               s[end] != '\'')
            ++end;
        if (end == at) {  // a stray quote: not an attribute
            ++at;
            continue;
        }
        std::string key(s.substr(at, end - at));
        at = end;
        while (at < s.size() && space(s[at])) ++at;
        std::string value;
        if (at < s.size() && s[at] == '=') {
            ++at;
            while (at < s.size() && space(s[at])) ++at;
            if (at < s.size() && (s[at] == '"' || s[at] == '\'')) {
                const size_t close = s.find(s[at], at + 1);
                if (close == std::string_view::npos) return std::string_view::npos;
                value = decode_entities(s.substr(at + 1, close - at - 1));
                at = close + 1;
            } else {
                size_t v_end = at;
                while (v_end < s.size() && !space(s[v_end]) && s[v_end] != '>') ++v_end;
                value = decode_entities(s.substr(at, v_end - at));
                at = v_end;
            }
        }
        tag->attributes.emplace_back(std::move(key), std::move(value));
    }
    return std::string_view::npos;
}

// Where the markup at `at` (a '<' that opens no start tag) ends: after its terminator, or npos.
size_t skip_markup(std::string_view s, size_t at) {
    const auto past = [&](std::string_view terminator) {
        const size_t p = s.find(terminator, at);
        return p == std::string_view::npos ? p : p + terminator.size();
    };
    if (s.compare(at, 4, "<!--") == 0) return past("-->");
    if (s.compare(at, 9, "<![CDATA[") == 0) return past("]]>");
    if (s.compare(at, 2, "<?") == 0) return past("?>");
    return past(">");  // an end tag or a <!DOCTYPE ...>
}

}  // namespace

std::string ConfigTag::attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes)
        if (k == key) return v;
    return "";
}

std::vector<ConfigTag> scan_config_tags(std::string_view s) {
    std::vector<ConfigTag> tags;
    size_t at = s.find('<');
    while (at != std::string_view::npos && at + 1 < s.size()) {
        if (letter(s[at + 1])) {
            ConfigTag tag;
            size_t end = at + 1;
            while (end < s.size() && name_char(s[end])) ++end;
            tag.name = std::string(s.substr(at + 1, end - at - 1));
            at = scan_attributes(s, end, &tag);
            if (at == std::string_view::npos) break;
            tags.push_back(std::move(tag));
        } else if (s[at + 1] == '/' || s[at + 1] == '!' || s[at + 1] == '?') {
            at = skip_markup(s, at);
            if (at == std::string_view::npos) break;
        } else {
            ++at;  // a '<' in text
        }
        at = s.find('<', at);
    }
    return tags;
}

LabelConfig parse_label_config(std::string_view xml, std::string_view field) {
    if (xml.size() > kMaxLabelConfigBytes)
        throw Error(ErrorCode::InvalidArgument, std::string(field) + ": the labeling config has " + std::to_string(xml.size()) +
                                                    " bytes, more than the " + std::to_string(kMaxLabelConfigBytes / 1024) +
                                                    " KiB allowed");
    LabelConfig c;
    std::string listed;  // the config's tags, for the message
    size_t count = 0;
    constexpr size_t kListedTags = 20;
    for (const ConfigTag& tag : scan_config_tags(xml)) {
        if (tag.name == "View" || tag.name == "Header" || tag.name == "Style") continue;
        if (++count <= kListedTags) listed += (listed.empty() ? "" : ", ") + tag.name;
        if (tag.name == "Text" && c.input_name.empty()) {
            c.input_name = tag.attribute("name");
            const std::string value = tag.attribute("value");
            c.input_field = value.size() > 1 && value[0] == '$' ? value.substr(1) : "";
        } else if (tag.name == "TextArea" && c.output_name.empty()) {
            c.output_name = tag.attribute("name");
            c.output_to = tag.attribute("toName");
        }
    }
    if (count > kListedTags) listed += " and " + std::to_string(count - kListedTags) + " more";
    if (c.input_name.empty() || c.input_field.empty() || c.output_name.empty() || c.output_to != c.input_name)
        throw Error(
            ErrorCode::InvalidArgument,
            "labeling config: supported is a <Text name=\"text\" value=\"$text\"/> input and a <TextArea name=\"paraphrase\" "
            "toName=\"text\"/> output for it; this config has: " +
                (listed.empty() ? std::string("no tags") : listed));
    return c;
}

}  // namespace t5s::serve
