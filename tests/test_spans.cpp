// Protected spans without a model (engine/src/spans): detectors, planning (explicit spans in code
// points, merge and overlap rules, masking), restoring into decoded ids of the genuine T5
// tokenizer (moved and reordered spans, spacing, CJK, combining characters, emoji), the sentinel
// rule the decoder follows, and the verification.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "span_test_support.h"
#include "spans/sentinel_guard.h"
#include "spans/span_detect.h"
#include "spans/span_plan.h"
#include "spans/span_restore.h"
#include "t5s/error.h"
#include "t5s/text_offsets.h"
#include "t5s/tokenizer.h"

using namespace t5s;
using namespace t5s::spans;

using t5s::test::code_point_slice;

namespace {

std::vector<std::string> texts_of(const std::string& text, const std::vector<ByteSpan>& spans) {
    std::vector<std::string> out;
    for (const auto& s : spans) out.push_back(text.substr(s.begin, s.end - s.begin) + "|" + s.label);
    return out;
}

GenerationOptions protecting(const std::string& detectors, const std::string& regex = "") {
    GenerationOptions o;
    o.protect = detectors;
    o.protect_regex = regex;
    return o;
}

Tokenizer t5_tokenizer() { return Tokenizer::load(std::string(T5S_TEST_DATA) + "/t5-spiece/spiece.model"); }
// The genuine T5 vocabulary has no CJK pieces (they decode to nothing): CJK checks use the tiny
// SentencePiece model trained on Tatoeba Chinese and JSTS (byte fallback).
Tokenizer cjk_tokenizer() { return Tokenizer::load(std::string(T5S_TEST_DATA) + "/models/tiny-spm/spiece.model"); }

// The ids a model would emit for `text` (sentinels written as <extra_id_N>), without </s>.
std::vector<int> ids_of(const Tokenizer& tok, const std::string& text) { return tok.encode(text, false); }

}  // namespace

TEST_CASE("span detectors find placeholders, numbers with units, URLs, e-mails and regex matches", "[spans]") {
    const std::string text =
        "Dear {customer_name}, order [ID-4411] of {{qty}} items (3 kg, $5.20, 12.5%) ships %s; see "
        "https://example.com/a?b=1. or write to help@example.co.uk <b>now</b> mp3";
    const auto found = texts_of(text, detect_spans(text, parse_protect("placeholders,numbers,urls,emails"), "ships"));
    for (const char* want : {"{customer_name}|placeholder", "[ID-4411]|placeholder", "{{qty}}|placeholder", "3 kg|number",
                             "$5.20|number", "12.5%|number", "%s|placeholder", "https://example.com/a?b=1|url",
                             "help@example.co.uk|email", "<b>|placeholder", "</b>|placeholder", "ships|regex"}) {
        CHECK(std::find(found.begin(), found.end(), want) != found.end());
    }
    CHECK(std::none_of(found.begin(), found.end(), [](const std::string& s) { return s.rfind("3|", 0) == 0; }));  // not "mp3"
    CHECK_THROWS_AS(parse_protect("numbers,dates"), Error);
    CHECK_THROWS_AS(check_protect_regex("(unclosed"), Error);
    CHECK_THROWS_AS(check_protect_regex(std::string(20, '(') + "a" + std::string(20, ')')), Error);  // nesting: recursion
    CHECK_THROWS_AS(check_protect_regex(std::string(300, 'a')), Error);
    CHECK_NOTHROW(check_protect_regex("AB-[0-9]+|(?:ID|REF)-(\\d+)"));
    CHECK(parse_protect(" numbers , urls,,numbers") == std::vector<std::string>{"numbers", "urls"});
}

TEST_CASE("span plan: explicit spans in code points over CJK, combining characters and emoji", "[spans]") {
    // 北京 at code points 2..4; "Zu\u0308rich" is 7 code points (u + combining diaeresis); the
    // emoji 🍕 is one code point of four bytes, ❤️ two (heart + variation selector).
    const std::string text = "我在北京住了3年, Zu\u0308rich ❤️ 🍕 pizza";
    const std::vector<Span> given = {{2, 4, "LOC"}, {10, 17, "CITY"}, {21, 22, "FOOD"}};
    REQUIRE(code_point_slice(text, 10, 17) == "Zu\u0308rich");
    const SpanPlan plan = plan_spans(text, given, protecting("numbers"));
    REQUIRE(plan.spans.size() == 4);
    CHECK(plan.masked == "我在<extra_id_0>住了<extra_id_1>年, <extra_id_2> ❤️ <extra_id_3> pizza");
    CHECK(plan.spans[0].text == "北京");
    CHECK(plan.spans[1].text == "3");
    CHECK(plan.spans[1].label == "number");
    CHECK(plan.spans[2].text == "Zu\u0308rich");
    CHECK(plan.spans[3].text == "🍕");
    CHECK(plan.spans[0].source == given[0]);
    CHECK(plan.spans[2].source == given[1]);
    CHECK(plan.spans[3].source == given[2]);
    CHECK(plan.spans[1].source == Span{6, 7, "number"});
    CHECK_FALSE(plan.spans[0].space_before);
    CHECK(plan.spans[2].space_before);
    CHECK(plan.spans[2].space_after);
    CHECK(byte_of_code_point(text, 22) == text.find(" pizza"));
    CHECK(code_point_length(text) == 28);
}

TEST_CASE("span plan: explicit spans win over detected ones; bad explicit spans are errors", "[spans]") {
    const std::string text = "Call 555 1234 or mail bob@example.com about {item}";
    // The explicit span covers "555 1234"; the detected numbers inside it give way.
    const SpanPlan plan = plan_spans(text, {{5, 13, "PHONE"}}, protecting("numbers,emails,placeholders"));
    REQUIRE(plan.spans.size() == 3);
    CHECK(plan.spans[0].text == "555 1234");
    CHECK(plan.spans[0].label == "PHONE");
    CHECK(plan.spans[1].label == "email");
    CHECK(plan.spans[2].text == "{item}");
    // A URL and the number inside it: the longer span at the earlier start wins.
    const SpanPlan url = plan_spans("see www.a.com/3 now", {}, protecting("numbers,urls"));
    REQUIRE(url.spans.size() == 1);
    CHECK(url.spans[0].label == "url");
    CHECK_THROWS_AS(plan_spans(text, {{0, 4, "A"}, {2, 6, "B"}}, {}), Error);   // overlap
    CHECK_THROWS_AS(plan_spans(text, {{40, 99, "A"}}, {}), Error);              // past the end
    CHECK_THROWS_AS(plan_spans(text, {{3, 3, "A"}}, {}), Error);                // empty
    CHECK_THROWS_AS(plan_spans("1 2 3", {}, protecting("numbers"), 2), Error);  // more spans than sentinels
    CHECK_FALSE(plan_spans(text, {}, {}).active());
}

TEST_CASE("span restore: moved and reordered spans get their new code-point offsets and sensible spacing", "[spans]") {
    const Tokenizer tok = t5_tokenizer();
    const std::string source = "Ship 3 kg to {customer_name} in Zu\u0308rich by Friday.";
    const SpanPlan plan = plan_spans(source, {{32, 39, "CITY"}}, protecting("numbers,placeholders"));
    REQUIRE(plan.spans.size() == 3);
    // A paraphrase that reorders them (what a model emits after the masked source).
    const RestoredText r = restore_spans(plan, ids_of(tok, "By Friday, <extra_id_1> in <extra_id_2> gets <extra_id_0>."), tok);
    CHECK(r.complete);
    CHECK(r.text == "By Friday, {customer_name} in Zu\u0308rich gets 3 kg.");
    REQUIRE(r.spans.size() == 3);
    CHECK(r.spans[0].label == "placeholder");
    CHECK(r.spans[1].label == "CITY");
    CHECK(r.spans[2].label == "number");
    const std::vector<std::string> want = {"{customer_name}", "Zu\u0308rich", "3 kg"};
    for (size_t k = 0; k < 3; ++k) CHECK(code_point_slice(r.text, r.spans[k].start, r.spans[k].end) == want[k]);
    CHECK(keeps_spans(source, r.text, plan.spans));

    // CJK: no spaces in the source around the spans, none put back.
    const std::string zh = "我在北京住了3年🍕";
    const SpanPlan zp = plan_spans(zh, {{2, 4, "LOC"}, {8, 9, "FOOD"}}, protecting("numbers"));
    const Tokenizer cjk = cjk_tokenizer();
    const RestoredText zr = restore_spans(zp, ids_of(cjk, "<extra_id_1>年<extra_id_2>在<extra_id_0>"), cjk);
    CHECK(zr.complete);
    CHECK(zr.text == "3年🍕在北京");
    REQUIRE(zr.spans.size() == 3);
    for (const Span& s : zr.spans) {
        const std::string piece = code_point_slice(zr.text, s.start, s.end);
        CHECK((piece == "北京" || piece == "3" || piece == "🍕"));
    }
    CHECK(zr.text.find(' ') == std::string::npos);

    // Translated into Chinese: the English source had spaces around "1996", the output gets none.
    const SpanPlan en = plan_spans("She graduated in 1996 with honours.", {}, protecting("numbers"));
    const RestoredText zh_out = restore_spans(en, ids_of(cjk, "她<extra_id_0>年畢業。"), cjk);
    CHECK(zh_out.text == "她1996年畢業。");
    CHECK(zh_out.spans == std::vector<Span>{{1, 5, "number"}});
}

TEST_CASE("span restore and verify: a lost, repeated or foreign sentinel is not complete", "[spans]") {
    const Tokenizer tok = t5_tokenizer();
    const std::string source = "Pay $5 to {name} now";
    const SpanPlan plan = plan_spans(source, {}, protecting("numbers,placeholders"));
    REQUIRE(plan.spans.size() == 2);
    const RestoredText lost = restore_spans(plan, ids_of(tok, "Pay <extra_id_0> now"), tok);
    CHECK_FALSE(lost.complete);
    CHECK_FALSE(keeps_spans(source, lost.text, plan.spans));
    const RestoredText twice = restore_spans(plan, ids_of(tok, "<extra_id_0> <extra_id_1> <extra_id_0>"), tok);
    CHECK_FALSE(twice.complete);
    CHECK(restore_spans(plan, ids_of(tok, "<extra_id_0> <extra_id_1> <extra_id_7>"), tok).complete == false);
    // Without protection: a candidate that rewrote "$5" as "five dollars" does not keep it.
    CHECK_FALSE(keeps_spans(source, "Pay five dollars to {name} now", plan.spans));
    CHECK(keeps_spans(source, "Now pay {name} $5", plan.spans));
    CHECK_FALSE(keeps_spans(source, "Pay $5 to {name}, {name} now", plan.spans));  // duplicated
}

TEST_CASE("sentinel rule: end waits for every sentinel, each once, forced when the length runs out", "[spans]") {
    const SentinelRange range{100, 200};
    const std::vector<int> required = {199, 198, 197};
    const std::vector<int64_t> none;
    GuardStep g = guard_step(required, none.data(), 0, 10, range);
    CHECK(g.remaining == required);
    CHECK_FALSE(g.force);
    const std::vector<int64_t> some = {5, 198, 6};
    g = guard_step(required, some.data(), 3, 10, range);
    CHECK(g.remaining == std::vector<int>{199, 197});
    CHECK_FALSE(g.force);
    g = guard_step(required, some.data(), 3, 5, range);  // 2 steps left, 2 remaining
    CHECK(g.force);
    CHECK(g.remaining.front() == 199);
    // A model that never emits sentinels: the last three of 6 tokens are forced, in input order.
    CHECK(count_forced(required, {5, 6, 7, 199, 198, 197}, 6, range) == 3);
    CHECK(count_forced(required, {199, 5, 198, 197, 1}, 6, range) == 0);
    CHECK(count_forced(required, {5, 199, 6, 7, 198, 197}, 6, range) == 2);
    CHECK(sentinels_in({5, 150, 7, 150, 120, 1}, range) == std::vector<int>{150, 120});
}

TEST_CASE("span detectors never cut a UTF-8 character (std::regex matches bytes)", "[spans]") {
    // The currency class once matched single bytes of "€": 2頭 and 滑走路 have bytes in common with it.
    const std::string text = "山の上に顔の白い牛が2頭います。価格は¥500、€3です。";
    const auto found = texts_of(text, detect_spans(text, parse_protect("numbers"), "走|.頭"));
    CHECK(std::find(found.begin(), found.end(), "2|number") != found.end());
    CHECK(std::find(found.begin(), found.end(), "¥500|number") != found.end());
    CHECK(std::find(found.begin(), found.end(), "€3|number") != found.end());
    for (const auto& s : detect_spans(text, parse_protect("numbers"), "[\\x80-\\xBF]")) {  // a byte class: widened
        CHECK_NOTHROW(require_valid_utf8(text.substr(s.begin, s.end - s.begin), "span"));
    }
    const SpanPlan plan = plan_spans(text, {}, protecting("numbers"));
    CHECK_NOTHROW(require_valid_utf8(plan.masked, "masked"));
    CHECK(plan.spans.size() == 3);
}
