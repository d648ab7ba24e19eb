// HistoryStore::provenance: how the generations matching a filter were made (models, settings,
// seeds, drop reasons), read in one snapshot for a dataset card.
#include "history/query_filter.h"
#include "history/sqlite_db.h"
#include "t5s/history_store.h"

namespace t5s {

using history::ReadTransaction;
using history::Stmt;

namespace {

// Rows of (value, count) from `select` (two columns), most frequent first.
std::vector<HistoryProvenance::Count> counts(history::Db& db, const std::string& select, const history::Where& w) {
    Stmt s(db, select.c_str());
    w.apply(s);
    std::vector<HistoryProvenance::Count> out;
    while (s.step()) out.push_back({s.text(0), s.int64(1)});
    return out;
}

}  // namespace

HistoryProvenance HistoryStore::provenance(const HistoryFilter& filter) {
    require_undamaged(/*wait=*/true);
    const history::Where w = history::build_where(filter);
    const std::string where = w.sql.empty() ? std::string(" WHERE 1") : w.sql;
    ReadTransaction rt(db());
    HistoryProvenance p;
    {
        Stmt s(db(), ("SELECT count(*) FROM generations g" + where).c_str());
        w.apply(s);
        p.generations = s.step() ? s.int64(0) : 0;
    }
    {
        Stmt s(db(), ("SELECT count(*) FROM generations g JOIN candidates c ON c.generation_id = g.id" + where).c_str());
        w.apply(s);
        p.candidates = s.step() ? s.int64(0) : 0;
    }
    p.models = counts(db(),
                      "SELECT g.model_path || CASE WHEN g.model_hash = '' THEN '' ELSE ' (' || g.model_hash || ')' END, "
                      "count(*) FROM generations g" +
                          where + " GROUP BY 1 ORDER BY 2 DESC, 1",
                      w);
    // The seed and the recipe have their own lists and the spans are per input: none is a setting
    // shared by generations.
    p.settings =
        counts(db(),
               "SELECT CASE WHEN json_valid(g.settings_json) THEN json_remove(g.settings_json, '$.spans', '$.seed', '$.recipe') "
               "ELSE g.settings_json END, count(*) FROM generations g" +
                   where + " GROUP BY 1 ORDER BY 2 DESC, 1",
               w);
    {
        Stmt s(db(), ("SELECT DISTINCT g.seed FROM generations g" + where + " ORDER BY 1").c_str());
        w.apply(s);
        while (s.step()) p.seeds.push_back(s.int64(0));
    }
    p.recipes =
        counts(db(),
               "SELECT json_extract(g.settings_json, '$.recipe.file') || ' (sha256:' || "
               "coalesce(json_extract(g.settings_json, '$.recipe.sha256'), '?') || ')', count(*) FROM generations g" +
                   where +
                   " AND CASE WHEN json_valid(g.settings_json) THEN json_type(g.settings_json, '$.recipe.file') END = 'text'"
                   " GROUP BY 1 ORDER BY 2 DESC, 1",
               w);
    p.dropped = counts(db(),
                       "SELECT dc.reason, count(*) FROM generations g JOIN dropped_candidates dc ON dc.generation_id = g.id" +
                           where + " GROUP BY 1 ORDER BY 2 DESC, 1",
                       w);
    return p;
}

}  // namespace t5s
