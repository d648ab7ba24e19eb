// Protected spans in the app without GL: the span view logic (detector switches, a diff
// split at span edges, marks carried across edits, a selection made a span, counts), and the
// controllers against the recording fake engine: the protect settings hot-swapped and saved,
// "protect selection" on Ctrl+P, the spans sent with Generate and BatchAugment, the forced mark
// and the batch panel's per-row counts.
#include <catch2/catch.hpp>

#include "controller.h"
#include "recording_controller.h"
#include "settings.h"
#include "span_view.h"
#include "test_script.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

using namespace t5s;
using namespace t5s::ui;

namespace {

using Fake = test::RecordingController;

std::string joined(const std::vector<MarkedRun>& runs) {
    std::string s;
    for (const auto& r : runs) s += "[" + std::to_string(r.span) + (r.span_end ? "|" : "") + ":" + r.text + "]";
    return s;
}

// The byte range of `piece` in `text`, as the source field reports a selection.
std::pair<size_t, size_t> bytes_of(const std::string& text, const std::string& piece) {
    const size_t at = text.find(piece);
    REQUIRE(at != std::string::npos);
    return {at, at + piece.size()};
}

Candidate with_spans(const std::string& text, std::vector<Span> spans, int forced = 0) {
    Candidate c{text, {}, -1.0};
    c.spans = std::move(spans);
    c.forced_spans = forced;
    return c;
}

}  // namespace

TEST_CASE("span view: detectors as switches, colours per label", "[ui][spans]") {
    CHECK(protects("numbers, urls", "urls"));
    CHECK_FALSE(protects("numbers", "url"));
    CHECK(with_detector("", "urls", true) == "urls");
    CHECK(with_detector("urls", "numbers", true) == "numbers,urls");  // span_detector_names() order
    CHECK(with_detector("numbers,urls", "numbers", false) == "urls");
    CHECK(with_detector("numbers", "numbers", false).empty());
    const SpanColour a = span_colour("PER"), b = span_colour("PER"), n = span_colour("number"), u = span_colour("url");
    CHECK((a.r == b.r && a.g == b.g && a.b == b.b));
    CHECK_FALSE((n.r == u.r && n.g == u.g && n.b == u.b));
}

TEST_CASE("span view: a diff is split at span edges on the text side, CJK and emoji whole", "[ui][spans]") {
    // The source alone: "東京で 5 😀 km" with spans on "東京" and "5 😀".
    const std::string src = "東京で 5 😀 km";
    auto runs = mark_spans({{DiffOp::Equal, src}}, {{0, 2, "LOC"}, {4, 7, "number"}});
    CHECK(joined(runs) == "[0|:東京][-1:で ][1|:5 😀][-1: km]");
    // A candidate's diff: spans count only Equal and Insert code points; deleted text is in no span.
    const std::vector<DiffSegment> diff = {
        {DiffOp::Equal, "Go to "}, {DiffOp::Delete, "old "}, {DiffOp::Insert, "Zürich"}, {DiffOp::Equal, " now"}};
    runs = mark_spans(diff, {{6, 12, "LOC"}});
    CHECK(joined(runs) == "[-1:Go to ][-1:old ][0|:Zürich][-1: now]");
    CHECK(runs[1].op == DiffOp::Delete);
    CHECK(runs[2].op == DiffOp::Insert);
    // A span across an Equal/Insert edge is two pieces; only the last ends it.
    runs = mark_spans({{DiffOp::Equal, "ab"}, {DiffOp::Insert, "cd"}}, {{1, 3, "X"}});
    CHECK(joined(runs) == "[-1:a][0:b][0|:c][-1:d]");
}

TEST_CASE("span view: marks follow edits of their text, selections become spans", "[ui][spans]") {
    const std::string before = "Meet Anna in Zürich";
    const std::vector<Span> marks = {{5, 9, "PER"}, {13, 19, "LOC"}};
    CHECK(carry_spans(before, marks, before) == marks);
    // Text put in front: both move; the first one's text removed: it goes, the other stays.
    CHECK(carry_spans(before, marks, "Hi! Meet Anna in Zürich") == std::vector<Span>{{9, 13, "PER"}, {17, 23, "LOC"}});
    CHECK(carry_spans(before, marks, "Meet Bob in Zürich") == std::vector<Span>{{12, 18, "LOC"}});
    // The nearest place wins when the text appears twice.
    CHECK(carry_spans("a X b", {{2, 3, "L"}}, "X a b X") == std::vector<Span>{{0, 1, "L"}});
    // CJK offsets are code points.
    CHECK(carry_spans("東京へ行く", {{0, 2, "LOC"}}, "明日東京へ行く") == std::vector<Span>{{2, 4, "LOC"}});

    const std::string text = "Fly to  東京 tomorrow";
    auto [a, b] = bytes_of(text, " 東京 ");
    auto span = selection_span(text, b, a, "LOC");  // reversed, with the spaces around: trimmed
    REQUIRE(span);
    CHECK(*span == Span{8, 10, "LOC"});
    CHECK_FALSE(selection_span(text, 3, 3, "X"));
    CHECK_FALSE(selection_span(text, 6, 8, "X"));  // only whitespace
    // A new mark over old ones replaces them; the rest stay in order.
    CHECK(add_span({{0, 3, "A"}, {5, 8, "B"}, {10, 12, "C"}}, {2, 6, "N"}) == std::vector<Span>{{2, 6, "N"}, {10, 12, "C"}});
    CHECK(add_span({{5, 8, "B"}}, {0, 2, "N"}) == std::vector<Span>{{0, 2, "N"}, {5, 8, "B"}});
}

TEST_CASE("span view: a result's span counts", "[ui][spans]") {
    GenerationResult r;
    r.spans = {{0, 2, "number"}, {5, 9, "PER"}};
    r.candidates = {with_spans("a", {}, 1), with_spans("b", {}, 0), with_spans("c", {}, 2)};
    r.dropped = {{with_spans("x", {}), {DropReason::LostSpan}}, {with_spans("y", {}), {DropReason::Copy}}};
    const SpanCounts c = span_counts(r);
    CHECK(c.spans == 2);
    CHECK(c.lost == 1);
    CHECK(c.forced == 2);
    CHECK(span_counts_text(c) == "2 spans, 1 lost, 2 forced");
    CHECK(span_counts_text(span_counts(GenerationResult{})).empty());
    CHECK(forced_tag(2) == "forced 2");
    CHECK(forced_tooltip(1).find("1 protected span was") == 0);
}

TEST_CASE("controller: protect settings are hot-swapped, checked and saved", "[ui][controller][spans]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    ws.source = "Order 3 items at {url}";
    f.c.generate();  // a generation running: settings reach it (and a batch's next rows) by UpdateSettings
    f.c.workspace().set_detector("numbers", true);
    REQUIRE(f.last<UpdateSettings>());
    CHECK(f.last<UpdateSettings>()->options.protect == "numbers");
    f.c.workspace().set_detector("placeholders", true);
    CHECK(f.last<UpdateSettings>()->options.protect == "placeholders,numbers");
    // The preview is the engine's plan: the number and the placeholder, in text order.
    f.c.workspace().sync_spans();
    CHECK(ws.preview == std::vector<Span>{{6, 7, "number"}, {17, 22, "placeholder"}});
    // A bad regex is shown and not sent; a good one is.
    const int sent = f.count<UpdateSettings>();
    ws.options.protect_regex = "([";
    f.c.workspace().protect_changed();
    CHECK(f.count<UpdateSettings>() == sent);
    CHECK(ws.protect_error.find("protect_regex") != std::string::npos);
    ws.options.protect_regex = "it[a-z]+";
    f.c.workspace().protect_changed();
    CHECK(f.count<UpdateSettings>() == sent + 1);
    CHECK(ws.protect_error.empty());
    CHECK(ws.preview.size() == 3);
    // The next generation carries them.
    f.c.apply(GenerationDone{ws.job, {}, {}, {}, {}});
    f.c.generate();
    CHECK(f.last<Generate>()->options.protect == "placeholders,numbers");
    CHECK(f.last<Generate>()->options.protect_regex == "it[a-z]+");
    CHECK(f.last<Generate>()->spans.empty());  // nothing marked: detected spans only
    // Saved with the other settings.
    std::string warning;
    UiState restored = test::after_restart(f.c.state(), &warning);
    CHECK(restored.ws.options.protect == "placeholders,numbers");
    CHECK(restored.ws.options.protect_regex == "it[a-z]+");
}

TEST_CASE("controller: protect selection (Ctrl+P) marks, follows edits, is removable and is sent", "[ui][controller][spans]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    const Binding* key = f.c.keymap().find(Action::ProtectSelection);
    REQUIRE(key);
    CHECK(Keymap::chord_label(key->chord) == "Ctrl+P");
    CHECK(f.c.keymap().match(key->chord, true) == Action::ProtectSelection);  // works in the source field
    ws.source = "Meet Anna in Zürich at 5 pm";
    f.c.perform(Action::ProtectSelection);  // nothing selected: says how
    CHECK(ws.marked_spans.empty());
    CHECK(ws.error.find("Ctrl+P") != std::string::npos);
    std::tie(ws.select_begin, ws.select_end) = bytes_of(ws.source, "Zürich");
    ws.mark_label = "LOC";
    f.c.perform(Action::ProtectSelection);
    CHECK(ws.marked_spans == std::vector<Span>{{13, 19, "LOC"}});
    CHECK(ws.error.empty());
    std::tie(ws.select_begin, ws.select_end) = bytes_of(ws.source, "Anna");
    ws.mark_label = "PER";
    f.c.perform(Action::ProtectSelection);
    CHECK(ws.marked_spans == std::vector<Span>{{5, 9, "PER"}, {13, 19, "LOC"}});
    // Marks and detectors together; a mark wins over a detected span it overlaps.
    f.c.workspace().set_detector("numbers", true);
    f.c.workspace().sync_spans();
    CHECK(ws.preview == std::vector<Span>{{5, 9, "PER"}, {13, 19, "LOC"}, {23, 24, "number"}});
    // The source edited: the marks follow their words.
    ws.source = "Tomorrow: " + ws.source;
    f.c.generate();
    REQUIRE(f.last<Generate>());
    REQUIRE(f.last<Generate>()->spans.size() == 1);
    CHECK(f.last<Generate>()->spans[0] == std::vector<Span>{{15, 19, "PER"}, {23, 29, "LOC"}});
    CHECK(f.last<Generate>()->options.protect == "numbers");
    f.c.workspace().remove_mark(0);
    CHECK(ws.marked_spans == std::vector<Span>{{23, 29, "LOC"}});
    CHECK(ws.preview.size() == 2);
}

TEST_CASE("controller: candidates show their spans and the forced mark; an edit carries them", "[ui][controller][spans]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    ws.source = "Call 555 now";
    f.c.generate();
    GenerationResult r;
    r.input = ws.source;
    r.spans = {{5, 8, "number"}};
    r.candidates = {with_spans("Now call 555", {{9, 12, "number"}}), with_spans("Call 555", {{5, 8, "number"}}, 1)};
    r.dropped = {{with_spans("Call now", {}), {DropReason::LostSpan}}};
    f.c.apply(GenerationDone{ws.job, {r}, {7}, f.last<Generate>()->options, {}});
    REQUIRE(ws.list.size() == 2);
    CHECK(ws.list.source_spans() == r.spans);
    CHECK(ws.list.items()[0].final_spans() == std::vector<Span>{{9, 12, "number"}});
    CHECK(ws.list.items()[0].forced_spans == 0);
    CHECK(ws.list.items()[1].forced_spans == 1);
    CHECK(reason_summary([&] {
              ReasonCounts c;
              count_reasons(ws.list.dropped(), &c);
              return c;
          }()) == "lost_span 1");
    // Edited: the span moves with its text in the edited words (and is gone if the edit drops it).
    ws.list.select(0);
    f.c.begin_edit();
    ws.edit_buffer = "Please call 555 right now";
    f.c.commit_edit();
    CHECK(ws.list.items()[0].final_spans() == std::vector<Span>{{12, 15, "number"}});
    f.c.begin_edit();
    ws.edit_buffer = "Please call now";
    f.c.commit_edit();
    CHECK(ws.list.items()[0].final_spans().empty());
}

TEST_CASE("controller: the batch panel sends a labelled file's spans and counts them per row", "[ui][controller][spans]") {
    Fake f;
    f.load();
    auto& b = f.c.state().batch;
    b.path = "/data/ner.jsonl";
    f.c.load_dataset();
    DatasetLoaded d;
    d.job = b.dataset_job;
    d.path = b.path;
    d.rows = {"Anna lives in Zürich", "no entities here", "Bob paid 5 EUR"};
    d.spans = {{{0, 4, "PER"}, {14, 20, "LOC"}}, {}, {{0, 3, "PER"}}};
    d.labels = {"travel", "", "money"};
    f.c.apply(d);
    CHECK(b.row_spans == d.spans);
    CHECK(b.labels == d.labels);
    CHECK(f.c.state().log.back().text.find("3 labelled spans") != std::string::npos);
    f.c.state().ws.options.protect = "numbers";
    f.c.start_batch();
    const BatchAugment* cmd = f.last<BatchAugment>();
    REQUIRE(cmd);
    CHECK(cmd->spans == d.spans);
    CHECK(cmd->options.protect == "numbers");
    GenerationResult r0, r2;
    r0.spans = d.spans[0];
    r0.candidates = {with_spans("In Zürich lives Anna", {{3, 9, "LOC"}, {16, 20, "PER"}})};
    r2.spans = {{0, 3, "PER"}, {9, 14, "number"}};
    r2.candidates = {with_spans("Bob paid 5 EUR", {{0, 3, "PER"}, {9, 14, "number"}}, 1)};
    r2.dropped = {{with_spans("He paid", {}), {DropReason::LostSpan}}};
    f.c.apply(BatchRowDone{b.job, 0, r0, 1});
    f.c.apply(BatchRowDone{b.job, 2, r2, 2});
    REQUIRE(b.results.size() == 3);
    CHECK(span_counts_text(b.results[0].counts) == "2 spans");
    CHECK(b.results[1].counts.spans == -1);  // not done
    CHECK(span_counts_text(b.results[2].counts) == "2 spans, 1 lost, 1 forced");
    CHECK(b.results[2].first == "Bob paid 5 EUR");
    CHECK(batch_spans_line(b) == "spans: 4 protected in 2 rows; 1 candidates lost one (dropped), 1 forced");
    // Reviewed in the workspace, a row brings its spans as marks.
    f.c.perform(Action::ReviewQueue);
    auto& ws = f.c.state().ws;
    CHECK(ws.source == "Anna lives in Zürich");
    CHECK(ws.marked_spans == d.spans[0]);
    CHECK(ws.queue_labels == d.labels);
    REQUIRE(f.last<Generate>());
    CHECK(f.last<Generate>()->spans == std::vector<std::vector<Span>>{d.spans[0]});
}

TEST_CASE("controller: marks made on a review row stay with it", "[ui][controller][spans]") {
    Fake f;
    f.load();
    auto& ws = f.c.state().ws;
    auto done = [&] { f.c.apply(GenerationDone{ws.job, {}, {}, {}, {}}); };
    f.c.workspace().review({"Anna met Bob", "Carl stayed"}, {{{0, 4, "PER"}}, {}});
    done();
    std::tie(ws.select_begin, ws.select_end) = bytes_of(ws.source, "Bob");
    ws.mark_label = "PER";
    f.c.perform(Action::ProtectSelection);
    CHECK(ws.marked_spans == std::vector<Span>{{0, 4, "PER"}, {9, 12, "PER"}});
    f.c.perform(Action::NextRow);
    CHECK(ws.source == "Carl stayed");
    CHECK(ws.marked_spans.empty());
    CHECK(ws.select_begin == 0);  // the selection of the other row's text is gone
    done();
    f.c.perform(Action::PrevRow);
    CHECK(ws.source == "Anna met Bob");
    CHECK(ws.marked_spans == std::vector<Span>{{0, 4, "PER"}, {9, 12, "PER"}});
}

TEST_CASE("script: the protected-span ops parse", "[ui][script][spans]") {
    const auto steps = parse_script(
        "protect numbers on\nprotect_regex [A-Z]{2}-\\d+\nmark_label LOC\nkey shift+left\nkey ctrl+p\nexpect_marks 1 LOC\n"
        "expect_source_spans 2\nexpect_span_candidates\nexpect_forced\nexpect_batch_labels 3\nexpect_batch_spans\n");
    REQUIRE(steps.size() == 11);
    CHECK(steps[1].arg == "[A-Z]{2}-\\d+");
    CHECK(parse_chord("ctrl+p")->key == GLFW_KEY_P);
}
