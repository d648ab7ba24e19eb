// Label Studio's labeling config (app/serve/label_config.h) without a regex: the configs of the
// Label Studio tests (tests/serve/test_ls_protocol.py, tests/labelstudio/) give what they gave
// before, quoting and comments are read as XML has them, and a config from a request is bounded
// before it is scanned (a 50 KB one overflowed std::regex's stack).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "serve/label_config.h"
#include "t5s/error.h"

using namespace t5s;
using namespace t5s::serve;

namespace {

std::string error_of(const std::string& xml, const char* field = "label_config") {
    try {
        parse_label_config(xml, field);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        return e.what();
    }
    return "";
}

using Names = std::vector<std::string>;
// input_name, input_field, output_name, output_to.
Names names_of(const LabelConfig& c) { return {c.input_name, c.input_field, c.output_name, c.output_to}; }

}  // namespace

TEST_CASE("label config: the configs of the Label Studio tests", "[label_config]") {
    // tests/serve/test_ls_protocol.py
    CHECK(names_of(parse_label_config(
              R"(<View><Header value="x"/><Text name="src" value="$sentence"/><TextArea name="out" toName="src"/></View>)")) ==
          Names{"src", "sentence", "out", "src"});
    // tests/labelstudio/test_labelstudio_e2e.py
    CHECK(names_of(parse_label_config(
              "<View>\n  <Text name=\"text\" value=\"$text\"/>\n  <TextArea name=\"paraphrase\" toName=\"text\" "
              "rows=\"2\" editable=\"true\" maxSubmissions=\"1\"/>\n</View>")) == Names{"text", "text", "paraphrase", "text"});
    // Unsupported ones: the message names what is supported and lists the config's tags.
    std::string e = error_of(R"(<View><Image name="i" value="$image"/><Choices name="c" toName="i"/></View>)");
    CHECK(e.find("TextArea") != std::string::npos);
    CHECK(e.find("this config has: Image, Choices") != std::string::npos);
    e = error_of("<View><Image name='i' value='$img'/></View>", "schema");
    CHECK(e.find("TextArea") != std::string::npos);
    CHECK(e.find("this config has: Image") != std::string::npos);
    // tests/labelstudio/test_labelstudio_spans.py: labels and choices, no TextArea.
    e = error_of(
        "<View>\n  <Text name=\"text\" value=\"$text\"/>\n  <Labels name=\"label\" toName=\"text\"><Label value=\"number\"/>"
        "</Labels>\n  <Choices name=\"choice\" toName=\"text\"><Choice value=\"a\"/></Choices>\n</View>");
    CHECK(e.find("this config has: Text, Labels, Label, Choices, Choice") != std::string::npos);
    CHECK(error_of("").find("no tags") != std::string::npos);
    // The TextArea must label the Text input.
    CHECK_FALSE(error_of(R"(<View><Text name="a" value="$t"/><TextArea name="o" toName="b"/></View>)").empty());
    CHECK_FALSE(error_of(R"(<View><Text name="a" value="t"/><TextArea name="o" toName="a"/></View>)").empty());  // no $field
}

TEST_CASE("label config: quotes, entities, comments and CDATA as XML has them", "[label_config]") {
    // Single quotes, spaces around '=', a '>' inside a value, an attribute whose name ends in "name".
    CHECK(names_of(parse_label_config("<?xml version=\"1.0\"?><!DOCTYPE View><View>"
                                      "<Text toName='x' name = 'in' hint=\"a > b\" value='$body'/>"
                                      "<TextArea name=\"o&amp;p\" toName=\"in\"></TextArea></View>")) ==
          Names{"in", "body", "o&p", "in"});
    // A commented-out tag and one inside CDATA are not the config's.
    CHECK(names_of(parse_label_config("<View><!-- <Text name=\"old\" value=\"$old\"/> --><![CDATA[ <TextArea name=\"z\"/> ]]>"
                                      "<Text name=\"new\" value=\"$new\"/><TextArea name=\"out\" toName=\"new\"/></View>")) ==
          Names{"new", "new", "out", "new"});
    const auto tags = scan_config_tags("<a x=1 y><b/></a><c z=\"2\"");  // <c> is cut off by the end
    REQUIRE(tags.size() == 2);
    CHECK(tags[0].name == "a");
    CHECK(tags[0].attribute("x") == "1");
    CHECK(tags[0].attributes.size() == 2);
    CHECK(tags[1].name == "b");
    CHECK(scan_config_tags("<View><!-- unterminated <Text name=\"a\"/>").size() == 1);
    CHECK(scan_config_tags("<Text name=\"unterminated/>").empty());
}

TEST_CASE("label config: large configs are bounded before scanning, nested ones scan flat", "[label_config]") {
    const std::string good = R"(<Text name="src" value="$s"/><TextArea name="out" toName="src"/>)";
    // 50 KB of nested Views (std::regex recursed per character of such a config) under the limit.
    std::string nested;
    for (int i = 0; i < 5000; ++i) nested += "<View>";
    nested += good;
    for (int i = 0; i < 5000; ++i) nested += "</View>";
    CHECK(parse_label_config(nested).input_field == "s");
    // A 50 KB attribute value.
    const std::string long_value = "<View><Header value=\"" + std::string(50 * 1024, 'x') + "\"/>" + good + "</View>";
    CHECK(parse_label_config(long_value).output_name == "out");
    // Over the limit: refused naming the field.
    const std::string huge = "<View>" + std::string(kMaxLabelConfigBytes, ' ') + good + "</View>";
    const std::string e = error_of(huge, "schema");
    CHECK(e.rfind("schema: ", 0) == 0);
    CHECK(e.find("256 KiB") != std::string::npos);
    // Many tags: the message lists the first ones and counts the rest.
    std::string many = "<View>";
    for (int i = 0; i < 1000; ++i) many += "<Label/>";
    CHECK(error_of(many + "</View>").find("and 980 more") != std::string::npos);
}
