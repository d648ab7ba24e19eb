#include "history/candidate_scores_store.h"

#include "t5s/error.h"
#include "t5s/score_names.h"

namespace t5s {

GenerationRecord generation_record_of(const GenerationResult& result) {
    GenerationRecord rec;
    rec.input = result.input;
    auto record_of = [](const Candidate& c) { return CandidateRecord{c.text, c.score, c.scores, c.route}; };
    for (const auto& c : result.candidates) rec.candidates.push_back(record_of(c));
    for (const auto& d : result.dropped) rec.dropped.push_back({record_of(d.candidate), d.reason});
    rec.seed = result.seed;
    return rec;
}

namespace history {

std::string score_parameters(int first) {
    std::string list;
    for (size_t k = 0; k < score_names().size(); ++k)
        list += (k == 0 ? "?" : ", ?") + std::to_string(first + static_cast<int>(k));
    return list;
}

void bind_scores(Stmt& stmt, int first, const CandidateScores& scores) {
    int k = first;
    for_each_score(scores, [&](const char*, const std::optional<double>& value) {
        if (value) stmt.bind(k, *value);
        else stmt.bind_null(k);
        ++k;
    });
}

CandidateScores read_scores(const Stmt& stmt, int first) {
    CandidateScores scores;
    int k = first;
    for_each_score(scores, [&](const char*, std::optional<double>& value) {
        if (!stmt.is_null(k)) value = stmt.real(k);
        ++k;
    });
    return scores;
}

void bind_route(Stmt& stmt, int index, const Route& route) {
    if (route.empty()) stmt.bind_null(index);
    else stmt.bind(index, route_json_text(route));
}

Route read_route(const Stmt& stmt, int column, const Db& db, GenerationId id, int64_t position, const char* what) {
    if (stmt.is_null(column)) return {};
    return route_of_json_text(stmt.text(column), "history database " + db.path() + " is damaged: generation " +
                                                     std::to_string(id) + " " + what + " " + std::to_string(position));
}

void insert_dropped(Db& db, GenerationId id, const std::vector<DroppedRecord>& dropped) {
    if (dropped.empty()) return;
    static const std::string sql = "INSERT INTO dropped_candidates (generation_id, position, text, score, reason, route, " +
                                   score_list() + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, " + score_parameters(7) + ")";
    Stmt ins(db, sql.c_str());
    for (size_t i = 0; i < dropped.size(); ++i) {
        ins.reset();
        const DroppedRecord& d = dropped[i];
        ins.bind(1, id)
            .bind(2, static_cast<int64_t>(i))
            .bind(3, d.candidate.text)
            .bind(4, d.candidate.score)
            .bind(5, to_string(d.reason));
        bind_route(ins, 6, d.candidate.route);
        bind_scores(ins, 7, d.candidate.scores);
        ins.run();
    }
}

std::vector<DroppedRecord> load_dropped(Db& db, GenerationId id) {
    static const std::string sql = "SELECT text, score, reason, route, position, " + score_list() +
                                   " FROM dropped_candidates WHERE generation_id = ?1 ORDER BY position";
    Stmt s(db, sql.c_str());
    s.bind(1, id);
    std::vector<DroppedRecord> out;
    while (s.step()) {
        // Every version wrote the printed reason (t5s/drop_reason.h), so anything else is damage.
        const std::string text = s.text(2);
        const std::optional<DropCause> reason = try_parse_drop_cause(text);
        if (!reason)
            throw Error(ErrorCode::CorruptFile, "history database " + db.path() + " is damaged: generation " +
                                                    std::to_string(id) + " has a dropped candidate whose reason is '" + text +
                                                    "'");
        out.push_back(
            {CandidateRecord{s.text(0), s.real(1), read_scores(s, 5), read_route(s, 3, db, id, s.int64(4), "dropped candidate")},
             *reason});
    }
    return out;
}

}  // namespace history
}  // namespace t5s
