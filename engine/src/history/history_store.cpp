#include "t5s/history_store.h"

// The store: opening (checks, migration, WAL, planner statistics), recording, decisions and reads.
// Export lives in history_export.cpp, training runs in training_runs.cpp.
#include <sys/stat.h>

#include <memory>

#include "history/candidate_scores_store.h"
#include "history/codes.h"
#include "history/decisions.h"
#include "history/open_check.h"
#include "history/query_filter.h"
#include "history/schema.h"
#include "history/sqlite_db.h"
#include "t5s/error.h"
#include "t5s/settings_fields.h"
#include "t5s/utc_time.h"

namespace t5s {

using history::build_where;
using history::Db;
using history::kGenerationColumns;
using history::read_generation;
using history::ReadTransaction;
using history::state_from_int;
using history::state_to_int;
using history::Stmt;
using history::Transaction;
using history::Where;

namespace {
// Unknown text reads as Redo (the schema's CHECK forbids it).
EventKind parse_event_kind(const std::string& text) { return try_parse_enum<EventKind>(text).value_or(EventKind::Redo); }
}  // namespace

struct HistoryStore::Impl {
    Db db;
    HistoryStoreOptions options;
    std::unique_ptr<history::OpenCheck> check;  // destroyed before db (declared after it)
    int version = 0;

    Impl(const std::string& path, HistoryStoreOptions opts)
        : db(path, SQLITE_OPEN_READWRITE | (opts.create_if_missing ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX),
          options(std::move(opts)) {
        sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);
        db.exec("PRAGMA foreign_keys = ON");
        // Damage is looked for before anything is written: a damaged file is never migrated.
        try {
            check_not_truncated(path);
            check = std::make_unique<history::OpenCheck>(db, options.foreground_check_max_bytes);
            history::migrate(db, kSchemaVersion);  // refuses unrelated or newer files before changing them
        } catch (const Error& e) {
            rethrow_as_damaged(e, path);
        }
        if (path != ":memory:" && !path.empty()) {
            const std::string mode = db.query_text("PRAGMA journal_mode = WAL");
            if (mode != "wal")
                throw Error(ErrorCode::Internal,
                            "history database " + path + ": cannot enable WAL (journal mode is " + mode + ")");
        }
        db.exec(options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
        version = static_cast<int>(db.query_int("PRAGMA user_version"));
        db.exec("PRAGMA analysis_limit = 1000");
        const int64_t rows = db.query_int("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'generations'");
        int64_t analyzed = -1;
        if (db.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'") > 0)
            analyzed =
                db.query_int("SELECT coalesce(max(CAST(stat AS INTEGER)), -1) FROM sqlite_stat1 WHERE tbl = 'generations'");
        analyzed_rows = analyzed;
        // Sampled estimates are rough: re-analyze only when the table changed size by 4x or more.
        if (rows >= 1000 && (analyzed < 0 || rows > 4 * analyzed || 4 * rows < analyzed)) analyze(rows);
    }

    ~Impl() {
        try {
            db.exec("PRAGMA optimize");
        } catch (...) {  // best effort on close (e.g. a read-only or corrupt file)
        }
    }

    // Query-planner statistics (sampled: a few ms at any size). Without them SQLite may pick the
    // model index over the date range and sort half the table.
    int64_t analyzed_rows = -1;
    int64_t inserted_since_analyze = 0;

    void analyze(int64_t rows) {
        db.exec("ANALYZE");
        analyzed_rows = rows;
        inserted_since_analyze = 0;
    }

    // Called after a committed insert: never throws (the rows are saved whatever happens here).
    void after_insert(int64_t n) noexcept {
        inserted_since_analyze += n;
        if (inserted_since_analyze < 1000 || inserted_since_analyze <= analyzed_rows) return;
        try {
            analyze(db.query_int("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'generations'"));
        } catch (...) {
            inserted_since_analyze = 0;  // e.g. another writer holds the lock: try again later
        }
    }

    // SQLite's "malformed" on a file whose header names it a T5 Studio history (e.g. its schema page
    // overwritten): the file is damaged, not unrelated; said so, as the quick check would.
    [[noreturn]] void rethrow_as_damaged(const Error& e, const std::string& path) {
        const std::string message = e.what();
        int64_t app_id = 0;
        try {
            app_id = db.query_int("PRAGMA application_id");  // the header only
        } catch (const Error&) {
        }
        if (e.code() != ErrorCode::CorruptFile || app_id != history::kApplicationId ||
            message.find(" is damaged") != std::string::npos)
            throw e;
        const auto cause = message.rfind(" (");
        throw Error(ErrorCode::CorruptFile,
                    "history database " + path + " is damaged" + (cause == std::string::npos ? "" : message.substr(cause)));
    }

    // A file shorter than its header's page count lost its tail (copy cut short, disk trouble).
    // Pages may legitimately live only in the WAL, so this check runs only without one.
    void check_not_truncated(const std::string& path) {
        if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return;
        struct stat st {};
        if (::stat((path + "-wal").c_str(), &st) == 0 && st.st_size > 0) return;
        if (::stat(path.c_str(), &st) != 0) return;
        const int64_t expected = db.query_int("PRAGMA page_count") * db.query_int("PRAGMA page_size");
        if (static_cast<int64_t>(st.st_size) < expected)
            throw Error(ErrorCode::CorruptFile, "history database " + path + " is truncated (" + std::to_string(st.st_size) +
                                                    " bytes, its header says " + std::to_string(expected) + ")");
    }

    int64_t now() const { return options.clock_ms ? options.clock_ms() : unix_ms_now(); }

    GenerationId insert(const GenerationRecord& r, Stmt& gen, Stmt& cand) {
        gen.reset();
        gen.bind(1, r.created_at_ms != 0 ? r.created_at_ms : now())
            .bind(2, r.input)
            .bind(3, settings_json_with_recipe(
                         settings_json_with_adapter_version(
                             settings_json_with_adapter(r.settings_json.empty() ? std::string("{}") : r.settings_json, r.adapter),
                             r.adapter_version),
                         r.recipe_json))
            .bind(4, r.seed)
            .bind(5, r.model_path)
            .bind(6, r.model_hash)
            .bind(7, r.precision)
            .bind(8, r.device)
            .bind(9, r.total_ms)
            .bind(10, r.timings_json.empty() ? std::string("{}") : r.timings_json)
            .bind(11, r.origin)
            .bind(12, r.label_json);
        gen.run();
        const GenerationId id = db.last_insert_id();
        for (size_t i = 0; i < r.candidates.size(); ++i) {
            cand.reset();
            cand.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, r.candidates[i].text).bind(4, r.candidates[i].score);
            history::bind_route(cand, 5, r.candidates[i].route);
            history::bind_scores(cand, 6, r.candidates[i].scores);
            cand.run();
        }
        history::insert_dropped(db, id, r.dropped);
        return id;
    }

    static constexpr const char* kInsertGeneration =
        "INSERT INTO generations (created_at, input, settings_json, seed, model_path, model_hash, precision, device, "
        "total_ms, timings_json, origin, label_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    // The scores last, their columns and parameters from the one list (t5s/score_names.h).
    static const char* insert_candidate_sql() {
        static const std::string sql = "INSERT INTO candidates (generation_id, rank, text, score, route, " + score_list() +
                                       ") VALUES (?1, ?2, ?3, ?4, ?5, " + history::score_parameters(6) + ")";
        return sql.c_str();
    }

    int candidate_count(GenerationId id) {
        Stmt s(db,
               "SELECT (SELECT count(*) FROM candidates WHERE generation_id = ?1), "
               "EXISTS (SELECT 1 FROM generations WHERE id = ?1)");
        s.bind(1, id);
        s.step();
        if (s.int64(1) == 0) throw Error(ErrorCode::InvalidArgument, "history: no generation with id " + std::to_string(id));
        return static_cast<int>(s.int64(0));
    }

    std::vector<history::EventRow> load_events(GenerationId id) {
        std::vector<history::EventRow> rows;
        Stmt s(db, "SELECT id, kind, candidate_rank, text FROM events WHERE generation_id = ?1 ORDER BY id");
        s.bind(1, id);
        while (s.step()) rows.push_back({s.int64(0), parse_event_kind(s.text(1)), static_cast<int>(s.int64(2)), s.text(3)});
        return rows;
    }

    // Rewrites the cached state of every candidate of `id` from its events.
    void refresh_states(GenerationId id, int count, const history::DecisionLog& log) {
        const auto states = history::derive_states(log, count);
        Stmt up(db, "UPDATE candidates SET state = ?3, edited_text = ?4 WHERE generation_id = ?1 AND rank = ?2");
        for (int i = 0; i < count; ++i) {
            up.reset();
            up.bind(1, id).bind(2, i).bind(3, state_to_int(states[static_cast<size_t>(i)].state));
            if (states[static_cast<size_t>(i)].state == CandidateState::Edited)
                up.bind(4, states[static_cast<size_t>(i)].edited_text);
            else up.bind_null(4);
            up.run();
        }
    }

    int64_t decide(GenerationId id, int index, EventKind kind, const std::string* text) {
        Transaction tx(db);
        const int count = candidate_count(id);
        if (index < 0 || index >= count)
            throw Error(ErrorCode::InvalidArgument, "history: generation " + std::to_string(id) + " has no candidate " +
                                                        std::to_string(index) + " (it has " + std::to_string(count) + ")");
        Stmt ins(db,
                 "INSERT INTO events (generation_id, kind, candidate_rank, text, target_event_id, created_at) "
                 "VALUES (?1, ?2, ?3, ?4, NULL, ?5)");
        ins.bind(1, id).bind(2, std::string(to_string(kind))).bind(3, index).bind(5, now());
        if (text) ins.bind(4, *text);
        else ins.bind_null(4);
        ins.run();
        const int64_t event_id = db.last_insert_id();
        const auto events = load_events(id);
        refresh_states(id, count, history::replay(events));
        tx.commit();
        return event_id;
    }

    int64_t undo_redo(GenerationId id, EventKind kind) {
        Transaction tx(db);
        const int count = candidate_count(id);
        const auto events = load_events(id);
        const auto log = history::replay(events);
        const auto& stack = kind == EventKind::Undo ? log.done : log.undone;
        if (stack.empty()) return 0;  // nothing to do; the transaction rolls back (nothing written)
        const history::EventRow* target = stack.back();
        Stmt ins(db,
                 "INSERT INTO events (generation_id, kind, candidate_rank, text, target_event_id, created_at) "
                 "VALUES (?1, ?2, ?3, NULL, ?4, ?5)");
        ins.bind(1, id).bind(2, std::string(to_string(kind))).bind(3, target->rank).bind(4, target->id).bind(5, now());
        ins.run();
        const int64_t event_id = db.last_insert_id();
        const auto after = load_events(id);
        refresh_states(id, count, history::replay(after));
        tx.commit();
        return event_id;
    }

    void load_candidates(StoredGeneration& g, Stmt& s) {
        s.reset();
        s.bind(1, g.id);
        while (s.step()) {
            StoredCandidate c;
            c.index = static_cast<int>(s.int64(0));
            c.text = s.text(1);
            c.score = s.real(2);
            c.state = state_from_int(s.int64(3));
            c.final_text = c.state == CandidateState::Edited ? s.text(4) : c.text;
            c.route = history::read_route(s, 5, db, g.id, c.index);
            c.scores = history::read_scores(s, 6);
            g.candidates.push_back(std::move(c));
        }
        g.dropped = history::load_dropped(db, g.id);
    }

    static const char* select_candidates_sql() {
        static const std::string sql = "SELECT rank, text, score, state, edited_text, route, " + score_list() +
                                       " FROM candidates WHERE generation_id = ?1 ORDER BY rank";
        return sql.c_str();
    }
};

HistoryStore::HistoryStore(const std::string& path, HistoryStoreOptions options)
    : impl_(std::make_unique<Impl>(path, std::move(options))) {}
HistoryStore::~HistoryStore() = default;
HistoryStore::HistoryStore(HistoryStore&&) noexcept = default;
HistoryStore& HistoryStore::operator=(HistoryStore&&) noexcept = default;

const std::string& HistoryStore::path() const { return impl_->db.path(); }
history::Db& HistoryStore::db() { return impl_->db; }
int64_t HistoryStore::now_ms() const { return impl_->now(); }
int HistoryStore::schema_version() const { return impl_->version; }
HistoryCheck HistoryStore::check() const { return impl_->check->status(); }
void HistoryStore::require_undamaged(bool wait) const { impl_->check->throw_if_corrupt(wait); }

GenerationId HistoryStore::record(const GenerationRecord& generation) {
    require_undamaged();
    Transaction tx(impl_->db);
    Stmt gen(impl_->db, Impl::kInsertGeneration);
    Stmt cand(impl_->db, Impl::insert_candidate_sql());
    const GenerationId id = impl_->insert(generation, gen, cand);
    tx.commit();
    impl_->after_insert(1);
    return id;
}

std::vector<GenerationId> HistoryStore::record_many(const std::vector<GenerationRecord>& generations) {
    require_undamaged();
    std::vector<GenerationId> ids;
    ids.reserve(generations.size());
    Transaction tx(impl_->db);
    Stmt gen(impl_->db, Impl::kInsertGeneration);
    Stmt cand(impl_->db, Impl::insert_candidate_sql());
    for (const auto& g : generations) ids.push_back(impl_->insert(g, gen, cand));
    tx.commit();
    impl_->after_insert(static_cast<int64_t>(ids.size()));
    return ids;
}

int64_t HistoryStore::accept(GenerationId id, int candidate_index) {
    require_undamaged();
    return impl_->decide(id, candidate_index, EventKind::Accept, nullptr);
}

int64_t HistoryStore::reject(GenerationId id, int candidate_index) {
    require_undamaged();
    return impl_->decide(id, candidate_index, EventKind::Reject, nullptr);
}

int64_t HistoryStore::edit(GenerationId id, int candidate_index, const std::string& text) {
    require_undamaged();
    return impl_->decide(id, candidate_index, EventKind::Edit, &text);
}

int64_t HistoryStore::undo(GenerationId id) {
    require_undamaged();
    return impl_->undo_redo(id, EventKind::Undo);
}

int64_t HistoryStore::redo(GenerationId id) {
    require_undamaged();
    return impl_->undo_redo(id, EventKind::Redo);
}

std::optional<StoredGeneration> HistoryStore::get(GenerationId id) {
    require_undamaged();
    ReadTransaction rt(impl_->db);
    Stmt s(impl_->db, (std::string("SELECT ") + kGenerationColumns + " FROM generations g WHERE g.id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    StoredGeneration g = read_generation(s);
    Stmt c(impl_->db, Impl::select_candidates_sql());
    impl_->load_candidates(g, c);
    return g;
}

std::optional<std::string> HistoryStore::input_text(GenerationId id) {
    require_undamaged();
    Stmt s(impl_->db, "SELECT input FROM generations WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return s.text(0);
}

std::vector<HistoryEvent> HistoryStore::events(GenerationId id) {
    require_undamaged();
    std::vector<HistoryEvent> out;
    Stmt s(impl_->db,
           "SELECT id, kind, candidate_rank, text, target_event_id, created_at FROM events "
           "WHERE generation_id = ?1 ORDER BY id");
    s.bind(1, id);
    while (s.step()) {
        HistoryEvent e;
        e.id = s.int64(0);
        e.generation_id = id;
        e.kind = parse_event_kind(s.text(1));
        e.candidate_index = static_cast<int>(s.int64(2));
        e.text = s.text(3);
        e.target_event_id = s.is_null(4) ? 0 : s.int64(4);
        e.created_at_ms = s.int64(5);
        out.push_back(std::move(e));
    }
    return out;
}

HistoryPage HistoryStore::list(const HistoryQuery& query) {
    require_undamaged();
    if (!settings_in_range(kHistoryPageRange, query.limit))
        throw Error(ErrorCode::InvalidArgument, range_message("history: page size", kHistoryPageRange, query.limit));
    Where w = build_where(query.filter);
    if (query.after_id > 0) {
        w.add("g.id < ?" + std::to_string(w.binders.size() + 1));
        w.bind_int(query.after_id);
    }
    const std::string sql = std::string("SELECT ") + kGenerationColumns + " FROM generations g" + w.sql +
                            " ORDER BY g.id DESC LIMIT ?" + std::to_string(w.binders.size() + 1);
    ReadTransaction rt(impl_->db);
    Stmt s(impl_->db, sql.c_str());
    const int next = w.apply(s);
    s.bind(next, static_cast<int64_t>(query.limit) + 1);
    HistoryPage page;
    while (s.step()) {
        if (static_cast<int>(page.generations.size()) == query.limit) {
            page.has_more = true;
            break;
        }
        page.generations.push_back(read_generation(s));
    }
    if (page.has_more) page.next_after_id = page.generations.back().id;
    if (query.with_candidates) {
        Stmt c(impl_->db, Impl::select_candidates_sql());
        for (auto& g : page.generations) impl_->load_candidates(g, c);
    }
    return page;
}

int64_t HistoryStore::count(const HistoryFilter& filter) {
    require_undamaged();
    Where w = build_where(filter);
    Stmt s(impl_->db, ("SELECT count(*) FROM generations g" + w.sql).c_str());
    w.apply(s);
    return s.step() ? s.int64(0) : 0;
}

std::optional<GenerationId> HistoryStore::find_by_origin(const std::string& origin) {
    require_undamaged();
    Stmt s(impl_->db, "SELECT id FROM generations WHERE origin = ?1 ORDER BY id DESC LIMIT 1");
    s.bind(1, origin);
    if (!s.step()) return std::nullopt;
    return s.int64(0);
}

bool HistoryStore::remove(GenerationId id) {
    require_undamaged();
    Transaction tx(impl_->db);
    Stmt s(impl_->db, "DELETE FROM generations WHERE id = ?1");
    s.bind(1, id);
    s.run();
    const bool removed = impl_->db.changes() > 0;
    tx.commit();
    return removed;
}

std::string HistoryStore::integrity_check() {
    Stmt s(impl_->db, "PRAGMA integrity_check");
    std::string first = s.step() ? s.text(0) : std::string("no result");
    return first;
}

}  // namespace t5s
