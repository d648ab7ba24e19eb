#pragma once
// Label Studio's labeling config (an XML <View> of tags), read by a small scanner instead of a
// regex or an XML library: the config comes from a request (/setup, /predict, /webhook, /train),
// so its size is bounded first and the scan is one linear pass without recursion. Torch-free and
// httplib-free, so the unit tests and the fuzzer link it alone.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t5s::serve {

// Configs are a few hundred bytes; Label Studio's biggest examples are a few KiB.
constexpr size_t kMaxLabelConfigBytes = 256 * 1024;

// One start or empty-element tag (<Text .../>), with its attributes in order. Values come from
// "..." or '...' (or are unquoted), with &lt; &gt; &amp; &quot; &apos; decoded.
struct ConfigTag {
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes;
    // The first attribute of that name (case-sensitive, as XML is), "" when there is none.
    std::string attribute(std::string_view key) const;
};

// The start tags of `xml` in order; end tags, comments, CDATA sections, <?...?> and <!...>
// declarations are skipped. Lenient like a browser: a tag cut off by the end of the text is
// left out, never an error.
std::vector<ConfigTag> scan_config_tags(std::string_view xml);

// The tags a config must have: <Text name=N value="$FIELD"/> and <TextArea toName=N/>.
struct LabelConfig {
    std::string input_name, input_field;  // the Text tag's name and its data field
    std::string output_name, output_to;   // the TextArea's name and toName
};
// Throws Error(InvalidArgument): a config over kMaxLabelConfigBytes, naming `field` (the request's
// field it came in); one without the tags, naming what is supported and the tags it has.
LabelConfig parse_label_config(std::string_view xml, std::string_view field = "label_config");

}  // namespace t5s::serve
