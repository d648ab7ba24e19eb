// The workspace's quality scores without GL: the candidate list sorted by a ranking (decisions still
// name the generation's candidate), bars coloured against thresholds, tooltips, dropped counts by
// reason, and the controller's sort / threshold / batch flow against a fake engine.
#include <algorithm>
#include <catch2/catch.hpp>

#include "controller.h"
#include "recording_controller.h"
#include "score_view.h"
#include "test_script.h"

using namespace t5s;
using namespace t5s::ui;

namespace {

Candidate scored(const char* text, std::optional<double> sim, double back, double change, double fluency) {
    Candidate c{text, {}, fluency * 4};
    c.scores.similarity = sim;
    c.scores.back_score = back;
    c.scores.change = change;
    c.scores.fluency = fluency;
    return c;
}

// Four candidates whose similarity, back_score and fluency orders all differ.
std::vector<Candidate> four() {
    return {scored("a", 0.50, -2.0, 0.10, -1.5), scored("b", 0.90, -3.0, 0.40, -0.5), scored("c", 0.70, -1.0, 0.85, -2.5),
            scored("d", 0.20, -4.0, 0.60, -1.0)};
}

std::string texts(const CandidateList& l) {
    std::string s;
    for (const auto& c : l.items()) s += c.text;
    return s;
}

struct Fake : test::RecordingController {
    void load(bool with_embedder) {
        RecordingController::load();
        if (!with_embedder) return;
        auto& m = c.state().model;
        m.embedder_input = "/e";
        c.load_embedder();
        EmbedderInfo e;
        e.dir = "/e";
        c.apply(EmbedderLoaded{m.embedder_job, e, 1.0});
    }
    // A generation of `cands` (and `dropped`) finishing for the workspace's running job.
    void finish(std::vector<Candidate> cands, std::vector<DroppedCandidate> dropped = {}) {
        auto& ws = c.state().ws;
        GenerationDone d;
        d.job = ws.job;
        GenerationResult r;
        r.input = ws.source;
        r.candidates = std::move(cands);
        r.dropped = std::move(dropped);
        r.diversity = 0.42;
        d.results = {r};
        d.history_ids = {11};
        d.options = last<Generate>()->options;
        c.apply(d);
    }
};

}  // namespace

TEST_CASE("candidate list: sorted by a ranking, decisions keep naming the generation's candidate", "[ui][scores]") {
    CandidateList l;
    l.reset("src", 3, four(), 0.5, {{scored("x", 0.1, -9, 0.9, -3), parse_drop_cause("similarity<0.3")}});
    CHECK(texts(l) == "abcd");
    CHECK(l.diversity() == Approx(0.5));
    REQUIRE(l.dropped().size() == 1);
    CHECK(l.all_have_similarity());
    l.select(1);  // "b"
    l.sort(RankBy::Similarity);
    CHECK(texts(l) == "bcad");
    CHECK(l.items()[size_t(l.selected())].text == "b");  // the selection follows its candidate
    l.sort(RankBy::BackScore);
    CHECK(texts(l) == "cabd");
    l.sort(RankBy::Fluency);
    CHECK(texts(l) == "bdac");
    // Accepting the first shown ("b") records candidate 1 of the generation.
    auto d = l.accept(0);
    REQUIRE(d);
    CHECK(d->index == 1);
    l.sort(RankBy::None);  // back to the generation's order
    CHECK(texts(l) == "abcd");
    CHECK(l.items()[1].state == CandidateState::Accepted);
    auto u = l.undo();
    REQUIRE(u);
    CHECK(u->index == 1);
    CHECK(l.selected() == 1);
    CHECK(l.items()[1].state == CandidateState::None);
    // A candidate without the ranking's score goes last.
    auto cs = four();
    cs[1].scores.similarity.reset();
    l.reset("src", 4, cs);
    CHECK_FALSE(l.all_have_similarity());
    l.sort(RankBy::Similarity);
    CHECK(texts(l) == "cadb");
}

TEST_CASE("score view: bars coloured against the thresholds, tooltip, reasons", "[ui][scores]") {
    CandidateList l;
    l.reset("src", 1, four());
    const CandidateVm& c = l.items()[2];  // "c": similarity 0.70, change 0.85
    GenerationOptions o;
    CHECK(similarity_bar(c, o).tone == BarTone::Neutral);
    CHECK(similarity_bar(c, o).fill == Approx(0.70f));
    CHECK_FALSE(change_bar(c, o).low);
    o.max_change = 0.8;
    CHECK(change_bar(c, o).tone == BarTone::Outside);
    CHECK(*change_bar(c, o).high == Approx(0.8f));
    CHECK(outside_reason(c, o) == "change>0.8");
    o.max_change = 0.9;  // the slider moved: the same candidate is inside at once
    CHECK(change_bar(c, o).tone == BarTone::Inside);
    CHECK(outside_reason(c, o).empty());
    o.min_similarity = 0.75;
    CHECK(similarity_bar(c, o).tone == BarTone::Outside);
    CHECK(outside_reason(c, o) == "similarity<0.75");
    const std::string tip = score_tooltip(c, o);
    for (const char* part :
         {"similarity", "0.700", "back_score", "-1.000", "change", "0.850", "fluency", "-2.500", "similarity<0.75"})
        CHECK(tip.find(part) != std::string::npos);
    // Without an embedding model the similarity bar is absent (greyed) and the tooltip says why.
    auto cs = four();
    for (auto& x : cs) x.scores.similarity.reset();
    l.reset("src", 2, cs);
    CHECK(similarity_bar(l.items()[0], o).tone == BarTone::Absent);
    CHECK(score_tooltip(l.items()[0], o).find("n/a (no embedding model)") != std::string::npos);
    // A negative cosine is an empty bar; fills stay in [0, 1].
    CandidateVm neg;
    neg.scores.similarity = -0.4;
    CHECK(similarity_bar(neg, GenerationOptions{}).fill == 0.0f);

    ReasonCounts counts;
    count_reasons({{Candidate{}, {DropReason::Copy}},
                   {Candidate{}, {DropReason::ChangeAbove, 0.8}},
                   {Candidate{}, parse_drop_cause("change>0.8")}},
                  &counts);
    CHECK(total(counts) == 3);
    CHECK(counts[DropCause{DropReason::ChangeAbove, 0.8}] == 2);  // counted by rule and threshold
    CHECK(reason_summary(counts) == "change>0.8 2, copy 1");
    // Another threshold is another reason; equal counts follow the rules' order.
    count_reasons({{Candidate{}, {DropReason::ChangeAbove, 0.7}}, {Candidate{}, {DropReason::LostSpan}}}, &counts);
    count_reasons({{Candidate{}, {DropReason::Copy}}}, &counts);
    CHECK(reason_summary(counts) == "copy 2, change>0.8 2, lost_span 1, change>0.7 1");
    CHECK(reason_summary({}).empty());
    // In the one listing order of t5s/score_names.h, the order of the tooltip and of every export.
    CHECK(score_line(CandidateScores{0.8, -1.25, 0.5, std::nullopt}) == "similarity 0.80  back_score -1.25  change 0.50");
}

TEST_CASE("controller: the sort control reorders at once and ranks the next generation", "[ui][controller][scores]") {
    Fake f;
    f.load(true);
    auto& ws = f.c.state().ws;
    ws.source = "src";
    f.c.generate();
    REQUIRE(f.last<Generate>());
    CHECK(f.last<Generate>()->options.rank == RankBy::None);  // the default: decoding order
    f.finish(four(), {{scored("x", 0.1, -9, 0.9, -3), parse_drop_cause("similarity<0.3")}});
    CHECK(texts(ws.list) == "abcd");
    CHECK(ws.list.diversity() == Approx(0.42));
    CHECK(ws.list.dropped().size() == 1);
    f.c.workspace().set_rank(RankBy::Similarity);
    CHECK(texts(ws.list) == "bcad");
    f.c.workspace().set_rank(RankBy::Auto);  // similarity: every candidate has one
    CHECK(texts(ws.list) == "bcad");
    f.c.workspace().set_rank(RankBy::BackScore);
    CHECK(texts(ws.list) == "cabd");
    f.c.generate();
    CHECK(f.last<Generate>()->options.rank == RankBy::BackScore);
    // While generating, the sort is hot-swapped into the running request.
    const size_t before = f.sent.size();
    f.c.workspace().set_rank(RankBy::Fluency);
    REQUIRE(f.sent.size() == before + 1);
    REQUIRE(f.last<UpdateSettings>());
    CHECK(f.last<UpdateSettings>()->options.rank == RankBy::Fluency);
    // A result arriving is shown in the sort chosen now.
    f.finish(four());
    CHECK(texts(ws.list) == "bdac");
    // Accepting the first shown records candidate 1 of the generation ("b").
    f.c.accept();
    const auto* rd = f.last<RecordDecision>();
    REQUIRE(rd);
    CHECK(rd->generation_id == 11);
    CHECK(rd->candidate_index == 1);
}

TEST_CASE("controller: thresholds are hot-swapped, and off without an embedding model", "[ui][controller][scores]") {
    Fake f;
    f.load(false);
    auto& ws = f.c.state().ws;
    ws.source = "src";
    ws.options.min_similarity = 0.8;
    ws.options.max_change = 0.7;
    ws.options.rank = RankBy::Similarity;
    // No embedding model: the similarity bound and ranking cannot apply (the sliders show them off).
    f.c.generate();
    const GenerationOptions sent = f.last<Generate>()->options;
    CHECK_FALSE(sent.min_similarity);
    CHECK(sent.max_change == Approx(0.7));
    CHECK(sent.rank == RankBy::Auto);
    // A slider moved while generating reaches the running request.
    ws.options.max_change = 0.5;
    ws.options.near_duplicate = 0.6;
    f.c.settings_changed();
    REQUIRE(f.last<UpdateSettings>());
    CHECK(*f.last<UpdateSettings>()->options.max_change == Approx(0.5));
    CHECK(*f.last<UpdateSettings>()->options.near_duplicate == Approx(0.6));
    f.finish({scored("a", std::nullopt, -1, 0.2, -1), scored("b", std::nullopt, -2, 0.6, -1)});
    // The bars follow the thresholds now: "b" (change 0.6) is outside max_change 0.5.
    const GenerationOptions now = f.c.effective_options();
    CHECK(outside_reason(ws.list.items()[0], now).empty());
    CHECK(outside_reason(ws.list.items()[1], now) == "change>0.5");
    // With an embedding model the similarity bound and ranking go out as set.
    f.c.state().model.embedder = EmbedderInfo{};
    CHECK(f.c.effective_options().min_similarity == Approx(0.8));
    CHECK(f.c.effective_options().rank == RankBy::Similarity);
    // Every candidate dropped: the workspace says by what.
    f.c.generate();
    f.finish({}, {{scored("x", 0.1, -9, 0.9, -3), parse_drop_cause("change>0.5")}});
    CHECK(ws.error.find("change>0.5") != std::string::npos);
}

TEST_CASE("controller: batch rows count kept and dropped candidates by reason", "[ui][controller][scores]") {
    Fake f;
    f.load(false);
    auto& b = f.c.state().batch;
    b.rows = {"r1", "r2"};
    b.per_row = 3;
    f.c.start_batch();
    REQUIRE(b.job);
    GenerationResult r1, r2;
    r1.candidates = {scored("a", {}, -1, 0.3, -1), scored("b", {}, -1, 0.3, -1)};
    r1.dropped = {{scored("c", {}, -1, 0.9, -1), parse_drop_cause("change>0.8")}};
    r2.candidates = {scored("d", {}, -1, 0.3, -1)};
    r2.dropped = {{scored("e", {}, -1, 0.9, -1), parse_drop_cause("change>0.8")},
                  {scored("f", {}, -1, 0.0, -1), parse_drop_cause("copy")}};
    f.c.apply(BatchRowDone{b.job, 0, r1, 5});
    f.c.apply(BatchRowDone{b.job, 1, r2, 6});
    CHECK(b.kept == 3);
    CHECK(total(b.dropped) == 3);
    CHECK(kept_dropped_line(b) == "kept 3, dropped 3 (change>0.8 2, copy 1)");
    f.c.apply(JobFinished{b.job, "batch", "2 of 2 rows done"});
    CHECK(f.c.state().log.back().text.find("kept 3, dropped 3") != std::string::npos);
    // A new run counts afresh.
    f.c.start_batch();
    CHECK(b.kept == 0);
    CHECK(b.dropped.empty());
}

TEST_CASE("script: the quality-score ops parse", "[ui][script][scores]") {
    const auto steps = parse_script(
        "option {\"max_change\": 0.8}\nsort similarity\nexpect_scores\nexpect_order\nsplit_threshold min_similarity\n"
        "expect_window\nexpect_filtered\nrun_batch\nexpect_batch_counts\nhistory_dropped\n");
    REQUIRE(steps.size() == 10);
    CHECK(steps[0].arg == "{\"max_change\": 0.8}");
    CHECK(steps[4].arg == "min_similarity");
}
