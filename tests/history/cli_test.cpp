// The `t5studio history` and `t5studio export` subcommands, driven in-process.
#include <catch2/catch.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "common/args.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

struct Captured {
    int rc = -1;
    std::string out, err;
};

Captured run(int (*command)(const cli::Argv&), const cli::Argv& argv) {
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    Captured c;
    try {
        c.rc = command(argv);
    } catch (...) {
        std::cout.rdbuf(old_out);
        std::cerr.rdbuf(old_err);
        throw;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    c.out = out.str();
    c.err = err.str();
    return c;
}

std::string make_history(const TempDir& dir) {
    const std::string path = dir.file("h.sqlite");
    HistoryStore store(path);
    store.record(sample_record("first input", {"one", "two"}, 1714564800000, "models/a"));
    store.record(sample_record("日本語の入力", {"候補A", "候補B"}, 1714564801000, "models/b"));
    store.record(sample_record("third", {"x"}, 1714564802000, "models/a"));
    return path;
}

}  // namespace

TEST_CASE("cli history --json lists generations with candidate states", "[history][cli]") {
    TempDir dir;
    const std::string path = make_history(dir);
    { HistoryStore(path).edit(2, 1, "直した"); }
    const Captured c = run(cli::run_history, {"--history", path, "--json"});
    CHECK(c.rc == 0);
    const auto j = nlohmann::json::parse(c.out);
    REQUIRE(j["generations"].size() == 3);
    const auto& g = j["generations"][1];
    CHECK(g["id"] == 2);
    CHECK(g["input"] == "日本語の入力");
    CHECK(g["model"] == "models/b");
    CHECK(g["created_at"] == "2024-05-01T12:00:01.000Z");
    REQUIRE(g["candidates"].size() == 2);
    CHECK(g["candidates"][0]["state"] == "none");
    CHECK(g["candidates"][1]["state"] == "edited");
    CHECK(g["candidates"][1]["text"] == "候補B");
    CHECK(g["candidates"][1]["final_text"] == "直した");
    CHECK(g["candidates"][0]["score"] == Approx(-0.5));
    CHECK(j["next_after_id"].is_null());
    // The output is UTF-8, not \u escapes.
    CHECK(c.out.find("日本語の入力") != std::string::npos);
}

TEST_CASE("cli history --search / --limit / --after page through results", "[history][cli]") {
    TempDir dir;
    const std::string path = make_history(dir);
    auto j = nlohmann::json::parse(run(cli::run_history, {"--history", path, "--search", "本語", "--json"}).out);
    REQUIRE(j["generations"].size() == 1);
    CHECK(j["generations"][0]["id"] == 2);
    j = nlohmann::json::parse(run(cli::run_history, {"--history", path, "--limit", "2", "--json"}).out);
    CHECK(j["generations"].size() == 2);
    CHECK(j["next_after_id"] == 2);
    j = nlohmann::json::parse(run(cli::run_history, {"--history", path, "--limit=2", "--after", "2", "--json"}).out);
    REQUIRE(j["generations"].size() == 1);
    CHECK(j["generations"][0]["id"] == 1);
    j = nlohmann::json::parse(run(cli::run_history, {"--history", path, "--model", "models/a", "--json"}).out);
    CHECK(j["generations"].size() == 2);
    // Text mode shows one block per generation.
    const Captured text = run(cli::run_history, {"--history", path, "--search", "FIRST"});
    CHECK(text.out.find("#1  2024-05-01T12:00:00.000Z  models/a\n  input: first input\n  [0] none") == 0);
}

TEST_CASE("cli history records accept / reject / edit / undo / redo / delete in order", "[history][cli]") {
    TempDir dir;
    const std::string path = make_history(dir);
    const Captured c = run(cli::run_history, {"--history", path, "--accept", "1:0", "--reject=1:1", "--edit",
                                              "2:0=new, text=with:colons", "--undo", "1", "--json"});
    CHECK(c.rc == 0);
    const auto j = nlohmann::json::parse(c.out);
    REQUIRE(j["events"].size() == 4);
    CHECK(j["events"][0]["action"] == "accept");
    CHECK(j["events"][2]["candidate_index"] == 0);
    CHECK(j["events"][3]["action"] == "undo");
    CHECK(j["events"][3]["applied"] == true);
    {
        HistoryStore store(path);
        CHECK(store.get(1)->candidates[0].state == CandidateState::Accepted);
        CHECK(store.get(1)->candidates[1].state == CandidateState::None);  // the reject was undone
        CHECK(store.get(2)->candidates[0].final_text == "new, text=with:colons");
    }
    run(cli::run_history, {"--history", path, "--redo", "1"});
    CHECK(HistoryStore(path).get(1)->candidates[1].state == CandidateState::Rejected);
    const Captured nothing = run(cli::run_history, {"--history", path, "--undo", "3"});
    CHECK(nothing.out == "undo 3: nothing to undo\n");
    run(cli::run_history, {"--history", path, "--delete", "3"});
    CHECK_FALSE(HistoryStore(path).get(3));

    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--accept", "1"}), cli::UsageError);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--accept", "x:0"}), cli::UsageError);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--edit", "1:0"}), cli::UsageError);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--accept", "1:0", "--search", "q"}), cli::UsageError);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--accept", "1:9"}), Error);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--delete", "99"}), Error);
    CHECK_THROWS_AS(run(cli::run_history, {"--history", path, "--bogus"}), cli::UsageError);
}

TEST_CASE("cli history and export refuse a missing or corrupt database without creating one", "[history][cli]") {
    TempDir dir;
    try {
        run(cli::run_history, {"--history", dir.file("none.sqlite")});
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::FileNotFound);
    }
    CHECK_FALSE(t5s::test::file_exists(dir.file("none.sqlite")));
    write_file(dir.file("bad.sqlite"), std::string(4096, 'x'));
    try {
        run(cli::run_export, {"--history", dir.file("bad.sqlite"), "--format", "csv", "--out", dir.file("o.csv")});
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::CorruptFile);
        CHECK(std::string(e.what()).find("bad.sqlite") != std::string::npos);
    }
    CHECK_FALSE(t5s::test::file_exists(dir.file("o.csv")));
    CHECK_THROWS_AS(run(cli::run_history, {}), cli::UsageError);
}

TEST_CASE("cli export writes the file, summarises, and needs --force to replace", "[history][cli]") {
    TempDir dir;
    const std::string path = make_history(dir);
    {
        HistoryStore store(path);
        store.accept(1, 0);
        store.edit(2, 1, "直した");
    }
    const std::string out = dir.file("train.jsonl");
    const Captured c = run(cli::run_export, {"--history", path, "--format", "jsonl", "--out", out, "--accepted-only",
                                             "--include-originals", "--dedupe", "--json"});
    CHECK(c.rc == 0);
    const auto summary = nlohmann::json::parse(c.out);
    CHECK(summary["rows_written"] == 4);
    CHECK(summary["generations"] == 2);
    CHECK(summary["path"] == out);
    CHECK(c.err.find("wrote 4 rows from 2 generations to " + out) != std::string::npos);
    const std::string data = read_file(out);
    CHECK(std::count(data.begin(), data.end(), '\n') == 4);
    CHECK(data.find(R"("target":"直した")") != std::string::npos);

    try {
        run(cli::run_export, {"--history", path, "--format", "csv", "--out", out});
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("--force") != std::string::npos);
    }
    CHECK(read_file(out) == data);
    const Captured forced = run(cli::run_export, {"--history", path, "--format", "csv", "--out", out, "--force"});
    CHECK(forced.rc == 0);
    CHECK(forced.out.empty());
    CHECK(read_file(out).rfind("source,target,kind", 0) == 0);
    CHECK_THROWS_AS(run(cli::run_export, {"--history", path, "--format", "xml", "--out", out}), cli::UsageError);
    CHECK_THROWS_AS(run(cli::run_export, {"--history", path, "--format", "csv"}), cli::UsageError);
}
