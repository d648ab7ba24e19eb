#pragma once
// The quality scores of candidates (columns of `candidates`) and the dropped candidates (table
// `dropped_candidates`, schema v4) in the history store, and their routes (schema v6).
#include "history/sqlite_db.h"
#include "t5s/history_store.h"

namespace t5s::history {

// The scores (t5s/score_names.h) in their listing order, the order of score_list()'s columns:
// score_parameters gives their SQL parameters "?first, ?first+1, ...", bind_scores binds them
// there (NULL when empty), read_scores reads them from the columns first, first + 1, ...
std::string score_parameters(int first);
void bind_scores(Stmt& stmt, int first, const CandidateScores& scores);
CandidateScores read_scores(const Stmt& stmt, int first);

// A route as the column `route` (schema v6): NULL when empty, else route_json_text.
void bind_route(Stmt& stmt, int index, const Route& route);
// Reads it back; a damaged value is Error(CorruptFile) naming the file, the generation and the
// candidate (`what` and its position).
Route read_route(const Stmt& stmt, int column, const Db& db, GenerationId id, int64_t position, const char* what = "candidate");

void insert_dropped(Db& db, GenerationId id, const std::vector<DroppedRecord>& dropped);
std::vector<DroppedRecord> load_dropped(Db& db, GenerationId id);

}  // namespace t5s::history
