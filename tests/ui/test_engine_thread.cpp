// EngineThread: commands in, events out. Uses the fake model (no torch work) for the mechanics and
// a tiny real checkpoint from tests/data/models for one end-to-end generation.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "engine_fixtures.h"
#include "t5s/engine_thread.h"
#include "t5s/jobs.h"
#ifdef T5S_TEST_HOOKS
#include "engine_thread/test_hooks.h"
#endif

using namespace t5s;
using Clock = std::chrono::steady_clock;

namespace {

// The event as a T (T = Event: any event), or null.
template <class T>
const T* as(const Event& e) {
    if constexpr (std::is_same_v<T, Event>) return &e;
    else return std::get_if<T>(&e);
}

struct Collector : test::EventLog {
    using EventLog::EventLog;
    // The first T (earlier events count too) for which pred holds. Fails after `seconds`.
    template <class T, class Pred>
    T wait_for(Pred pred, double seconds = 60.0) {
        const auto match = [&](const Event& e) {
            auto* t = as<T>(e);
            return t && pred(*t);
        };
        if (const auto at = find(match, seconds)) return *as<T>(all[*at]);
        std::string seen_kinds;
        for (const auto& e : all) {
            seen_kinds += " #" + std::to_string(e.index());
            if (auto* f = std::get_if<JobFailed>(&e)) seen_kinds += "(job " + std::to_string(f->job) + ": " + f->message + ")";
        }
        FAIL("timed out waiting for an event; events seen:" << seen_kinds);
        return T{};
    }
    // Fails if an event matching pred arrives within `seconds` (a check that something does NOT
    // happen can only watch for a while; callers size the window from a measured duration).
    template <class T, class Pred>
    void expect_none(Pred pred, double seconds) {
        const auto match = [&](const Event& e) {
            auto* t = as<T>(e);
            return t && pred(*t);
        };
        if (find(match, seconds, all.size())) FAIL("an event arrived that should not have");
    }
    template <class T>
    T wait_job(JobId job, double seconds = 60.0) {
        return wait_for<T>([&](const T& t) { return t.job == job; }, seconds);
    }
    std::optional<JobFailed> failure_of(JobId job) {
        const auto at = find([&](const Event& e) { return test::of_job<JobFailed>(e, job) != nullptr; }, 0);
        if (at) return std::get<JobFailed>(all[*at]);
        return std::nullopt;
    }
};

// Directories made by temp_dir(), removed when the test program exits (a failed check leaves the
// test case early, so a scope guard per case would not do).
struct TempDirs {
    std::vector<std::filesystem::path> made;
    ~TempDirs() {
        std::error_code ec;
        for (const auto& d : made) std::filesystem::remove_all(d, ec);
    }
};

std::filesystem::path temp_dir(const std::string& name) {
    static TempDirs dirs;
    auto d = std::filesystem::temp_directory_path() / ("t5s_et_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    dirs.made.push_back(d);
    return d;
}

EngineConfig fake_config(const std::filesystem::path& db = {}, int delay_ms = 2) {
    EngineConfig c;
    c.history_db = db;
    c.model_factory = [delay_ms](const std::filesystem::path& d, const RuntimeOptions& o) {
        return make_fake_model(d, o, delay_ms);
    };
    c.telemetry_hz = 20;
    return c;
}

}  // namespace

TEST_CASE("engine thread: load, generate, history, events", "[engine_thread]") {
    auto dir = temp_dir("basic");
    EngineThread engine(fake_config(dir / "history.db"));
    Collector col{engine};
    const JobId load = engine.submit(LoadModel{dir, {}});
    auto loaded = col.wait_job<ModelLoaded>(load);
    CHECK(loaded.info.model_type == "fake");

    Generate g;
    g.texts = {"今日は良い天気です", "the cat sat on the mat"};
    g.options.num_return_sequences = 3;
    g.options.do_sample = true;
    g.options.seed = 5;
    g.task_prefix = "paraphrase: ";
    const JobId job = engine.submit(g);
    auto done = col.wait_job<GenerationDone>(job);
    REQUIRE(done.results.size() == 2);
    CHECK(done.results[0].input == "今日は良い天気です");  // prefix not kept in the result
    CHECK(done.results[0].candidates.size() == 3);
    REQUIRE(done.history_ids.size() == 2);
    CHECK(done.history_ids[0] > 0);
    CHECK(done.timings.tokens > 0);
    col.wait_job<GenerationStep>(job, 1.0);

    // Decisions and a history query on the io lane.
    const JobId acc = engine.submit(RecordDecision{done.history_ids[0], 1, EventKind::Accept, {}});
    col.wait_job<DecisionRecorded>(acc);
    const JobId ed = engine.submit(RecordDecision{done.history_ids[1], 0, EventKind::Edit, "edited"});
    col.wait_job<DecisionRecorded>(ed);
    QueryHistory q;
    q.query.filter.accepted_only = true;
    const JobId qj = engine.submit(q);
    auto page = col.wait_job<HistoryLoaded>(qj);
    CHECK(page.total == 2);
    q.query.filter.accepted_only = false;
    q.query.filter.text = "天気";
    auto page2 = col.wait_job<HistoryLoaded>(engine.submit(q));
    REQUIRE(page2.page.generations.size() == 1);
    CHECK(page2.page.generations[0].input == "今日は良い天気です");

    // Export: accepted/edited only; never overwrites without asking.
    ExportHistory ex;
    ex.out = dir / "out.jsonl";
    ex.options.filter.accepted_only = true;
    auto exd = col.wait_job<ExportDone>(engine.submit(ex));
    CHECK(exd.result.rows_written == 2);
    auto exists = col.wait_job<FileExists>(engine.submit(ex));
    CHECK(exists.path == ex.out);
    ex.options.overwrite = true;
    col.wait_job<ExportDone>(engine.submit(ex));

    // Telemetry arrives by itself.
    auto t = col.wait_for<TelemetrySample>([](const TelemetrySample& s) { return s.rss_bytes > 0; }, 2.0);
    CHECK_FALSE(t.cuda.available);  // CPU: "n/a"
    std::filesystem::remove_all(dir);
}

TEST_CASE("engine thread: failures become JobFailed with their code", "[engine_thread]") {
    EngineThread engine(fake_config());
    Collector col{engine};
    // No model yet.
    const JobId g0 = engine.submit(Generate{{"x"}, {}, "", false});
    auto f0 = col.wait_job<JobFailed>(g0);
    CHECK(f0.code == ErrorCode::InvalidArgument);
    // Unreadable model folder.
    auto f1 = col.wait_job<JobFailed>(engine.submit(LoadModel{"/nonexistent/model", {}}));
    CHECK(f1.code == ErrorCode::FileNotFound);
    CHECK(f1.message.find("/nonexistent/model") != std::string::npos);
    // Invalid settings, validated up front.
    auto dir = temp_dir("fail");
    col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
    Generate bad{{"x"}, {}, "", false};
    bad.options.do_sample = true;
    bad.options.top_p = 0.0f;
    auto f2 = col.wait_job<JobFailed>(engine.submit(bad));
    CHECK(f2.code == ErrorCode::InvalidArgument);
    CHECK(f2.message.find("top_p") != std::string::npos);
    // OOM and foreign exceptions from a model are caught at the job boundary.
    EngineConfig c;
    int which = 0;
    c.model_factory = [&which](const std::filesystem::path&, const RuntimeOptions&) -> std::unique_ptr<Model> {
        if (which++ == 0) throw std::bad_alloc();
        // What a real model reports (torch/torch_errors.h recognises c10::OutOfMemoryError by type).
        throw Error(ErrorCode::OutOfMemory, "out of memory: CUDA out of memory. Tried to allocate 2.00 GiB");
    };
    c.telemetry_hz = 0;
    EngineThread e2(c);
    Collector col2{e2};
    CHECK(col2.wait_job<JobFailed>(e2.submit(LoadModel{dir, {}})).code == ErrorCode::OutOfMemory);
    CHECK(col2.wait_job<JobFailed>(e2.submit(LoadModel{dir, {}})).code == ErrorCode::OutOfMemory);
    // History without a database: a message.
    auto f3 = col.wait_job<JobFailed>(engine.submit(QueryHistory{}));
    CHECK(f3.message.find("history") != std::string::npos);
    // Bad dataset rows are skipped and named by line in the input reader's words, not fatal.
    const std::string csv = (dir / "rows.csv").string();
    std::ofstream(csv) << "id,text\n1,hello\n2\n3,\"unterminated\n";
    auto ds = col.wait_job<DatasetLoaded>(engine.submit(LoadDataset{csv, ""}));
    CHECK(ds.column == "text");
    CHECK(ds.rows == std::vector<std::string>{"hello"});
    CHECK(ds.warnings ==
          std::vector<std::string>{csv + ":3: missing column (1 fields, header has 2)", csv + ":4: unterminated quoted field"});
    const std::string txt = (dir / "rows.txt").string();
    std::ofstream(txt, std::ios::binary) << "first good row\r\n\xff\xfe not UTF-8\n\n  \t\n{\"text\": broken\nlast good row";
    ds = col.wait_job<DatasetLoaded>(engine.submit(LoadDataset{txt, ""}));
    CHECK(ds.columns.empty());
    CHECK(ds.rows == std::vector<std::string>{"first good row", "last good row"});
    REQUIRE(ds.warnings.size() == 2);
    CHECK(ds.warnings[0].rfind(txt + ":2: invalid UTF-8", 0) == 0);
    CHECK(ds.warnings[1] == txt + ":5: malformed JSON line");
    // Another column on request; with none, the first when no column looks like text.
    std::ofstream(dir / "qa.csv") << "question,answer\nwhere?,here\nwhen?,now\n";
    CHECK(col.wait_job<DatasetLoaded>(engine.submit(LoadDataset{dir / "qa.csv", ""})).rows ==
          std::vector<std::string>{"where?", "when?"});
    ds = col.wait_job<DatasetLoaded>(engine.submit(LoadDataset{dir / "qa.csv", "answer"}));
    CHECK(ds.column == "answer");
    CHECK(ds.rows == std::vector<std::string>{"here", "now"});
    const auto no_column = col.wait_job<JobFailed>(engine.submit(LoadDataset{dir / "qa.csv", "nope"}));
    CHECK(no_column.message.find("qa.csv: no column 'nope'") != std::string::npos);
    CHECK(col.wait_job<JobFailed>(engine.submit(LoadDataset{dir / "missing.txt", ""})).code == ErrorCode::FileNotFound);
    std::filesystem::remove_all(dir);
}

TEST_CASE("engine thread: submit never blocks, cancel stops a running job", "[engine_thread]") {
    auto dir = temp_dir("block");
    EngineThread engine(fake_config({}, 20));  // 20 ms per step: a slow generation
    Collector col{engine};
    col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
    Generate g{{std::string(200, 'a')}, {}, "", false};
    g.options.max_new_tokens = 200;
    const JobId slow = engine.submit(g);
    col.wait_job<GenerationStep>(slow);
    // While it runs, submits return at once.
    const auto t0 = Clock::now();
    std::vector<JobId> ids;
    for (int i = 0; i < 200; ++i) ids.push_back(engine.submit(ListDirectory{dir}));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    CHECK(ms < 50.0);
    col.wait_job<DirectoryListing>(ids.back());  // the io lane is not stuck behind the model lane
    const auto tc = Clock::now();
    engine.submit(Cancel{slow});
    auto f = col.wait_job<JobFailed>(slow);
    CHECK(f.code == ErrorCode::Cancelled);
    CHECK(std::chrono::duration<double, std::milli>(Clock::now() - tc).count() < 500.0);
    // Cancel of a queued job.
    const JobId a = engine.submit(g);
    const JobId b = engine.submit(g);
    engine.submit(Cancel{b});
    engine.submit(Cancel{a});
    CHECK(col.wait_job<JobFailed>(b).code == ErrorCode::Cancelled);
    CHECK(col.wait_job<JobFailed>(a).code == ErrorCode::Cancelled);
    std::filesystem::remove_all(dir);
}

TEST_CASE("engine thread: UpdateSettings takes effect at the next step", "[engine_thread]") {
    auto dir = temp_dir("hot");
    EngineThread engine(fake_config({}, 10));
    Collector col{engine};
    col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
    Generate g{{std::string(60, 'b')}, {}, "", false};
    g.options.max_new_tokens = 60;
    g.options.do_sample = true;
    g.options.temperature = 1.0f;
    const JobId job = engine.submit(g);
    auto step = col.wait_for<GenerationStep>([&](const GenerationStep& s) { return s.job == job && s.step >= 5; });
    GenerationOptions hot = g.options;
    hot.temperature = 0.5f;
    const JobId upd = engine.submit(UpdateSettings{hot});
    auto su = col.wait_job<SettingsUpdated>(upd);
    CHECK(su.running_jobs == 1);
    auto done = col.wait_job<GenerationDone>(job);
    // The fake model records the temperature it read at each step (x100) in the ids.
    const auto& ids = done.results[0].candidates[0].ids;
    REQUIRE(ids.size() == 60);
    CHECK(ids.front() == 100);
    CHECK(ids.back() == 50);
    const auto first50 = size_t(std::find(ids.begin(), ids.end(), 50) - ids.begin());
    CHECK(first50 >= size_t(step.step));
    CHECK(std::all_of(ids.begin() + long(first50), ids.end(), [](int v) { return v == 50; }));
    // Invalid updates are refused with a message.
    hot.top_p = 2.0f;
    CHECK(col.wait_job<JobFailed>(engine.submit(UpdateSettings{hot})).code == ErrorCode::InvalidArgument);
    std::filesystem::remove_all(dir);
}

TEST_CASE("engine thread: batch augmentation pauses, resumes and skips rows done", "[engine_thread]") {
    auto dir = temp_dir("batch");
    const auto db = dir / "h.db";
    std::vector<std::string> rows;
    for (int i = 0; i < 12; ++i) rows.push_back("row number " + std::to_string(i) + " 日本語");
    const auto rows_batch = [&] {  // the same batch (by name) in both sessions
        BatchAugment b;
        b.name = "rows.txt";
        b.rows = rows;
        return b;
    };
    {
        EngineThread engine(fake_config(db, 5));
        Collector col{engine};
        col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
        BatchAugment b = rows_batch();
        b.options.num_return_sequences = 2;
        b.options.do_sample = true;
        b.options.batch_size = 2;
        const JobId job = engine.submit(b);
        col.wait_for<Progress>([&](const Progress& p) { return p.job == job && p.done >= 2; });
        engine.submit(PauseJob{job});
        auto paused = col.wait_job<JobPaused>(job);
        CHECK(paused.done < 12);
        CHECK(paused.total == 12);
        engine.submit(ResumeJob{job});
        auto fin = col.wait_job<JobFinished>(job);
        CHECK(fin.summary == "12 of 12 rows done");
        const size_t row_events = col.count<BatchRowDone>(job);
        CHECK(row_events == 12);  // no row generated twice
    }
    {
        // A new session resumes the same batch by name: every row is already in the history.
        EngineThread engine(fake_config(db, 5));
        Collector col{engine};
        col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
        BatchAugment b = rows_batch();
        b.rows.push_back("one more row");
        const JobId job = engine.submit(b);
        auto fin = col.wait_job<JobFinished>(job);
        CHECK(fin.summary == "13 of 13 rows done");
        const size_t row_events = col.count<BatchRowDone>(job);
        CHECK(row_events == 1);
        // Cancel a running batch.
        b.name = "other";
        b.options.batch_size = 1;
        const JobId j2 = engine.submit(b);
        col.wait_for<Progress>([&](const Progress& p) { return p.job == j2; });
        engine.submit(Cancel{j2});
        CHECK(col.wait_job<JobFailed>(j2).code == ErrorCode::Cancelled);
    }
    std::filesystem::remove_all(dir);
}

// Needs EngineTestAccess (engine_thread/test_hooks.h), which only builds with the test hooks (on with the test suite unless
// -DT5S_TEST_HOOKS=OFF; tests/ui.cmake says so at configure time when they are off).
#ifdef T5S_TEST_HOOKS
TEST_CASE("engine thread: a dead lane is reported and restart brings it back", "[engine_thread]") {
    auto dir = temp_dir("restart");
    EngineThread engine(fake_config());
    Collector col{engine};
    CHECK(engine.alive());
    EngineTestAccess::crash_lane(engine, false);
    col.wait_for<EngineDied>([](const EngineDied&) { return true; });
    CHECK_FALSE(engine.alive());
    CHECK_FALSE(engine.death_message().empty());
    engine.restart();
    CHECK(engine.alive());
    auto loaded = col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir, {}}));
    CHECK(loaded.info.model_type == "fake");
    std::filesystem::remove_all(dir);
}
#endif

TEST_CASE("engine thread: a tiny real checkpoint generates through the thread", "[engine_thread][model]") {
    const std::filesystem::path model = test::tiny_model_dir();
    REQUIRE(std::filesystem::exists(model / "config.json"));  // part of the repository
    EngineConfig c = test::quiet_config();
    EngineThread engine(c);
    Collector col{engine};
    const RuntimeOptions ro = test::one_cpu_thread();
    const JobId load = engine.submit(LoadModel{model, ro});
    // The model must load: a failure here is a failure of the test, not a skip.
    ModelInfo info;
    col.wait_for<Event>(
        [&](const Event& e) {
            if (auto* f = std::get_if<JobFailed>(&e); f && f->job == load) FAIL("the tiny model did not load: " << f->message);
            auto* m = std::get_if<ModelLoaded>(&e);
            if (m && m->job == load) info = m->info;
            return m && m->job == load;
        },
        120);
    // The kernel policy reaches the UI in the event's model info (the Model panel draws it).
    CHECK(info.cpu_class == to_string(default_kernel_policy().cpu));
    CHECK(info.kernels == describe_kernels(default_kernel_policy()));
    Generate g;
    g.texts = {"hello world", "今日は"};
    g.options.max_new_tokens = 8;
    g.options.num_beams = 2;
    g.options.num_return_sequences = 2;
    g.record_history = false;
    const JobId job = engine.submit(g);
    auto done = col.wait_job<GenerationDone>(job, 120);
    REQUIRE(done.results.size() == 2);
    CHECK(done.results[0].candidates.size() == 2);
    CHECK(done.results[1].input == "今日は");
}

TEST_CASE("engine thread: training runs on the model lane, reports, pauses and saves a loadable model",
          "[engine_thread][training]") {
    const std::filesystem::path model = test::tiny_model_dir();
    REQUIRE(std::filesystem::exists(model / "config.json"));
    auto dir = temp_dir("train");
    {
        std::ofstream f(dir / "pairs.jsonl");
        const char* words[] = {"cat", "dog", "bird", "fish", "tree", "house", "river", "stone"};
        for (int i = 0; i < 8; ++i)
            f << R"({"source": "paraphrase: the )" << words[i] << R"( is here", "target": "here is the )" << words[i] << "\"}\n";
        std::ofstream e(dir / "eval.jsonl");
        e << R"({"source": "paraphrase: the cat is there", "target": "there is the cat"})"
          << "\n";
        e << R"({"source": "paraphrase: the dog is there", "target": "there is the dog"})"
          << "\n";
    }
    auto options = [&](const std::string& out, int64_t steps) {
        TrainingOptions o;
        o.model_dir = model.string();
        o.data_file = (dir / "pairs.jsonl").string();
        o.out_dir = (dir / out).string();
        o.steps = steps;
        o.batch_size = 2;
        o.lr = 1e-3;
        o.threads = 1;
        o.eval_file = (dir / "eval.jsonl").string();  // 8 pairs are too few for a split
        o.sample_count = 1;
        o.sample_max_new_tokens = 4;
        o.device = TrainDevice::Cpu;
        return o;
    };
    EngineConfig c = test::quiet_config();
    // A fake model in a folder named "blocker" keeps the model lane busy until cancelled (to queue a
    // training run behind it); every other folder loads for real.
    c.model_factory = [](const std::filesystem::path& d, const RuntimeOptions& o) -> std::unique_ptr<Model> {
        if (d.filename() == "blocker") return make_fake_model(d, o, 5);
        return Model::load(d, o);
    };
    EngineThread engine(c);
    Collector col{engine};
    auto updates_of = [&](JobId job) {
        for (auto& e : engine.drain_events()) col.all.push_back(std::move(e));
        std::vector<TrainingEvent> out;
        for (const auto& e : col.all)
            if (auto* u = std::get_if<TrainingUpdate>(&e); u && u->job == job) out.push_back(u->event);
        return out;
    };

    // A full run: 6 steps, batch 2, saved at the end.
    const JobId job = engine.submit(StartTraining{options("run", 6)});
    auto fin = col.wait_job<JobFinished>(job, 120);
    CHECK(fin.kind == "train");
    CHECK(fin.summary.find("completed after 6 steps") != std::string::npos);
    const auto updates = updates_of(job);
    int steps = 0, evals = 0, plans = 0, finished = 0;
    for (const auto& e : updates) {
        using K = TrainingEvent::Kind;
        if (e.kind == K::Step) {
            ++steps;
            CHECK(std::isfinite(e.loss));
            CHECK(e.loss > 0);
            CHECK(e.total_steps == 6);
        }
        if (e.kind == K::Eval) {
            ++evals;
            CHECK(std::isfinite(e.eval_loss));
            CHECK(e.eval_loss > 0);
        }
        plans += e.kind == K::Plan;
        finished += e.kind == K::Finished;
    }
    CHECK(steps >= 1);
    CHECK(steps <= 6);  // throttled to <= 10 Hz
    CHECK(evals >= 1);
    CHECK(plans == 1);
    REQUIRE(finished == 1);
    REQUIRE(updates.back().kind == TrainingEvent::Kind::Finished);
    CHECK(std::string(to_string(updates.back().stop_reason)) == "completed");
    bool last_step_seen = false;
    for (const auto& e : updates) last_step_seen |= e.kind == TrainingEvent::Kind::Step && e.step == 6;
    CHECK(last_step_seen);  // the last step always goes out
    const std::filesystem::path final_dir = updates.back().message;
    CHECK(final_dir == dir / "run" / "final");
    const RuntimeOptions ro = test::one_cpu_thread();
    auto trained = Model::load(final_dir, ro);
    REQUIRE(trained);
    GenerationOptions go;
    go.max_new_tokens = 4;
    CHECK(trained->generate({"paraphrase: the cat is here"}, go).size() == 1);
    // The UI's "use this model": LoadModel on the final folder through the thread.
    auto loaded = col.wait_job<ModelLoaded>(engine.submit(LoadModel{final_dir, ro}), 60);
    CHECK(loaded.info.dir == final_dir);

    // Paused before it starts: queued behind a generation that holds the model lane, so the pause
    // is in place before the trainer runs. No step may run until ResumeJob: no Step event before
    // it (watched for many step times after the run reached its plan), and the first Step after
    // it is step 1.
    double step_s = 0.05;  // seconds per step of the first run (its last Step's elapsed / steps)
    for (const auto& e : updates)
        if (e.kind == TrainingEvent::Kind::Step && e.step > 0) step_s = std::max(step_s, e.elapsed_s / double(e.step));
    std::filesystem::create_directories(dir / "blocker");
    REQUIRE(col.wait_job<ModelLoaded>(engine.submit(LoadModel{dir / "blocker", ro}), 30).info.model_type == "fake");
    Generate hold;
    hold.texts = {std::string(4000, 'x')};  // 4000 steps of 5 ms: far longer than this test waits
    hold.options.max_new_tokens = 4000;
    hold.record_history = false;
    const JobId holder = engine.submit(hold);
    col.wait_for<GenerationStep>([&](const GenerationStep& g) { return g.job == holder; }, 30);
    const JobId j2 = engine.submit(StartTraining{options("run2", 20)});
    engine.submit(PauseJob{j2});
    auto paused = col.wait_job<JobPaused>(j2, 10);
    CHECK(paused.done == 0);  // acknowledged before any step
    engine.submit(Cancel{holder});
    CHECK(col.wait_job<JobFailed>(holder, 30).code == ErrorCode::Cancelled);
    col.wait_for<TrainingUpdate>(
        [&](const TrainingUpdate& u) { return u.job == j2 && u.event.kind == TrainingEvent::Kind::Plan; }, 60);
    auto is_step_of = [](JobId job) {
        return [job](const TrainingUpdate& u) { return u.job == job && u.event.kind == TrainingEvent::Kind::Step; };
    };
    col.expect_none<TrainingUpdate>(is_step_of(j2), std::max(0.5, 10 * step_s));
    for (const auto& e : updates_of(j2)) CHECK(e.kind != TrainingEvent::Kind::Step);  // drained just now
    engine.submit(ResumeJob{j2});
    auto first = col.wait_for<TrainingUpdate>(is_step_of(j2), 60);
    CHECK(first.event.step == 1);
    auto fin2 = col.wait_job<JobFinished>(j2, 120);
    CHECK(fin2.summary.find("completed after 20 steps") != std::string::npos);

    // Cancelled while queued behind a paused run: it never starts; the paused one stops when cancelled.
    const JobId j3 = engine.submit(StartTraining{options("run3", 50)});
    engine.submit(PauseJob{j3});
    const JobId j4 = engine.submit(StartTraining{options("run4", 2)});
    engine.submit(Cancel{j4});
    col.wait_for<TrainingUpdate>(
        [&](const TrainingUpdate& u) { return u.job == j3 && u.event.kind == TrainingEvent::Kind::Plan; }, 60);
    engine.submit(Cancel{j3});
    auto fin3 = col.wait_job<JobFinished>(j3, 120);
    CHECK(fin3.summary.find("stopped") == 0);
    CHECK(col.wait_job<JobFailed>(j4, 10).code == ErrorCode::Cancelled);
    CHECK(updates_of(j4).empty());
    // A bad data file fails with its name.
    auto bad = options("run5", 2);
    bad.data_file = (dir / "missing.jsonl").string();
    auto f = col.wait_job<JobFailed>(engine.submit(StartTraining{bad}), 30);
    CHECK(f.message.find("missing.jsonl") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("engine thread: training on history pairs is recorded with its curve and a stopped run continues",
          "[engine_thread][training][history]") {
    const std::filesystem::path model = test::tiny_model_dir();
    auto dir = temp_dir("train_hist");
    const auto db = dir / "history.sqlite";
    {
        // Annotators accepted or edited some candidates, rejected others.
        HistoryStore h(db.string());
        const char* words[] = {"cat", "dog", "bird", "fish", "tree", "house"};
        for (int i = 0; i < 6; ++i) {
            GenerationRecord r;
            r.input = std::string("paraphrase: the ") + words[i] + " is here";
            r.candidates = {{std::string("here is the ") + words[i], -0.5}, {"nonsense", -3.0}};
            const GenerationId g = h.record(r);
            if (i % 2 == 0) h.accept(g, 0);
            else h.edit(g, 0, std::string("the ") + words[i] + " is right here");
            h.reject(g, 1);
        }
        std::ofstream e(dir / "eval.jsonl");
        e << R"({"source": "paraphrase: the cat is there", "target": "there is the cat"})"
          << "\n";
    }
    TrainingOptions o;
    o.model_dir = model.string();
    o.out_dir = (dir / "run").string();
    o.steps = 6;
    o.batch_size = 2;
    o.lr = 1e-3;
    o.threads = 1;
    o.eval_file = (dir / "eval.jsonl").string();
    o.eval_every = 3;
    o.save_every = 2;
    o.sample_count = 1;
    o.sample_max_new_tokens = 4;
    o.device = TrainDevice::Cpu;
    EngineConfig c = test::quiet_config();
    c.history_db = db;
    EngineThread engine(c);
    Collector col{engine};

    // Run 1: history pairs only; stopped after its first checkpoint.
    StartTraining start{o};
    start.data_from_history = true;
    const JobId j1 = engine.submit(start);
    const auto rec = col.wait_job<TrainingRunRecorded>(j1, 60);
    CHECK(rec.run_id > 0);
    col.wait_for<TrainingUpdate>(
        [&](const TrainingUpdate& u) { return u.job == j1 && u.event.kind == TrainingEvent::Kind::Checkpoint; }, 120);
    engine.submit(Cancel{j1});
    auto fin1 = col.wait_job<JobFinished>(j1, 120);
    INFO(fin1.summary);
    // Only accepted/edited pairs were written as data: 6 rows, none of the rejected ones.
    {
        std::ifstream pairs(dir / "run" / "history-pairs.jsonl");
        std::string line, all;
        int rows = 0;
        while (std::getline(pairs, line)) {
            ++rows;
            all += line;
        }
        CHECK(rows == 6);
        CHECK(all.find("nonsense") == std::string::npos);
        CHECK(all.find("is right here") != std::string::npos);
    }
    auto runs = col.wait_job<TrainingRunsLoaded>(engine.submit(QueryTrainingRuns{}), 30).runs;
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == rec.run_id);
    const bool stopped_early = fin1.summary.find("stopped") == 0;
    CHECK(runs[0].status == (stopped_early ? "stopped" : "completed"));
    CHECK(runs[0].total_steps == 6);
    CHECK(runs[0].out_dir == o.out_dir);
    REQUIRE_FALSE(runs[0].points.empty());
    const int64_t steps1 = runs[0].steps;
    CHECK(steps1 >= 2);
    for (size_t i = 0; i < runs[0].points.size(); ++i) {
        CHECK(runs[0].points[i].step == int64_t(i) + 1);  // every step is a point, not just the throttled UI events
        CHECK(runs[0].points[i].loss > 0);
    }
    const TrainingOptions saved = training_options_from_json(runs[0].options_json);
    CHECK(saved.resume);
    CHECK(saved.data_file == (dir / "run" / "history-pairs.jsonl").string());

    // Continue the same record from its checkpoints.
    StartTraining cont{saved};
    cont.history_run_id = rec.run_id;
    const JobId j2 = engine.submit(cont);
    CHECK(col.wait_job<TrainingRunRecorded>(j2, 60).run_id == rec.run_id);
    auto fin2 = col.wait_job<JobFinished>(j2, 180);
    CHECK(fin2.summary.find("completed after 6 steps") == 0);
    runs = col.wait_job<TrainingRunsLoaded>(engine.submit(QueryTrainingRuns{}), 30).runs;
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].status == "completed");
    CHECK(runs[0].steps == 6);
    CHECK(runs[0].final_dir == (dir / "run" / "final").string());
    REQUIRE(runs[0].points.size() == 6);
    CHECK(runs[0].points.back().step == 6);
    bool evaluated = false;
    for (const auto& p : runs[0].points) evaluated |= p.eval_loss > 0;
    CHECK(evaluated);
    CHECK(runs[0].best_eval_loss > 0);

    // Continuing needs resume; an unknown record fails with its id; history-less data fails clearly.
    StartTraining no_resume{o};
    no_resume.history_run_id = rec.run_id;
    no_resume.options.data_file = saved.data_file;
    CHECK(col.wait_job<JobFailed>(engine.submit(no_resume), 30).message.find("resume") != std::string::npos);
    StartTraining unknown{saved};
    unknown.history_run_id = 9999;
    CHECK(col.wait_job<JobFailed>(engine.submit(unknown), 30).message.find("9999") != std::string::npos);
    // Forget the record: the folder stays.
    CHECK(col.wait_job<HistoryDeleted>(engine.submit(DeleteTrainingRun{rec.run_id}), 30).count == 1);
    CHECK(col.wait_job<TrainingRunsLoaded>(engine.submit(QueryTrainingRuns{}), 30).runs.empty());
    CHECK(std::filesystem::exists(dir / "run" / "final" / "config.json"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("job registry: ids, states, requests, settings and hooks without the engine lanes", "[engine_thread][jobs]") {
    JobRegistry registry;
    auto gen = registry.create(JobKind::Generate);
    auto batch = registry.create(JobKind::Batch);
    auto train = registry.create(JobKind::Train);
    CHECK(gen->id() == 1);
    CHECK(batch->id() == 2);
    CHECK(registry.reserve_id() == 4);  // ids come from one counter
    CHECK(registry.create(JobKind::Io)->id() == 5);
    CHECK(gen->state() == JobState::Queued);
    CHECK_FALSE(gen->pausable());
    CHECK(batch->pausable());

    // Cancel: the flag Model::generate reads is the job's own.
    CHECK(registry.cancel(gen->id()));
    CHECK(gen->cancel_requested());
    CHECK(gen->generation().cancel.load());
    CHECK_FALSE(registry.cancel(999));

    // Requests reach a body's own flags through the hook, and cancel wakes a paused job.
    std::vector<JobSignal> seen;
    train->on_signal([&](JobSignal s) { seen.push_back(s); });
    train->pause();
    CHECK(train->pause_requested());
    train->resume();
    CHECK_FALSE(train->pause_requested());
    train->pause();
    train->cancel();
    CHECK_FALSE(train->pause_requested());
    CHECK(seen == std::vector<JobSignal>{JobSignal::Pause, JobSignal::Resume, JobSignal::Pause, JobSignal::Cancel});

    // Settings: only jobs that have them take an update.
    GenerationOptions o;
    o.temperature = 0.5f;
    batch->attach_settings(std::make_shared<SettingsHandle>(o));
    const int n = registry.update_settings([](GenerationOptions g) {
        g.temperature = 0.9f;
        return g;
    });
    CHECK(n == 1);
    CHECK(batch->settings()->get().temperature == 0.9f);
    CHECK(batch->generation().live_settings == batch->settings());
    CHECK(gen->settings() == nullptr);

    // Progress, the captured error, the listing.
    batch->set_progress(3, 12);
    batch->fail(ErrorCode::CorruptFile, "rows.csv: line 4: bad quote");
    CHECK(batch->state() == JobState::Failed);
    REQUIRE(batch->error());
    CHECK(batch->error()->message == "rows.csv: line 4: bad quote");
    gen->fail(ErrorCode::Cancelled, "cancelled");
    CHECK(gen->state() == JobState::Cancelled);
    auto list = registry.snapshot();
    REQUIRE(list.size() == 4);
    CHECK(list[1].id == batch->id());
    CHECK(list[1].done == 3);
    CHECK(list[1].total == 12);
    CHECK(list[1].state == JobState::Failed);
    registry.remove(batch->id());
    CHECK(registry.find(batch->id()) == nullptr);
    CHECK(batch->done() == 3);  // the holder's reference stays valid

    // Thread safety: jobs made, cancelled and removed from several threads at once.
    JobRegistry shared;
    std::vector<std::thread> threads;
    std::atomic<int> cancelled{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 500; ++i) {
                auto job = shared.create(JobKind::Io);
                if (shared.cancel(job->id()) && job->cancel_requested()) ++cancelled;
                if (i % 2) shared.remove(job->id());
                shared.snapshot();
            }
        });
    for (auto& t : threads) t.join();
    CHECK(cancelled == 2000);
    CHECK(shared.size() == 1000);
    CHECK(shared.reserve_id() == 2001);
}

TEST_CASE("engine thread: model store jobs (list, delete, a pull cancelled on its own lane)", "[engine_thread][hub]") {
    namespace fs = std::filesystem;
    const fs::path model = test::tiny_model_dir();
    const fs::path cache = temp_dir("hub_cache");
    const fs::path snap = cache / "models--org--tiny" / "snapshots" / "abc123";
    fs::create_directories(snap);
    for (const char* f : {"config.json", "model.safetensors", "spiece.model"}) fs::copy_file(model / f, snap / f);
    fs::create_directories(cache / "models--org--tiny" / "refs");
    std::ofstream(cache / "models--org--tiny" / "refs" / "main") << "abc123";
    EngineThread engine(fake_config());
    Collector c{engine};

    const auto listed = c.wait_job<ModelsListed>(engine.submit(ListModels{cache, {}}));
    REQUIRE(listed.models.size() == 1);
    CHECK(listed.models[0].name == "org/tiny");
    CHECK(listed.models[0].revision == "main");
    CHECK(listed.models[0].parameters > 0);
    CHECK(listed.models[0].disk_bytes > 0);
    CHECK(listed.available_bytes > 0);

    // A pull to an address nobody answers retries with backoff on the download lane; the io lane
    // answers meanwhile, and Cancel stops the pull (code Cancelled, as the UI expects).
    PullModel pull;
    pull.repo = "org/elsewhere";
    pull.cache = cache;
    pull.endpoint = "http://127.0.0.1:9";
    const JobId pj = engine.submit(pull);
    CHECK(c.wait_job<ModelsListed>(engine.submit(ListModels{cache, {}})).models.size() == 1);
    engine.submit(Cancel{pj});
    const auto failed = c.wait_job<JobFailed>(pj, 30.0);
    CHECK(failed.code == ErrorCode::Cancelled);

    // Deleting: a name that is no repository id, one not in the cache, then the real one.
    CHECK(c.wait_job<JobFailed>(engine.submit(DeleteModel{cache, "../etc"})).code == ErrorCode::InvalidArgument);
    CHECK(c.wait_job<JobFailed>(engine.submit(DeleteModel{cache, "org/none"})).code == ErrorCode::FileNotFound);
    const auto deleted = c.wait_job<ModelDeleted>(engine.submit(DeleteModel{cache, "org/tiny"}));
    CHECK(deleted.repo == "org/tiny");
    CHECK(deleted.bytes_freed >= int64_t(fs::file_size(model / "model.safetensors")));
    CHECK_FALSE(fs::exists(cache / "models--org--tiny"));
    CHECK(fs::exists(cache));
}
