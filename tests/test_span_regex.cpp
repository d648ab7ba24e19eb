// The span detectors and protect_regex on hostile input: RE2 matches in linear time without
// recursion, so a huge URL or a catastrophic pattern returns (std::regex overflowed the stack or
// ran for ever); what RE2 cannot compile is refused naming protect_regex; offsets stay UTF-8 bytes
// on whole characters.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "spans/span_detect.h"
#include "t5s/error.h"
#include "t5s/tokenizer.h"

using namespace t5s;
using namespace t5s::spans;

namespace {

std::string error_of(const std::string& regex) {
    try {
        check_protect_regex(regex);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("span detectors: a 100 KB URL is one span", "[spans][span_regex]") {
    const std::string url = "https://example.com/" + std::string(100 * 1024, 'a');
    const std::string text = "see " + url + ". Thanks";
    const auto found = detect_spans(text, parse_protect("urls,placeholders,emails,numbers"), "");
    REQUIRE(found.size() == 1);
    CHECK(found[0].label == "url");
    CHECK(found[0].begin == 4);
    CHECK(found[0].end == 4 + url.size());  // the sentence's full stop is not part of it
}

TEST_CASE("protect_regex: a catastrophic pattern over 10^4 characters returns its match", "[spans][span_regex]") {
    const std::string text = std::string(10000, 'a');
    REQUIRE_NOTHROW(check_protect_regex("(a+)+$"));
    auto found = detect_spans(text, {}, "(a+)+$");
    REQUIRE(found.size() == 1);
    CHECK(found[0].begin == 0);
    CHECK(found[0].end == text.size());
    CHECK(found[0].label == "regex");
    // No match: the classic blow-up of a backtracking matcher, which tries every split of the a's.
    CHECK(detect_spans(text + "b", {}, "(a+)+$").empty());
    CHECK(detect_spans(text + "!", {}, "(a|aa)+$").empty());
}

TEST_CASE("protect_regex: what RE2 cannot compile is refused naming protect_regex", "[spans][span_regex]") {
    for (const char* bad : {"(a)\\1", "foo(?=bar)", "(?<!x)y", "(unclosed", "a{2,1}"}) {
        const std::string message = error_of(bad);
        INFO(bad);
        CHECK(message.find("protect_regex") != std::string::npos);
    }
    CHECK(error_of("(a)\\1").find("RE2") != std::string::npos);
    CHECK(error_of("AB-[0-9]+|(?:ID|REF)-(\\d+)").empty());
    CHECK(error_of("\\bfoo\\w*").empty());
    // A pattern that a request could send is still bounded before it is compiled, and after: RE2's
    // worst case grows with its program, which counted repetitions make large.
    CHECK(error_of(std::string(300, 'a')).find("at most 256 bytes") != std::string::npos);
    CHECK(error_of("(?:a?){200}a{200}").find("protect_regex: too complex") != std::string::npos);
    CHECK(error_of("(a{999}){999}").find("protect_regex") != std::string::npos);
}

TEST_CASE("span detectors: UTF-8 byte offsets on whole characters, units and case as before", "[spans][span_regex]") {
    const std::string text = "Größe 5 km/h, €3 und 7 mins; HTTPS://Beispiel.de/ä?x=1, 走る 頭";
    const auto found = detect_spans(text, parse_protect("numbers,urls"), "走|.頭");
    std::vector<std::string> got;
    for (const auto& s : found) got.push_back(text.substr(s.begin, s.end - s.begin) + "|" + s.label);
    // "km" before "km/h" in the unit list; "7" without "m" of "mins"; the URL case-insensitive and
    // without the comma; ".頭": the byte before 頭 widened to the space; 走 whole.
    CHECK(got == std::vector<std::string>{"5 km|number", "€3|number", "7|number", "HTTPS://Beispiel.de/ä?x=1|url", "1|number",
                                          "走|regex", " 頭|regex"});
    const size_t url_at = text.find("HTTPS");
    CHECK(found[3].begin == url_at);
    CHECK(found[3].end == url_at + std::string("HTTPS://Beispiel.de/ä?x=1").size());
    // A byte class: the matches are widened to the characters they cut.
    const auto cut = detect_spans(text, {}, "[\\x80-\\xBF]");
    REQUIRE_FALSE(cut.empty());  // the text's non-ASCII characters hold such bytes
    for (const auto& s : cut) {
        CHECK_NOTHROW(require_valid_utf8(text.substr(s.begin, s.end - s.begin), "span"));
        CHECK(s.end - s.begin >= 2);
    }
}
