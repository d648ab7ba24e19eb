// Recipe routes in the history (schema v6): recorded and read back for kept and dropped candidates,
// a v5 file upgraded in place, a damaged route refused in one line, routes in the JSONL / CSV / TSV
// exports and in the hf-dataset card (recipes, candidates per route), the recipe named in settings.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "input/delimited_text.h"
#include "t5s/error.h"
#include "t5s/hf_dataset.h"
#include "t5s/history_store.h"
#include "t5s/score_report.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

const Route kBack = {{"pivot", "我喜欢\"绿茶\"。"}, {"back", "I like green tea, | really."}};
const Route kPara = {{"paraphrase", "I enjoy green tea."}};

// Two recipe candidates (two routes) and a plain one; a dropped candidate with its route.
GenerationRecord routed_record() {
    GenerationRecord r = sample_record("I like green tea.", {"I like green tea, | really.", "I enjoy green tea.", "plain"});
    r.candidates[0].route = kBack;
    r.candidates[1].route = kPara;
    DroppedRecord d;
    d.candidate.text = "I like green tea.";
    d.candidate.route = kBack;
    d.reason.kind = DropReason::Copy;
    r.dropped = {d};
    r.recipe_json = R"({"file":"/recipes/bt.json","sha256":"abc123"})";
    return r;
}

std::vector<std::vector<std::string>> read_table(const std::string& text, char sep) {
    std::istringstream in(text);
    std::vector<std::vector<std::string>> rows;
    int64_t line = 0;
    DelimitedRecord rec;
    while (read_delimited_record(in, sep, &line, &rec)) rows.push_back(rec.fields);
    return rows;
}

}  // namespace

TEST_CASE("the route codec: one text form, read back exactly; damage is one clear error", "[history][route]") {
    CHECK(route_json_text({}).empty());
    CHECK(route_of_json_text("", "x").empty());
    const std::string text = route_json_text(kBack);
    CHECK(text == R"([{"step":"pivot","text":"我喜欢\"绿茶\"。"},{"step":"back","text":"I like green tea, | really."}])");
    const Route back = route_of_json_text(text, "x");
    REQUIRE(back.size() == 2);
    CHECK(back[0].step == "pivot");
    CHECK(back[1].text == kBack[1].text);
    for (const char* bad : {"not json", "{}", "[1]", R"([{"step": "a"}])", R"([{"step": 1, "text": "t"}])"}) {
        INFO(bad);
        try {
            route_of_json_text(bad, "history database h.sqlite is damaged: generation 1 candidate 0");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::CorruptFile);
            CHECK(std::string(e.what()).rfind("history database h.sqlite is damaged: generation 1 candidate 0: the route ", 0) ==
                  0);
        }
    }
    nlohmann::json many = nlohmann::json::array();
    for (size_t i = 0; i <= kMaxStoredRouteLegs; ++i) many.push_back({{"step", "s"}, {"text", "t"}});
    CHECK_THROWS_WITH(route_of_json_text(many.dump(), "x"), Catch::Contains("more than 64"));
}

TEST_CASE("routes are recorded and read back for kept and dropped candidates; empty ones are NULL", "[history][route]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    {
        HistoryStore store(path);
        const GenerationId id = store.record(routed_record());
        const auto g = store.get(id);
        REQUIRE(g);
        REQUIRE(g->candidates.size() == 3);
        CHECK(route_steps(g->candidates[0].route) == "pivot > back");
        CHECK(g->candidates[0].route[0].text == kBack[0].text);
        CHECK(route_steps(g->candidates[1].route) == "paraphrase");
        CHECK(g->candidates[2].route.empty());
        REQUIRE(g->dropped.size() == 1);
        CHECK(route_steps(g->dropped[0].candidate.route) == "pivot > back");
        const HistoryPage page = store.list({});
        REQUIRE(page.generations.size() == 1);
        CHECK(route_steps(page.generations[0].candidates[0].route) == "pivot > back");
        CHECK(recipe_of_settings_json(g->settings_json) == "/recipes/bt.json (sha256:abc123)");
    }
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM candidates WHERE route IS NULL", -1, &st, nullptr);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) == 1);  // the plain candidate
    sqlite3_finalize(st);
    sqlite3_close(db);
}

TEST_CASE("a v5 file upgrades to v6 in place: its rows kept, without routes; new rows get theirs",
          "[history][migration][route]") {
    TempDir dir;
    const std::string path = dir.file("v5.sqlite");
    {
        HistoryStore store(path);
        auto old = sample_record("old input", {"old candidate", "second"});
        old.label_json = "\"PER\"";
        store.accept(store.record(old), 0);
    }
    // The v5 schema is v6 without the two route columns.
    exec_sql(
        path,
        "ALTER TABLE candidates DROP COLUMN route; ALTER TABLE dropped_candidates DROP COLUMN route; PRAGMA user_version = 5;");
    HistoryStore store(path);
    CHECK(store.schema_version() == 6);
    const auto old = store.get(1);
    REQUIRE(old);
    CHECK(old->input == "old input");
    CHECK(old->label_json == "\"PER\"");
    REQUIRE(old->candidates.size() == 2);
    CHECK(old->candidates[0].state == CandidateState::Accepted);
    CHECK(old->candidates[0].route.empty());
    const GenerationId id = store.record(routed_record());
    CHECK(route_steps(store.get(id)->candidates[0].route) == "pivot > back");
    CHECK(store.integrity_check() == "ok");
}

TEST_CASE("a damaged route is CorruptFile naming the file, the generation and the candidate", "[history][route][corrupt]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    { HistoryStore(path).record(routed_record()); }
    exec_sql(path,
             "UPDATE candidates SET route = '[{\"step\": 3}]' WHERE rank = 1;"
             "UPDATE dropped_candidates SET route = 'oops';");
    HistoryStore store(path);
    CHECK_THROWS_WITH(
        store.get(1),
        Catch::Contains(path + " is damaged: generation 1 candidate 1: the route has a leg without a text \"step\""));
    ExportOptions o;
    CHECK_THROWS_WITH(store.export_to(dir.file("out.jsonl"), o), Catch::Contains("generation 1 candidate 1: the route"));
    CHECK_FALSE(t5s::test::file_exists(dir.file("out.jsonl")));
    exec_sql(path, "UPDATE candidates SET route = NULL WHERE rank = 1;");
    CHECK_THROWS_WITH(store.get(1), Catch::Contains("generation 1 dropped candidate 0: the route is not valid JSON"));
}

TEST_CASE("exports: JSONL \"route\" on routed rows, CSV/TSV a last route column only when a row has one",
          "[history][export][route]") {
    TempDir dir;
    HistoryStore store(":memory:");
    store.record(sample_record("plain input", {"plain candidate"}));
    store.record(routed_record());
    ExportOptions o;
    store.export_to(dir.file("all.jsonl"), o);
    std::vector<nlohmann::ordered_json> rows = jsonl_rows<nlohmann::ordered_json>(dir.file("all.jsonl"));
    REQUIRE(rows.size() == 4);
    CHECK_FALSE(rows[0].contains("route"));
    CHECK(rows[1]["route"].dump() == nlohmann::ordered_json::parse(route_json_text(kBack)).dump());
    CHECK(rows[1].items().begin().key() == "source");  // the old keys first, route last
    CHECK((--rows[1].end()).key() == "route");
    CHECK(rows[2]["route"][0]["step"] == "paraphrase");
    CHECK_FALSE(rows[3].contains("route"));

    for (const auto& [format, sep] : std::map<ExportFormat, char>{{ExportFormat::Csv, ','}, {ExportFormat::Tsv, '\t'}}) {
        o.format = format;
        o.with_labels = true;
        o.overwrite = true;
        store.export_to(dir.file("all.txt"), o);
        const auto table = read_table(read_file(dir.file("all.txt")), sep);
        REQUIRE(table.size() == 5);
        CHECK(table[0].back() == "route");
        CHECK(table[0][table[0].size() - 2] == "target_spans");  // added after every earlier column
        CHECK(table[1].back().empty());
        CHECK(table[2].back() == route_json_text(kBack));
        CHECK(table[3].back() == route_json_text(kPara));
        CHECK(table[4].back().empty());
        // Without routes in the selection the columns are as they were.
        HistoryFilter plain;
        plain.text = "plain input";
        ExportOptions p = o;
        p.filter = plain;
        store.export_to(dir.file("plain.txt"), p);
        CHECK(read_table(read_file(dir.file("plain.txt")), sep)[0].back() == "target_spans");
    }
}

TEST_CASE("the recipe is named in settings, counted by provenance and left out of the settings list", "[history][route]") {
    TempDir dir;
    write_file(dir.file("r.json"), "abc");
    const nlohmann::json rec = nlohmann::json::parse(recipe_record_json(dir.file("r.json")));
    CHECK(rec["file"] == dir.file("r.json"));
    CHECK(rec["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // SHA-256 of "abc"
    CHECK_THROWS_AS(recipe_record_json(dir.file("none.json")), Error);

    HistoryStore store(":memory:");
    store.record(routed_record());
    store.record(routed_record());
    store.record(sample_record("plain", {"p"}));
    const HistoryProvenance p = store.provenance({});
    REQUIRE(p.recipes.size() == 1);
    CHECK(p.recipes[0].value == "/recipes/bt.json (sha256:abc123)");
    CHECK(p.recipes[0].n == 2);
    REQUIRE(p.settings.size() == 1);  // the recipe is not a setting
    CHECK(p.settings[0].value.find("recipe") == std::string::npos);
}

TEST_CASE("build_report: candidates per route, most first, a bar each, mean scores per route", "[history][report][route]") {
    ReportInput in;
    in.score_names = {"score"};
    in.score_values = {{-1.0, -2.0, -4.0, std::nullopt, -0.5}};
    in.candidates_per_source = {5};
    in.candidate_routes = {"pivot > back", "paraphrase", "pivot > back", "pivot > back", ""};
    const Report r = build_report(in);
    using Counts = std::vector<std::pair<std::string, int64_t>>;
    CHECK(r.candidates_by_route == Counts{{"pivot > back", 3}, {"(no recipe)", 1}, {"paraphrase", 1}});
    CHECK(r.markdown.find("| pivot > back | 3 | -2.5 |") != std::string::npos);  // the mean over the two with a score
    CHECK(r.markdown.find("![candidates per route](plots/candidates_per_route.png)") != std::string::npos);
    CHECK(r.plots.back().file == "plots/candidates_per_route.png");
    in.candidate_routes.assign(5, "");
    CHECK(build_report(in).candidates_by_route.empty());  // no recipe: no section
}
