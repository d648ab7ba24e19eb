#pragma once
// The history schema and its migrations. Schema version = PRAGMA user_version; a fresh file runs
// every migration from 0, so the upgrade path is exercised on every new database.
namespace t5s::history {

class Db;

constexpr int kApplicationId = 0x54355348;  // 'T5SH' in PRAGMA application_id

// Checks that `db` is empty or a T5 Studio history no newer than `target_version`, then migrates it
// to `target_version` in one transaction, adding the column of any score (t5s/score_names.h) its
// scored tables lack. Throws CorruptFile / Unsupported naming the file.
// Returns the version found before migrating (0 for a new file).
int migrate(Db& db, int target_version);

}  // namespace t5s::history
