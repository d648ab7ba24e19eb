#include "history/schema.h"

#include <set>
#include <string>

#include "history/sqlite_db.h"
#include "t5s/error.h"
#include "t5s/score_names.h"

namespace t5s::history {

namespace {

// v1: generations, their candidates (with the state derived from events cached on the row) and the
// decision events. Times are unix milliseconds (UTC).
const char* kV1 = R"sql(
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
  state         INTEGER NOT NULL DEFAULT 0,  -- derived from events: 0 none, 1 accepted, 2 rejected, 3 edited
  edited_text   TEXT,                        -- the edited text while state = 3
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
)sql";

// v2: where an input came from (batch jobs resume by skipping rows whose origin is recorded), and
// the indexes that keep filters fast at 100k+ rows.
const char* kV2 = R"sql(
ALTER TABLE generations ADD COLUMN origin TEXT NOT NULL DEFAULT '';
CREATE INDEX generations_by_origin  ON generations (origin, id);
CREATE INDEX generations_by_created ON generations (created_at, id);
CREATE INDEX generations_by_model   ON generations (model_path, id);
CREATE INDEX generations_by_hash    ON generations (model_hash, id);
CREATE INDEX candidates_decided     ON candidates (generation_id, rank) WHERE state IN (1, 3);
)sql";

// v3: fine-tuning runs and their curves (one row per optimizer step that has a loss or an eval).
const char* kV3 = R"sql(
CREATE TABLE training_runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  status       TEXT    NOT NULL DEFAULT 'running',
  model        TEXT    NOT NULL DEFAULT '',
  data         TEXT    NOT NULL DEFAULT '',
  out_dir      TEXT    NOT NULL DEFAULT '',
  options_json TEXT    NOT NULL DEFAULT '{}',
  steps        INTEGER NOT NULL DEFAULT 0,
  total_steps  INTEGER NOT NULL DEFAULT 0,
  last_loss    REAL    NOT NULL DEFAULT -1,
  best_eval    REAL    NOT NULL DEFAULT -1,
  final_dir    TEXT    NOT NULL DEFAULT '',
  message      TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE training_points (
  run_id       INTEGER NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
  step         INTEGER NOT NULL,
  elapsed_s    REAL    NOT NULL DEFAULT 0,
  loss         REAL,
  eval_loss    REAL,
  lr           REAL    NOT NULL DEFAULT 0,
  tokens_per_s REAL    NOT NULL DEFAULT 0,
  memory_bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
)sql";

// v4: quality scores of every candidate (NULL where not computed, e.g. rows written before v4) and
// the candidates the quality filters dropped, with their reason. Frozen as v4 shipped: a score added
// since gets its columns from add_missing_score_columns, not from a migration.
const char* kV4 = R"sql(
ALTER TABLE candidates ADD COLUMN similarity REAL;
ALTER TABLE candidates ADD COLUMN back_score REAL;
ALTER TABLE candidates ADD COLUMN change REAL;
ALTER TABLE candidates ADD COLUMN fluency REAL;
CREATE TABLE dropped_candidates (
  generation_id INTEGER NOT NULL REFERENCES generations(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  text          TEXT    NOT NULL,
  score         REAL    NOT NULL,
  reason        TEXT    NOT NULL,
  similarity    REAL,
  back_score    REAL,
  change        REAL,
  fluency       REAL,
  PRIMARY KEY (generation_id, position)
) WITHOUT ROWID;
)sql";

// v5: the label of the input row a generation came from, as JSON text ('' = none), so an
// export writes labelled rows back with their label.
const char* kV5 = R"sql(
ALTER TABLE generations ADD COLUMN label_json TEXT NOT NULL DEFAULT '';
)sql";

// v6: a recipe candidate's route (t5s/route.h) as JSON text, kept and dropped alike; NULL for
// plain generations and for rows written before v6.
const char* kV6 = R"sql(
ALTER TABLE candidates ADD COLUMN route TEXT;
ALTER TABLE dropped_candidates ADD COLUMN route TEXT;
)sql";

const char* const kMigrations[] = {kV1, kV2, kV3, kV4, kV5, kV6};  // kMigrations[v] takes version v to v + 1
constexpr int kLatest = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));

// The tables with a column per score (t5s/score_names.h), and the version that made them.
const char* const kScoredTables[] = {"candidates", "dropped_candidates"};
constexpr int kScoresVersion = 4;

std::set<std::string> column_names(Db& db, const char* table) {
    std::set<std::string> names;
    Stmt info(db, (std::string("PRAGMA table_info(") + table + ")").c_str());
    while (info.step()) names.insert(info.text(1));
    return names;
}

// Adds a REAL column for each score a scored table lacks, at its end: a score added to
// score_names.h needs no migration, and its old rows read NULL (not computed). The columns that
// exist are left as they are, so a file that has them all is not written to.
void add_missing_score_columns(Db& db) {
    for (const char* table : kScoredTables) {
        const std::set<std::string> columns = column_names(db, table);
        if (columns.empty()) continue;  // no such table: a damaged file, reported where it is read
        for (const char* name : score_names())
            if (!columns.count(name)) db.exec((std::string("ALTER TABLE ") + table + " ADD COLUMN " + name + " REAL").c_str());
    }
}

}  // namespace

int migrate(Db& db, int target_version) {
    if (target_version < 1 || target_version > kLatest)
        throw Error(ErrorCode::Internal, "history schema version " + std::to_string(target_version) + " is unknown");
    // Reading these touches the header and the schema page: random bytes fail here (NOTADB).
    Transaction tx(db);
    const int found = static_cast<int>(db.query_int("PRAGMA user_version"));
    const int64_t app_id = db.query_int("PRAGMA application_id");
    const int64_t objects = db.query_int("SELECT count(*) FROM sqlite_master");
    if (found > target_version)
        throw Error(ErrorCode::Unsupported, "history database " + db.path() + " has schema version " + std::to_string(found) +
                                                ", newer than this T5 Studio supports (" + std::to_string(target_version) + ")");
    if ((app_id != 0 && app_id != kApplicationId) || (found == 0 && objects > 0) || (found > 0 && objects == 0))
        throw Error(ErrorCode::CorruptFile,
                    "history database " + db.path() + " is not a T5 Studio history (an unrelated SQLite file)");
    if (found > 0) {
        // Every version we wrote has these tables; a file without them is damaged.
        const int64_t tables = db.query_int(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('generations', 'candidates', 'events')");
        if (tables != 3)
            throw Error(ErrorCode::CorruptFile, "history database " + db.path() + " is missing its tables (damaged file)");
    }
    for (int v = found; v < target_version; ++v) db.exec(kMigrations[v]);
    if (target_version >= kScoresVersion) add_missing_score_columns(db);
    if (found != target_version) {
        db.exec(("PRAGMA user_version = " + std::to_string(target_version)).c_str());
        db.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
    }
    tx.commit();
    return found;
}

}  // namespace t5s::history
