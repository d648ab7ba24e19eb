// Schema versioning: a v1 file (as an older T5 Studio wrote it) migrates to v2 with its data;
// newer, unrelated, corrupt and truncated files are refused with a clear error and left untouched.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

// The v1 schema exactly as version 1 shipped it (frozen here on purpose: it stands for old files).
const char* kV1Schema = R"sql(
CREATE TABLE generations (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at    INTEGER NOT NULL,
  input         TEXT    NOT NULL,
  settings_json TEXT    NOT NULL DEFAULT '{}',
  seed          INTEGER NOT NULL DEFAULT -1,
  model_path    TEXT    NOT NULL DEFAULT '',
  model_hash    TEXT    NOT NULL DEFAULT '',
  precision     TEXT    NOT NULL DEFAULT '',
  device        TEXT    NOT NULL DEFAULT '',
  total_ms      REAL    NOT NULL DEFAULT 0,
  timings_json  TEXT    NOT NULL DEFAULT '{}'
);
CREATE TABLE candidates (
  generation_id INTEGER NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
  rank          INTEGER NOT NULL,
  text          TEXT    NOT NULL,
  score         REAL    NOT NULL,
  state         INTEGER NOT NULL DEFAULT 0,
  edited_text   TEXT,
  PRIMARY KEY (generation_id, rank)
) WITHOUT ROWID;
CREATE TABLE events (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  generation_id   INTEGER NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
  kind            TEXT    NOT NULL CHECK (kind IN ('accept', 'reject', 'edit', 'undo', 'redo')),
  candidate_rank  INTEGER NOT NULL,
  text            TEXT,
  target_event_id INTEGER,
  created_at      INTEGER NOT NULL
);
CREATE INDEX events_by_generation ON events (generation_id, id);
INSERT INTO generations (id, created_at, input, model_path, model_hash) VALUES
  (1, 1700000000000, 'old input', 'models/old', 'h1'),
  (2, 1700000001000, '古い入力', 'models/old', 'h1');
INSERT INTO candidates (generation_id, rank, text, score, state, edited_text) VALUES
  (1, 0, 'old candidate', -1.0, 1, NULL),
  (1, 1, 'second', -2.0, 0, NULL),
  (2, 0, '古い候補', -0.5, 3, '直した候補');
INSERT INTO events (generation_id, kind, candidate_rank, text, created_at) VALUES
  (1, 'accept', 0, NULL, 1700000000500),
  (2, 'edit', 0, '直した候補', 1700000001500);
PRAGMA application_id = 1412780872;
PRAGMA user_version = 1;
)sql";

std::string query_text(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    std::string out;
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

void expect_open_error(const std::string& path, ErrorCode code) {
    const std::string before = read_file(path);
    try {
        HistoryStore store(path);
        FAIL("opening " << path << " should fail");
    } catch (const Error& e) {
        CHECK(e.code() == code);
        CHECK(std::string(e.what()).find(path) != std::string::npos);  // names the file
    }
    CHECK(read_file(path) == before);  // opening never changes (or destroys) the file
}

}  // namespace

TEST_CASE("a v1 file migrates to the current version keeping its data", "[history][migration]") {
    TempDir dir;
    const std::string path = dir.file("v1.sqlite");
    exec_sql(path, kV1Schema);
    REQUIRE(query_text(path, "PRAGMA user_version") == "1");

    {
        HistoryStore store(path);
        CHECK(store.schema_version() == HistoryStore::kSchemaVersion);
        auto g1 = store.get(1);
        REQUIRE(g1);
        CHECK(g1->input == "old input");
        CHECK(g1->origin.empty());      // the v2 column, defaulted for old rows
        CHECK(g1->label_json.empty());  // the v5 column, empty for old rows
        CHECK(g1->candidates[0].state == CandidateState::Accepted);
        CHECK_FALSE(g1->candidates[0].scores.back_score.has_value());  // the v4 columns, empty for old rows
        CHECK(g1->candidates[0].route.empty());                        // the v6 column, NULL for old rows
        CHECK(g1->dropped.empty());
        auto g2 = store.get(2);
        CHECK(g2->candidates[0].state == CandidateState::Edited);
        CHECK(g2->candidates[0].final_text == "直した候補");
        // v2 features work on migrated data: origin filter, model index, events continue.
        auto r = sample_record("new", {"n"});
        r.origin = "batch:x#1";
        const GenerationId id = store.record(r);
        CHECK(id == 3);
        CHECK(store.find_by_origin("batch:x#1").value() == id);
        CHECK(store.undo(2) > 0);
        CHECK(store.get(2)->candidates[0].state == CandidateState::None);
        HistoryFilter f;
        f.text = "古い";
        CHECK(store.count(f) == 1);
        // v3: training runs work on a migrated file.
        TrainingRunRecord run;
        run.model = "m";
        const int64_t rid = store.begin_training_run(run);
        store.add_training_points(rid, {{1, 0.5, 2.0}});
        CHECK(store.training_run(rid)->points.size() == 1);
        CHECK(store.integrity_check() == "ok");
    }
    CHECK(query_text(path, "PRAGMA user_version") == std::to_string(HistoryStore::kSchemaVersion));
    CHECK(query_text(path, "PRAGMA journal_mode") == "wal");
    CHECK(query_text(path, "SELECT name FROM sqlite_master WHERE name = 'candidates_decided'") == "candidates_decided");
    CHECK(query_text(path, "SELECT name FROM sqlite_master WHERE name = 'generations_by_origin'") == "generations_by_origin");
    // Reopening a current file migrates nothing and keeps working.
    HistoryStore again(path);
    CHECK(again.count() == 3);
}

TEST_CASE("a fresh file is created at the current version with WAL", "[history][migration]") {
    TempDir dir;
    const std::string path = dir.file("new.sqlite");
    { HistoryStore store(path); }
    CHECK(query_text(path, "PRAGMA user_version") == std::to_string(HistoryStore::kSchemaVersion));
    CHECK(query_text(path, "PRAGMA application_id") == "1412780872");
    CHECK(query_text(path, "PRAGMA journal_mode") == "wal");
    CHECK(query_text(path, "PRAGMA integrity_check") == "ok");
}

namespace {

// A file written before a score existed: dropped_candidates as v6 made it, less the column fluency.
const char* kDroppedWithoutFluency = R"sql(
CREATE TABLE old_dropped (
  generation_id INTEGER NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  text          TEXT    NOT NULL,
  score         REAL    NOT NULL,
  reason        TEXT    NOT NULL,
  similarity    REAL,
  back_score    REAL,
  change        REAL,
  route         TEXT,
  PRIMARY KEY (generation_id, position)
) WITHOUT ROWID;
INSERT INTO old_dropped SELECT generation_id, position, text, score, reason, similarity, back_score, change, route
  FROM dropped_candidates;
DROP TABLE dropped_candidates;
ALTER TABLE old_dropped RENAME TO dropped_candidates;
)sql";

GenerationRecord record_with_dropped(const std::string& input, double change, double fluency) {
    GenerationRecord r = sample_record(input, {"kept"});
    r.candidates[0].scores.change = 0.25;
    CandidateRecord dropped{input, -0.5};
    dropped.scores.change = change;
    dropped.scores.fluency = fluency;
    r.dropped.push_back({dropped, {DropReason::Copy}});
    return r;
}

}  // namespace

TEST_CASE("a score column a table lacks is added at open; the columns it has are left alone", "[history][migration]") {
    TempDir dir;
    const std::string path = dir.file("old-scores.sqlite");
    GenerationId old_id = 0;
    {
        HistoryStore store(path);
        old_id = store.record(record_with_dropped("old input", 0.5, -1.0));
    }
    exec_sql(path, kDroppedWithoutFluency);
    const char* has_fluency = "SELECT count(*) FROM pragma_table_info('dropped_candidates') WHERE name = 'fluency'";
    const char* candidates_sql = "SELECT sql FROM sqlite_master WHERE name = 'candidates'";
    REQUIRE(query_text(path, has_fluency) == "0");
    const std::string candidates_before = query_text(path, candidates_sql);
    {
        HistoryStore store(path);
        const auto old = store.get(old_id);
        REQUIRE(old);
        REQUIRE(old->dropped.size() == 1);
        CHECK(old->dropped[0].candidate.scores.change == Approx(0.5));      // the columns it had keep their values
        CHECK_FALSE(old->dropped[0].candidate.scores.fluency.has_value());  // the added one: not computed
        CHECK(old->candidates[0].scores.change == Approx(0.25));
        const GenerationId new_id = store.record(record_with_dropped("new input", 0.75, -2.0));
        CHECK(store.get(new_id)->dropped[0].candidate.scores.fluency == Approx(-2.0));
        CHECK(store.integrity_check() == "ok");
    }
    CHECK(query_text(path, has_fluency) == "1");
    CHECK(query_text(path, candidates_sql) == candidates_before);  // a table with every score column is not altered
    // A file with every column is not changed by opening it.
    const char* schema_sql = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)";
    const std::string schema = query_text(path, schema_sql);
    { HistoryStore again(path); }
    CHECK(query_text(path, schema_sql) == schema);
}

TEST_CASE("a file from a newer T5 Studio is Unsupported and untouched", "[history][migration]") {
    TempDir dir;
    const std::string path = dir.file("future.sqlite");
    exec_sql(path, kV1Schema);
    exec_sql(path, "PRAGMA user_version = 99");
    expect_open_error(path, ErrorCode::Unsupported);
}

TEST_CASE("an unrelated SQLite file is refused, not converted", "[history][migration]") {
    TempDir dir;
    const std::string path = dir.file("other.sqlite");
    exec_sql(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine');");
    expect_open_error(path, ErrorCode::CorruptFile);
    CHECK(query_text(path, "PRAGMA journal_mode") == "delete");  // not switched to WAL
    CHECK(query_text(path, "SELECT body FROM notes") == "mine");
}

TEST_CASE("random bytes are CorruptFile naming the file, never a crash", "[history][corrupt]") {
    TempDir dir;
    const std::string path = dir.file("random.sqlite");
    std::string bytes;
    uint32_t x = 12345;
    for (int i = 0; i < 64 * 1024; ++i) {
        x = x * 1103515245u + 12345u;
        bytes.push_back(static_cast<char>(x >> 24));
    }
    write_file(path, bytes);
    expect_open_error(path, ErrorCode::CorruptFile);
    write_file(path, "hello, I am a text file\n");
    expect_open_error(path, ErrorCode::CorruptFile);
}

TEST_CASE("a truncated history is CorruptFile at open, never a crash", "[history][corrupt]") {
    TempDir dir;
    const std::string good = dir.file("good.sqlite");
    {
        HistoryStore store(good);
        std::vector<GenerationRecord> batch;
        for (int i = 0; i < 2000; ++i)
            batch.push_back(sample_record("input number " + std::to_string(i) + " with some padding text",
                                          {"candidate one for " + std::to_string(i), "candidate two"}));
        store.record_many(batch);
    }  // closing checkpoints the WAL into the main file
    REQUIRE_FALSE(t5s::test::file_exists(good + "-wal"));
    const std::string full = read_file(good);
    REQUIRE(full.size() > 64 * 1024);
    for (size_t keep : {size_t{50}, size_t{4096}, full.size() / 2, full.size() - 4096}) {
        DYNAMIC_SECTION("truncated to " << keep << " bytes") {
            const std::string path = dir.file("trunc.sqlite");
            write_file(path, full.substr(0, keep));
            expect_open_error(path, ErrorCode::CorruptFile);  // at open, before any read
        }
    }
}

TEST_CASE("a truncated history with a WAL beside it fails at the first damaged read", "[history][corrupt]") {
    // With a WAL present, pages may live only there, so the open-time size check is skipped and
    // damage surfaces at the first read instead: still a CorruptFile naming the file.
    TempDir dir;
    const std::string good = dir.file("good.sqlite");
    {
        HistoryStore store(good);
        std::vector<GenerationRecord> batch;
        for (int i = 0; i < 2000; ++i) batch.push_back(sample_record("input " + std::to_string(i), {"c " + std::to_string(i)}));
        store.record_many(batch);
    }
    const std::string full = read_file(good);
    const std::string path = dir.file("trunc-wal.sqlite");
    write_file(path, full.substr(0, full.size() / 2));
    write_file(path + "-wal", std::string(32, '\0'));
    bool reported = false;
    try {
        HistoryStore store(path);
        HistoryQuery q;
        q.limit = 10000;
        for (;;) {
            auto page = store.list(q);
            if (!page.has_more) break;
            q.after_id = page.next_after_id;
        }
        reported = store.integrity_check() != "ok";
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::CorruptFile);
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        reported = true;
    }
    CHECK(reported);
}
