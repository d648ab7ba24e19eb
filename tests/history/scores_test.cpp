// Quality scores in the history: candidates keep their scores, dropped candidates keep their
// reasons, export adds score columns, filters by them and removes near-duplicate targets.
#include <sqlite3.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

GenerationResult scored_result() {
    GenerationResult r;
    r.input = "the cat sat on the mat";
    Candidate a{"a cat sat on a mat", {5, 6, 1}, -1.5};
    a.scores.fluency = -0.5;
    a.scores.back_score = -0.75;
    a.scores.change = 0.4;
    a.scores.similarity = 0.9;
    Candidate b{"on the mat sat the cat", {7, 1}, -2.0};
    b.scores.fluency = -1.0;
    b.scores.back_score = -1.25;
    b.scores.change = 0.6;  // no similarity: computed without an embedder
    r.candidates = {a, b};
    Candidate dropped{"the cat sat on the mat", {8, 1}, -0.25};
    dropped.scores.change = 0.0;
    dropped.scores.back_score = -0.1;
    r.dropped = {{dropped, {DropReason::ChangeBelow, 0.1}},
                 {Candidate{"the cat sat on the mat", {8, 1}, -0.3}, {DropReason::Copy}}};
    r.diversity = 0.5;
    r.seed = 9;
    return r;
}

}  // namespace

TEST_CASE("candidates keep their scores and dropped candidates their reasons", "[history][scores]") {
    HistoryStore store(":memory:");
    GenerationRecord rec = generation_record_of(scored_result());
    CHECK(rec.seed == 9);
    const GenerationId id = store.record(rec);
    auto g = store.get(id);
    REQUIRE(g);
    REQUIRE(g->candidates.size() == 2);
    CHECK(g->candidates[0].scores.back_score == Approx(-0.75));
    CHECK(g->candidates[0].scores.similarity == Approx(0.9));
    CHECK(g->candidates[0].scores.fluency == Approx(-0.5));
    CHECK(g->candidates[0].scores.change == Approx(0.4));
    CHECK_FALSE(g->candidates[1].scores.similarity.has_value());
    REQUIRE(g->dropped.size() == 2);
    CHECK(to_string(g->dropped[0].reason) == "change<0.1");
    CHECK(g->dropped[0].reason == DropCause{DropReason::ChangeBelow, 0.1});
    CHECK(g->dropped[0].candidate.text == "the cat sat on the mat");
    CHECK(g->dropped[0].candidate.scores.back_score == Approx(-0.1));
    CHECK(to_string(g->dropped[1].reason) == "copy");
    CHECK_FALSE(g->dropped[1].candidate.scores.change.has_value());
    // Listing with candidates loads them too; removing the generation removes them.
    HistoryQuery q;
    CHECK(store.list(q).generations.at(0).dropped.size() == 2);
    CHECK(store.remove(id));
    CHECK_FALSE(store.get(id));
}

TEST_CASE("dropped reasons as older versions wrote them read back to the same text", "[history][scores]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    GenerationId id = 0;
    {
        HistoryStore store(path);
        id = store.record(generation_record_of(scored_result()));
    }
    // Every reason text the filters have printed since dropped_candidates exists (schema v4).
    const std::vector<std::string> written = {
        "copy",       "duplicate",       "lost_span",          "similarity<0.8", "similarity>0.95",  "change<0.1",
        "change>0.9", "back_score<-4.5", "near_duplicate>0.7", "change<1e-05",   "back_score<-12.25"};
    std::string sql = "DELETE FROM dropped_candidates;";
    for (size_t i = 0; i < written.size(); ++i)
        sql += "INSERT INTO dropped_candidates (generation_id, position, text, score, reason) VALUES (" + std::to_string(id) +
               ", " + std::to_string(i) + ", 'c" + std::to_string(i) + "', -1.0, '" + written[i] + "');";
    exec_sql(path, sql);
    {
        HistoryStore store(path);
        const auto g = store.get(id);
        REQUIRE(g);
        REQUIRE(g->dropped.size() == written.size());
        for (size_t i = 0; i < written.size(); ++i) CHECK(to_string(g->dropped[i].reason) == written[i]);
        CHECK(g->dropped[3].reason == DropCause{DropReason::SimilarityBelow, 0.8});
        CHECK(g->dropped[7].reason == DropCause{DropReason::BackScoreBelow, -4.5});
        CHECK(g->dropped[1].reason.kind == DropReason::Duplicate);
    }
    // A reason no version wrote is damage, said so naming the file and the generation.
    exec_sql(path, "UPDATE dropped_candidates SET reason = 'loud' WHERE position = 0;");
    HistoryStore store(path);
    try {
        store.get(id);
        FAIL("an unknown reason should be refused");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::CorruptFile);
        CHECK_THAT(e.what(),
                   Catch::Contains(path) && Catch::Contains("generation " + std::to_string(id)) && Catch::Contains("'loud'"));
    }
}

TEST_CASE("export --with-scores adds the score columns and filters by them", "[history][scores][export]") {
    TempDir dir;
    HistoryStore store(dir.file("h.sqlite"));
    store.record(generation_record_of(scored_result()));
    ExportOptions o;
    o.format = ExportFormat::Csv;
    o.with_scores = true;
    store.export_to(dir.file("all.csv"), o);
    const std::string csv = read_file(dir.file("all.csv"));
    CHECK(csv.rfind("source,target,kind,state,score,rank,generation_id,model,model_hash,created_at,"
                    "similarity,back_score,change,fluency\r\n",
                    0) == 0);
    CHECK(csv.find(",0.9,-0.75,0.4,-0.5\r\n") != std::string::npos);
    CHECK(csv.find(",,-1.25,0.6,-1.0\r\n") != std::string::npos);  // similarity empty: not computed

    o.format = ExportFormat::Jsonl;
    o.min_change = 0.5;
    const ExportResult r = store.export_to(dir.file("changed.jsonl"), o);
    CHECK(r.rows_written == 1);
    const auto rows = jsonl_rows(dir.file("changed.jsonl"));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["target"] == "on the mat sat the cat");
    CHECK(rows[0]["similarity"].is_null());
    CHECK(rows[0]["back_score"] == -1.25);

    ExportOptions s;
    s.min_similarity = 0.5;  // a bound on a score a candidate lacks leaves it out
    CHECK(store.export_to(dir.file("similar.jsonl"), s).rows_written == 1);
    CHECK(jsonl_rows(dir.file("similar.jsonl"))[0]["target"] == "a cat sat on a mat");
    // Without --with-scores the columns are unchanged.
    ExportOptions plain;
    store.export_to(dir.file("plain.jsonl"), plain);
    CHECK_FALSE(jsonl_rows(dir.file("plain.jsonl"))[0].contains("back_score"));
}

TEST_CASE("export near dedupe skips near-duplicate targets beside the exact dedupe", "[history][scores][export]") {
    TempDir dir;
    HistoryStore store(dir.file("h.sqlite"));
    store.record(
        t5s::test::sample_record("s1", {"The quick brown fox jumps over the lazy dog today.",
                                        "The quick brown fox jumps over the lazy dog today!", "Something else entirely."}));
    store.record(t5s::test::sample_record(
        "s2", {"The quick brown fox jumps over the lazy dog today.", "吾輩は猫である。名前はまだ無い。"}));
    ExportOptions exact;
    exact.dedupe = true;
    CHECK(store.export_to(dir.file("exact.jsonl"), exact).rows_written == 5);  // pairs differ by source
    ExportOptions near;
    near.near_dedupe = 0.8;
    const ExportResult r = store.export_to(dir.file("near.jsonl"), near);
    CHECK(r.near_duplicates_skipped == 2);  // the "!" variant and the same target of s2
    CHECK(r.rows_written == 3);
    std::vector<std::string> targets;
    for (const auto& row : jsonl_rows(dir.file("near.jsonl"))) targets.push_back(row["target"]);
    CHECK(targets == std::vector<std::string>{"The quick brown fox jumps over the lazy dog today.", "Something else entirely.",
                                              "吾輩は猫である。名前はまだ無い。"});
    ExportOptions bad;
    bad.near_dedupe = 1.5;
    CHECK_THROWS_AS(store.export_to(dir.file("bad.jsonl"), bad), Error);
}
