// Fine-tuning runs and their loss curves in the history database (schema v3).
#include <string>

#include "history/sqlite_db.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/settings_fields.h"

namespace t5s {

using history::Stmt;
using history::Transaction;

namespace {

constexpr const char* kSelectRun =
    "SELECT id, started_at, updated_at, status, model, data, out_dir, options_json, steps, total_steps, last_loss, "
    "best_eval, final_dir, message FROM training_runs";

StoredTrainingRun read_run(const Stmt& s) {
    StoredTrainingRun r;
    r.id = s.int64(0);
    r.started_at_ms = s.int64(1);
    r.updated_at_ms = s.int64(2);
    r.status = s.text(3);
    r.model = s.text(4);
    r.data = s.text(5);
    r.out_dir = s.text(6);
    r.options_json = s.text(7);
    r.steps = s.int64(8);
    r.total_steps = s.int64(9);
    r.last_loss = s.real(10);
    r.best_eval_loss = s.real(11);
    r.final_dir = s.text(12);
    r.message = s.text(13);
    return r;
}

std::vector<TrainingPoint> read_points(history::Db& db, int64_t run) {
    Stmt s(db,
           "SELECT step, elapsed_s, loss, eval_loss, lr, tokens_per_s, memory_bytes FROM training_points "
           "WHERE run_id = ?1 ORDER BY step");
    s.bind(1, run);
    std::vector<TrainingPoint> out;
    while (s.step()) {
        TrainingPoint p;
        p.step = s.int64(0);
        p.elapsed_s = s.real(1);
        p.loss = s.is_null(2) ? -1 : s.real(2);
        p.eval_loss = s.is_null(3) ? -1 : s.real(3);
        p.lr = s.real(4);
        p.tokens_per_s = s.real(5);
        p.memory_bytes = s.int64(6);
        out.push_back(p);
    }
    return out;
}

void require_run(history::Db& db, int64_t id) {
    Stmt s(db, "SELECT 1 FROM training_runs WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) throw Error(ErrorCode::InvalidArgument, "history " + db.path() + ": no training run " + std::to_string(id));
}

}  // namespace

int64_t HistoryStore::begin_training_run(const TrainingRunRecord& run) {
    require_undamaged();
    Transaction tx(db());
    Stmt s(db(),
           "INSERT INTO training_runs (started_at, updated_at, status, model, data, out_dir, options_json, total_steps) "
           "VALUES (?1, ?1, 'running', ?2, ?3, ?4, ?5, ?6)");
    s.bind(1, now_ms())
        .bind(2, run.model)
        .bind(3, run.data)
        .bind(4, run.out_dir)
        .bind(5, run.options_json)
        .bind(6, run.total_steps);
    s.run();
    const int64_t id = db().last_insert_id();
    tx.commit();
    return id;
}

void HistoryStore::reopen_training_run(int64_t id, int64_t total_steps) {
    require_undamaged();
    Transaction tx(db());
    require_run(db(), id);
    Stmt s(db(),
           "UPDATE training_runs SET status = 'running', updated_at = ?2, final_dir = '', message = '', "
           "total_steps = CASE WHEN ?3 > 0 THEN ?3 ELSE total_steps END WHERE id = ?1");
    s.bind(1, id).bind(2, now_ms()).bind(3, total_steps);
    s.run();
    tx.commit();
}

void HistoryStore::add_training_points(int64_t id, const std::vector<TrainingPoint>& points) {
    require_undamaged();
    if (points.empty()) return;
    Transaction tx(db());
    require_run(db(), id);
    // A step may get its train loss and its eval loss in separate calls: keep what is already there.
    Stmt put(db(),
             "INSERT INTO training_points (run_id, step, elapsed_s, loss, eval_loss, lr, tokens_per_s, memory_bytes) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run_id, step) DO UPDATE SET "
             "elapsed_s = excluded.elapsed_s, loss = coalesce(excluded.loss, loss), "
             "eval_loss = coalesce(excluded.eval_loss, eval_loss), lr = excluded.lr, "
             "tokens_per_s = excluded.tokens_per_s, memory_bytes = excluded.memory_bytes");
    // Resumed from an earlier checkpoint: the old points after it belong to a curve that was redone.
    Stmt drop(db(), "DELETE FROM training_points WHERE run_id = ?1 AND step > ?2");
    Stmt last(db(), "SELECT coalesce(max(step), 0) FROM training_points WHERE run_id = ?1");
    last.bind(1, id);
    last.step();
    const int64_t last_step = last.int64(0);
    if (points.front().step < last_step) drop.bind(1, id).bind(2, points.front().step).run();
    double last_loss = -1;
    for (const auto& p : points) {
        put.reset();
        put.bind(1, id).bind(2, p.step).bind(3, p.elapsed_s);
        if (p.loss >= 0) put.bind(4, p.loss);
        else put.bind_null(4);
        if (p.eval_loss >= 0) put.bind(5, p.eval_loss);
        else put.bind_null(5);
        put.bind(6, p.lr).bind(7, p.tokens_per_s).bind(8, p.memory_bytes);
        put.run();
        if (p.loss >= 0) last_loss = p.loss;
    }
    Stmt upd(db(),
             "UPDATE training_runs SET updated_at = ?2, steps = ?3, "
             "last_loss = CASE WHEN ?4 >= 0 THEN ?4 ELSE last_loss END, "
             "best_eval = (SELECT coalesce(min(eval_loss), -1) FROM training_points WHERE run_id = ?1) WHERE id = ?1");
    upd.bind(1, id).bind(2, now_ms()).bind(3, points.back().step).bind(4, last_loss);
    upd.run();
    tx.commit();
}

void HistoryStore::end_training_run(int64_t id, const std::string& status, const std::string& final_dir,
                                    const std::string& message) {
    require_undamaged();
    if (status == "running") throw Error(ErrorCode::InvalidArgument, "end_training_run: \"running\" is not an end state");
    Transaction tx(db());
    require_run(db(), id);
    Stmt s(db(), "UPDATE training_runs SET status = ?2, final_dir = ?3, message = ?4, updated_at = ?5 WHERE id = ?1");
    s.bind(1, id).bind(2, status).bind(3, final_dir).bind(4, message).bind(5, now_ms());
    s.run();
    tx.commit();
}

std::vector<StoredTrainingRun> HistoryStore::training_runs(int limit, bool with_points) {
    require_undamaged();
    if (!settings_in_range(kHistoryPageRange, limit))
        throw Error(ErrorCode::InvalidArgument, range_message("training_runs: limit", kHistoryPageRange, limit));
    history::ReadTransaction rt(db());
    Stmt s(db(), (std::string(kSelectRun) + " ORDER BY id DESC LIMIT ?1").c_str());
    s.bind(1, limit);
    std::vector<StoredTrainingRun> out;
    while (s.step()) out.push_back(read_run(s));
    if (with_points)
        for (auto& r : out) r.points = read_points(db(), r.id);
    return out;
}

std::optional<StoredTrainingRun> HistoryStore::training_run(int64_t id) {
    require_undamaged();
    history::ReadTransaction rt(db());
    Stmt s(db(), (std::string(kSelectRun) + " WHERE id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    StoredTrainingRun r = read_run(s);
    r.points = read_points(db(), id);
    return r;
}

bool HistoryStore::remove_training_run(int64_t id) {
    require_undamaged();
    Transaction tx(db());
    Stmt s(db(), "DELETE FROM training_runs WHERE id = ?1");
    s.bind(1, id);
    s.run();
    const bool removed = db().changes() > 0;
    tx.commit();
    return removed;
}

}  // namespace t5s
