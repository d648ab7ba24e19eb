// Training runs in the history: begin / points / end, upsert of train and eval losses at one step,
// a resumed run that restarts from an earlier checkpoint, listing, survival across reopen, delete.
#include <catch2/catch.hpp>

#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

TrainingPoint point(int64_t step, double loss, double eval = -1) {
    TrainingPoint p;
    p.step = step;
    p.elapsed_s = double(step) * 0.5;
    p.loss = loss;
    p.eval_loss = eval;
    p.lr = 1e-3;
    p.tokens_per_s = 100;
    p.memory_bytes = 1 << 20;
    return p;
}

}  // namespace

TEST_CASE("a training run records its curve, survives reopening and ends with a status", "[history][training]") {
    TempDir dir;
    const std::string path = dir.file("h.sqlite");
    int64_t now = 1000;
    HistoryStoreOptions opts;
    opts.clock_ms = [&] { return now; };
    int64_t id = 0;
    {
        HistoryStore store(path, opts);
        TrainingRunRecord r;
        r.model = "models/t5-small";
        r.data = "pairs.jsonl";
        r.out_dir = "runs/a";
        r.options_json = R"({"steps":10})";
        r.total_steps = 10;
        id = store.begin_training_run(r);
        CHECK(id > 0);
        now = 2000;
        store.add_training_points(id, {point(1, 3.0), point(2, 2.5)});
        // The eval of step 2 arrives separately: it joins the step's row, the train loss stays.
        store.add_training_points(id, {point(2, -1, 2.8)});
        // The app is closed here (no end recorded).
    }
    {
        HistoryStore store(path, opts);
        auto runs = store.training_runs();
        REQUIRE(runs.size() == 1);
        const auto& r = runs[0];
        CHECK(r.id == id);
        CHECK(r.status == "running");  // cut off: the UI offers to resume it
        CHECK(r.model == "models/t5-small");
        CHECK(r.out_dir == "runs/a");
        CHECK(r.options_json == R"({"steps":10})");
        CHECK(r.started_at_ms == 1000);
        CHECK(r.updated_at_ms == 2000);
        CHECK(r.steps == 2);
        CHECK(r.total_steps == 10);
        CHECK(r.last_loss == Approx(2.5));
        CHECK(r.best_eval_loss == Approx(2.8));
        REQUIRE(r.points.size() == 2);
        CHECK(r.points[0].step == 1);
        CHECK(r.points[0].eval_loss < 0);
        CHECK(r.points[1].loss == Approx(2.5));
        CHECK(r.points[1].eval_loss == Approx(2.8));
        CHECK(r.points[1].memory_bytes == (1 << 20));

        // Resumed from the checkpoint at step 1: the redone steps replace the old ones.
        store.reopen_training_run(id, 12);
        store.add_training_points(id, {point(2, 2.4), point(3, 2.0, 2.1)});
        store.end_training_run(id, "completed", "runs/a/final", "completed after 3 steps");
        auto done = store.training_run(id);
        REQUIRE(done);
        CHECK(done->status == "completed");
        CHECK(done->final_dir == "runs/a/final");
        CHECK(done->total_steps == 12);
        CHECK(done->steps == 3);
        REQUIRE(done->points.size() == 3);
        CHECK(done->points[1].loss == Approx(2.4));
        CHECK(done->points[1].eval_loss == Approx(2.8));  // the eval at step 2 is kept (same step)
        CHECK(done->best_eval_loss == Approx(2.1));
        CHECK(store.integrity_check() == "ok");
    }
}

TEST_CASE("training runs: restart from an earlier checkpoint drops the later points", "[history][training]") {
    HistoryStore store(":memory:");
    const int64_t id = store.begin_training_run({});
    store.add_training_points(id, {point(1, 3), point(2, 2.9), point(3, 2.8), point(4, 2.7)});
    store.reopen_training_run(id, 0);
    store.add_training_points(id, {point(3, 2.5)});  // checkpoint was at step 2
    auto r = store.training_run(id);
    REQUIRE(r->points.size() == 3);
    CHECK(r->points.back().step == 3);
    CHECK(r->points.back().loss == Approx(2.5));
    CHECK(r->steps == 3);
}

TEST_CASE("training runs: listing is newest first, limits, delete and bad ids", "[history][training]") {
    HistoryStore store(":memory:");
    std::vector<int64_t> ids;
    for (int i = 0; i < 3; ++i) {
        TrainingRunRecord r;
        r.model = "m" + std::to_string(i);
        ids.push_back(store.begin_training_run(r));
        store.add_training_points(ids.back(), {point(1, 1.0 + i)});
    }
    auto runs = store.training_runs(2, false);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].model == "m2");
    CHECK(runs[1].model == "m1");
    CHECK(runs[0].points.empty());  // not asked for
    CHECK(store.remove_training_run(ids[1]));
    CHECK_FALSE(store.remove_training_run(ids[1]));
    CHECK_FALSE(store.training_run(ids[1]));
    CHECK(store.training_runs().size() == 2);
    CHECK_THROWS_AS(store.add_training_points(9999, {point(1, 1)}), Error);
    CHECK_THROWS_AS(store.end_training_run(9999, "completed", "", ""), Error);
    CHECK_THROWS_AS(store.end_training_run(ids[0], "running", "", ""), Error);
    CHECK_THROWS_AS(store.training_runs(0), Error);
}
