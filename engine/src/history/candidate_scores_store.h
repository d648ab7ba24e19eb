#pragma once
// The quality scores of candidates (columns of `candidates`) and the dropped candidates (table
// `dropped_candidates`, schema v4) in the history store.
#include "history/sqlite_db.h"
#include "t5s/history_store.h"

namespace t5s::history {

// Binds similarity, back_score, change, fluency to parameters first .. first + 3 (NULL when empty).
void bind_scores(Stmt& stmt, int first, const CandidateScores& scores);
// Reads them from columns first .. first + 3.
CandidateScores read_scores(const Stmt& stmt, int first);

void insert_dropped(Db& db, GenerationId id, const std::vector<DroppedRecord>& dropped);
std::vector<DroppedRecord> load_dropped(Db& db, GenerationId id);

}  // namespace t5s::history
