#include "t5s/history_store.h"

#include <algorithm>
#include <chrono>
#include <sys/stat.h>
#include <functional>
#include <string_view>
#include <unordered_set>

#include "atomic_file.h"
#include "history/decisions.h"
#include "history/export_format.h"
#include "history/schema.h"
#include "history/sqlite_db.h"
#include "t5s/error.h"

namespace t5s {

using history::Db;
using history::ReadTransaction;
using history::Stmt;
using history::Transaction;

const char* to_string(CandidateState state) {
    switch (state) {
        case CandidateState::None: return "none";
        case CandidateState::Accepted: return "accepted";
        case CandidateState::Rejected: return "rejected";
        case CandidateState::Edited: return "edited";
    }
    return "none";
}

const char* to_string(EventKind kind) {
    switch (kind) {
        case EventKind::Accept: return "accept";
        case EventKind::Reject: return "reject";
        case EventKind::Edit: return "edit";
        case EventKind::Undo: return "undo";
        case EventKind::Redo: return "redo";
    }
    return "accept";
}

const char* to_string(ExportFormat format) {
    switch (format) {
        case ExportFormat::Jsonl: return "jsonl";
        case ExportFormat::Csv: return "csv";
        case ExportFormat::Tsv: return "tsv";
    }
    return "jsonl";
}

ExportFormat parse_export_format(const std::string& name) {
    if (name == "jsonl") return ExportFormat::Jsonl;
    if (name == "csv") return ExportFormat::Csv;
    if (name == "tsv") return ExportFormat::Tsv;
    throw Error(ErrorCode::InvalidArgument, "export format '" + name + "' is not one of jsonl, csv, tsv");
}

namespace {

EventKind parse_event_kind(const std::string& s) {
    if (s == "accept") return EventKind::Accept;
    if (s == "reject") return EventKind::Reject;
    if (s == "edit") return EventKind::Edit;
    if (s == "undo") return EventKind::Undo;
    return EventKind::Redo;
}

CandidateState state_from_int(int64_t v) {
    switch (v) {
        case 1: return CandidateState::Accepted;
        case 2: return CandidateState::Rejected;
        case 3: return CandidateState::Edited;
        default: return CandidateState::None;
    }
}

int state_to_int(CandidateState s) {
    switch (s) {
        case CandidateState::Accepted: return 1;
        case CandidateState::Rejected: return 2;
        case CandidateState::Edited: return 3;
        case CandidateState::None: return 0;
    }
    return 0;
}

// LIKE pattern for a substring, with %, _ and the escape character taken literally.
std::string like_pattern(const std::string& text) {
    std::string out = "%";
    for (char c : text) {
        if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    out.push_back('%');
    return out;
}

// WHERE clause over `generations g` for a filter, with its parameters bound in order.
struct Where {
    std::string sql;
    std::vector<std::function<void(Stmt&, int)>> binders;

    void add(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
    void bind_text(std::string value) {
        binders.push_back([v = std::move(value)](Stmt& s, int i) { s.bind(i, v); });
    }
    void bind_int(int64_t value) {
        binders.push_back([value](Stmt& s, int i) { s.bind(i, value); });
    }
    int apply(Stmt& stmt) const {  // returns the next free parameter index
        int i = 1;
        for (const auto& b : binders) b(stmt, i++);
        return i;
    }
};

Where build_where(const HistoryFilter& f) {
    Where w;
    if (!f.text.empty()) {
        const bool has_ascii_letter =
            std::any_of(f.text.begin(), f.text.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); });
        if (has_ascii_letter) {  // LIKE: ASCII case-insensitive, byte-exact for everything else
            w.add(
                "(g.input LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM candidates c WHERE c.generation_id = g.id AND "
                "(c.text LIKE ?1 ESCAPE '\\' OR c.edited_text LIKE ?1 ESCAPE '\\')))");
            w.bind_text(like_pattern(f.text));
        } else {  // no case to fold (CJK, digits, punctuation): instr() is a plain byte search, ~2x faster
            w.add(
                "(instr(g.input, ?1) > 0 OR EXISTS (SELECT 1 FROM candidates c WHERE c.generation_id = g.id AND "
                "(instr(c.text, ?1) > 0 OR instr(c.edited_text, ?1) > 0)))");
            w.bind_text(f.text);
        }
    }
    // From here on, numbered parameters follow the first one (?1 is reused above).
    auto next = [&w]() { return "?" + std::to_string(w.binders.size() + 1); };
    if (f.accepted_only)
        w.add("EXISTS (SELECT 1 FROM candidates d WHERE d.generation_id = g.id AND d.state IN (1, 3))");
    if (!f.model.empty()) {
        const std::string p = next();
        w.add("(g.model_path = " + p + " OR g.model_hash = " + p + ")");
        w.bind_text(f.model);
    }
    if (f.from_ms != 0) {
        w.add("g.created_at >= " + next());
        w.bind_int(f.from_ms);
    }
    if (f.to_ms != 0) {
        w.add("g.created_at < " + next());
        w.bind_int(f.to_ms);
    }
    if (!f.origin_prefix.empty()) {
        const std::string p = next();
        w.add("substr(g.origin, 1, length(" + p + ")) = " + p);
        w.bind_text(f.origin_prefix);
    }
    return w;
}

const char* kGenerationColumns =
    "g.id, g.created_at, g.input, g.settings_json, g.seed, g.model_path, g.model_hash, g.precision, g.device, "
    "g.total_ms, g.timings_json, g.origin";

StoredGeneration read_generation(const Stmt& s) {
    StoredGeneration g;
    g.id = s.int64(0);
    g.created_at_ms = s.int64(1);
    g.input = s.text(2);
    g.settings_json = s.text(3);
    g.seed = s.int64(4);
    g.model_path = s.text(5);
    g.model_hash = s.text(6);
    g.precision = s.text(7);
    g.device = s.text(8);
    g.total_ms = s.real(9);
    g.timings_json = s.text(10);
    g.origin = s.text(11);
    return g;
}

// 128-bit fingerprint of a (source, target) pair for dedupe.
struct PairKey {
    uint64_t a = 0, b = 0;
    bool operator==(const PairKey& o) const { return a == o.a && b == o.b; }
};
struct PairKeyHash {
    size_t operator()(const PairKey& k) const { return static_cast<size_t>(k.a ^ (k.b * 0x9e3779b97f4a7c15ULL)); }
};

PairKey pair_key(std::string_view source, std::string_view target) {
    uint64_t fnv = 0xcbf29ce484222325ULL;
    auto mix = [&fnv](std::string_view s) {
        for (unsigned char c : s) {
            fnv ^= c;
            fnv *= 0x100000001b3ULL;
        }
    };
    mix(source);
    fnv ^= 0xff;  // separator that cannot occur inside UTF-8 text
    fnv *= 0x100000001b3ULL;
    mix(target);
    std::string joined;
    joined.reserve(source.size() + target.size() + 1);
    joined.append(source.data(), source.size()).push_back('\xff');
    joined.append(target.data(), target.size());
    return {fnv, static_cast<uint64_t>(std::hash<std::string>{}(joined))};
}

}  // namespace

struct HistoryStore::Impl {
    Db db;
    HistoryStoreOptions options;
    int version = 0;

    Impl(const std::string& path, HistoryStoreOptions opts)
        : db(path, SQLITE_OPEN_READWRITE | (opts.create_if_missing ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX),
          options(std::move(opts)) {
        sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);
        db.exec("PRAGMA foreign_keys = ON");
        history::migrate(db, kSchemaVersion);  // validates the file before anything is changed
        check_not_truncated(path);
        if (path != ":memory:" && !path.empty()) {
            const std::string mode = db.query_text("PRAGMA journal_mode = WAL");
            if (mode != "wal")
                throw Error(ErrorCode::Internal, "history database " + path + ": cannot enable WAL (journal mode is " + mode + ")");
        }
        db.exec(options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
        version = static_cast<int>(db.query_int("PRAGMA user_version"));
        db.exec("PRAGMA analysis_limit = 1000");
        const int64_t rows = db.query_int("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'generations'");
        int64_t analyzed = -1;
        if (db.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'") > 0)
            analyzed = db.query_int("SELECT coalesce(max(CAST(stat AS INTEGER)), -1) FROM sqlite_stat1 WHERE tbl = 'generations'");
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

    // A file shorter than its header's page count lost its tail (copy cut short, disk trouble).
    // Pages may legitimately live only in the WAL, so this check runs only without one.
    void check_not_truncated(const std::string& path) {
        if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return;
        struct stat st {};
        if (::stat((path + "-wal").c_str(), &st) == 0 && st.st_size > 0) return;
        if (::stat(path.c_str(), &st) != 0) return;
        const int64_t expected = db.query_int("PRAGMA page_count") * db.query_int("PRAGMA page_size");
        if (static_cast<int64_t>(st.st_size) < expected)
            throw Error(ErrorCode::CorruptFile, "history database " + path + " is truncated (" +
                                                    std::to_string(st.st_size) + " bytes, its header says " +
                                                    std::to_string(expected) + ")");
    }

    int64_t now() const {
        if (options.clock_ms) return options.clock_ms();
        using namespace std::chrono;
        return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    }

    GenerationId insert(const GenerationRecord& r, Stmt& gen, Stmt& cand) {
        gen.reset();
        gen.bind(1, r.created_at_ms != 0 ? r.created_at_ms : now())
            .bind(2, r.input)
            .bind(3, r.settings_json.empty() ? std::string("{}") : r.settings_json)
            .bind(4, r.seed)
            .bind(5, r.model_path)
            .bind(6, r.model_hash)
            .bind(7, r.precision)
            .bind(8, r.device)
            .bind(9, r.total_ms)
            .bind(10, r.timings_json.empty() ? std::string("{}") : r.timings_json)
            .bind(11, r.origin);
        gen.run();
        const GenerationId id = db.last_insert_id();
        for (size_t i = 0; i < r.candidates.size(); ++i) {
            cand.reset();
            cand.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, r.candidates[i].text).bind(4, r.candidates[i].score);
            cand.run();
        }
        return id;
    }

    static constexpr const char* kInsertGeneration =
        "INSERT INTO generations (created_at, input, settings_json, seed, model_path, model_hash, precision, device, "
        "total_ms, timings_json, origin) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    static constexpr const char* kInsertCandidate =
        "INSERT INTO candidates (generation_id, rank, text, score) VALUES (?1, ?2, ?3, ?4)";

    int candidate_count(GenerationId id) {
        Stmt s(db, "SELECT (SELECT count(*) FROM candidates WHERE generation_id = ?1), "
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
            else
                up.bind_null(4);
            up.run();
        }
    }

    int64_t decide(GenerationId id, int index, EventKind kind, const std::string* text) {
        Transaction tx(db);
        const int count = candidate_count(id);
        if (index < 0 || index >= count)
            throw Error(ErrorCode::InvalidArgument, "history: generation " + std::to_string(id) + " has no candidate " +
                                                        std::to_string(index) + " (it has " + std::to_string(count) + ")");
        Stmt ins(db, "INSERT INTO events (generation_id, kind, candidate_rank, text, target_event_id, created_at) "
                     "VALUES (?1, ?2, ?3, ?4, NULL, ?5)");
        ins.bind(1, id).bind(2, std::string(to_string(kind))).bind(3, index).bind(5, now());
        if (text) ins.bind(4, *text); else ins.bind_null(4);
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
        Stmt ins(db, "INSERT INTO events (generation_id, kind, candidate_rank, text, target_event_id, created_at) "
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
            g.candidates.push_back(std::move(c));
        }
    }

    static constexpr const char* kSelectCandidates =
        "SELECT rank, text, score, state, edited_text FROM candidates WHERE generation_id = ?1 ORDER BY rank";
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

GenerationId HistoryStore::record(const GenerationRecord& generation) {
    Transaction tx(impl_->db);
    Stmt gen(impl_->db, Impl::kInsertGeneration);
    Stmt cand(impl_->db, Impl::kInsertCandidate);
    const GenerationId id = impl_->insert(generation, gen, cand);
    tx.commit();
    impl_->after_insert(1);
    return id;
}

std::vector<GenerationId> HistoryStore::record_many(const std::vector<GenerationRecord>& generations) {
    std::vector<GenerationId> ids;
    ids.reserve(generations.size());
    Transaction tx(impl_->db);
    Stmt gen(impl_->db, Impl::kInsertGeneration);
    Stmt cand(impl_->db, Impl::kInsertCandidate);
    for (const auto& g : generations) ids.push_back(impl_->insert(g, gen, cand));
    tx.commit();
    impl_->after_insert(static_cast<int64_t>(ids.size()));
    return ids;
}

int64_t HistoryStore::accept(GenerationId id, int candidate_index) {
    return impl_->decide(id, candidate_index, EventKind::Accept, nullptr);
}

int64_t HistoryStore::reject(GenerationId id, int candidate_index) {
    return impl_->decide(id, candidate_index, EventKind::Reject, nullptr);
}

int64_t HistoryStore::edit(GenerationId id, int candidate_index, const std::string& text) {
    return impl_->decide(id, candidate_index, EventKind::Edit, &text);
}

int64_t HistoryStore::undo(GenerationId id) { return impl_->undo_redo(id, EventKind::Undo); }
int64_t HistoryStore::redo(GenerationId id) { return impl_->undo_redo(id, EventKind::Redo); }

std::optional<StoredGeneration> HistoryStore::get(GenerationId id) {
    ReadTransaction rt(impl_->db);
    Stmt s(impl_->db, (std::string("SELECT ") + kGenerationColumns + " FROM generations g WHERE g.id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    StoredGeneration g = read_generation(s);
    Stmt c(impl_->db, Impl::kSelectCandidates);
    impl_->load_candidates(g, c);
    return g;
}

std::optional<std::string> HistoryStore::input_text(GenerationId id) {
    Stmt s(impl_->db, "SELECT input FROM generations WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return s.text(0);
}

std::vector<HistoryEvent> HistoryStore::events(GenerationId id) {
    std::vector<HistoryEvent> out;
    Stmt s(impl_->db, "SELECT id, kind, candidate_rank, text, target_event_id, created_at FROM events "
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
    if (query.limit < 1 || query.limit > 10000)
        throw Error(ErrorCode::InvalidArgument, "history: page size " + std::to_string(query.limit) + " is not in 1..10000");
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
        Stmt c(impl_->db, Impl::kSelectCandidates);
        for (auto& g : page.generations) impl_->load_candidates(g, c);
    }
    return page;
}

int64_t HistoryStore::count(const HistoryFilter& filter) {
    Where w = build_where(filter);
    Stmt s(impl_->db, ("SELECT count(*) FROM generations g" + w.sql).c_str());
    w.apply(s);
    return s.step() ? s.int64(0) : 0;
}

std::optional<GenerationId> HistoryStore::find_by_origin(const std::string& origin) {
    Stmt s(impl_->db, "SELECT id FROM generations WHERE origin = ?1 ORDER BY id DESC LIMIT 1");
    s.bind(1, origin);
    if (!s.step()) return std::nullopt;
    return s.int64(0);
}

bool HistoryStore::remove(GenerationId id) {
    Transaction tx(impl_->db);
    Stmt s(impl_->db, "DELETE FROM generations WHERE id = ?1");
    s.bind(1, id);
    s.run();
    const bool removed = impl_->db.changes() > 0;
    tx.commit();
    return removed;
}

ExportResult HistoryStore::export_to(const std::string& path, const ExportOptions& options,
                                     const std::function<void(const ExportProgress&)>& progress,
                                     const std::atomic<bool>* cancel) {
    AtomicFile file(path, options.overwrite, "export file");  // refuses an existing file before any work
    Where w = build_where(options.filter);
    const std::string cand_filter = options.filter.accepted_only ? " AND c.state IN (1, 3)" : "";
    const std::string from = " FROM generations g JOIN candidates c ON c.generation_id = g.id" +
                             (w.sql.empty() ? std::string(" WHERE 1") : w.sql) + cand_filter;

    ReadTransaction rt(impl_->db);  // one snapshot for the count and the rows
    ExportProgress prog;
    {
        Stmt count(impl_->db, ("SELECT count(*)" + from).c_str());
        w.apply(count);
        prog.candidates_total = count.step() ? count.int64(0) : 0;
    }
    Stmt rows(impl_->db, ("SELECT g.id, g.created_at, g.input, g.model_path, g.model_hash, c.rank, c.text, c.score, "
                          "c.state, c.edited_text" + from + " ORDER BY g.id, c.rank").c_str());
    w.apply(rows);

    ExportResult result;
    result.path = path;
    std::unordered_set<PairKey, PairKeyHash> seen;
    std::string out = history::export_header(options.format);
    file.write(out);
    GenerationId current = 0;
    bool current_counted = false;
    auto emit = [&](const history::ExportRow& row) {
        if (options.dedupe && !seen.insert(pair_key(row.source, row.target)).second) {
            ++result.duplicates_skipped;
            return;
        }
        out.clear();
        history::append_export_row(options.format, row, out);
        file.write(out);
        ++result.rows_written;
        if (!current_counted) {
            ++result.generations;
            current_counted = true;
        }
    };
    while (rows.step()) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw Error(ErrorCode::Cancelled, "export to " + path + " cancelled; no file written");
        const GenerationId gid = rows.int64(0);
        const std::string source = rows.text(2);
        const std::string model = rows.text(3);
        const std::string model_hash = rows.text(4);
        const CandidateState state = state_from_int(rows.int64(8));
        const std::string text = rows.text(6);
        const std::string edited = state == CandidateState::Edited ? rows.text(9) : std::string();
        history::ExportRow row;
        row.source = source;
        row.model = model;
        row.model_hash = model_hash;
        row.generation_id = gid;
        row.created_at_ms = rows.int64(1);
        if (gid != current) {
            current = gid;
            current_counted = false;
            if (options.include_originals) {
                row.original = true;
                row.target = source;
                emit(row);
                row.original = false;
            }
        }
        row.target = state == CandidateState::Edited ? std::string_view(edited) : std::string_view(text);
        row.state = state;
        row.score = rows.real(7);
        row.rank = static_cast<int>(rows.int64(5));
        emit(row);
        ++prog.candidates_done;
        if (progress && prog.candidates_done % 1000 == 0) {
            prog.rows_written = result.rows_written;
            progress(prog);
        }
    }
    if (cancel && cancel->load(std::memory_order_relaxed))
        throw Error(ErrorCode::Cancelled, "export to " + path + " cancelled; no file written");
    file.commit();
    result.bytes_written = file.bytes_written();
    if (progress) {
        prog.rows_written = result.rows_written;
        progress(prog);
    }
    return result;
}

std::string HistoryStore::integrity_check() {
    Stmt s(impl_->db, "PRAGMA integrity_check");
    std::string first = s.step() ? s.text(0) : std::string("no result");
    return first;
}

}  // namespace t5s
