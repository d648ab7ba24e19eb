// The learning loop through the engine thread (the app's side) on the tiny real model:
// LearnNow runs a round on the history beside the loaded model (a Generate submitted during the
// round finishes before it), the adopted version is switched on without a reload and names itself
// in the next generation's history record, the round ran at a lower CPU priority (nice 10),
// ListAdapterVersions reports the manifests' numbers, and UseAdapterVersion goes back to the base
// and forward again (an unknown version fails, the current one stays).
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine_fixtures.h"
#include "t5s/engine_thread.h"
#include "t5s/history_store.h"
#include "t5s/learning.h"

using namespace t5s;
namespace fs = std::filesystem;

namespace {

// The engine's events; waits return the first matching one (job ids are unique), nullopt after
// `seconds`, and say which jobs failed on the way.
struct Events : test::EventLog {
    using EventLog::EventLog;
    template <class T, class Pred>
    std::optional<T> wait(Pred pred, double seconds) {
        const auto at = find(
            [&](const Event& e) {
                if (auto* f = std::get_if<JobFailed>(&e)) UNSCOPED_INFO("job " << f->job << " failed: " << f->message);
                auto* t = std::get_if<T>(&e);
                return t && pred(*t);
            },
            seconds);
        if (!at) return std::nullopt;
        return std::get<T>(all[*at]);
    }
    template <class T>
    std::optional<T> job(JobId id, double seconds) {
        return wait<T>([&](const T& t) { return t.job == id; }, seconds);
    }
    // Position of the first T of `id` among the events drained (all.size() when none).
    template <class T>
    size_t position(JobId id) const {
        for (size_t i = 0; i < all.size(); ++i)
            if (test::of_job<T>(all[i], id)) return i;
        return all.size();
    }
};

// Threads of this process whose nice value is `nice` (/proc/self/task/*/stat, field 19).
int threads_at_nice(int nice) {
    int n = 0;
    for (const auto& task : fs::directory_iterator("/proc/self/task")) {
        std::ifstream in(task.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = stat.rfind(')');  // the command name may hold spaces
        if (close == std::string::npos) continue;
        std::istringstream fields(stat.substr(close + 2));
        std::string f;
        for (int i = 3; i <= 19 && fields >> f; ++i)
            if (i == 19 && std::atoi(f.c_str()) == nice) ++n;
    }
    return n;
}

// Decisions like tests/test_learning.cpp's: most edited targets share one phrase (learnable).
void fill_history(const std::string& path, int n) {
    HistoryStore store(path);
    for (int k = 0; k < n; ++k) {
        GenerationRecord rec;
        rec.input = "item number " + std::to_string(k);
        rec.candidates.push_back(CandidateRecord{"a candidate " + std::to_string(k), -1.0, {}});
        rec.candidates.push_back(CandidateRecord{"a bad candidate " + std::to_string(k), -2.0, {}});
        const GenerationId id = store.record(rec);
        if (k % 3 == 0) store.accept(id, 0);
        else store.edit(id, 0, "the same answer for all of them");
        store.reject(id, 1);
    }
}

}  // namespace

TEST_CASE("engine thread: LearnNow adopts a version beside generation, UseAdapterVersion switches it",
          "[engine_thread][learning]") {
    const fs::path model = test::tiny_model_dir();
    REQUIRE(fs::exists(model / "config.json"));
    const fs::path dir = fs::temp_directory_path() / ("t5s_et_learn_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path db = dir / "history.sqlite", versions = dir / "learning";
    fill_history(db.string(), 30);

    EngineConfig c = test::quiet_config();
    c.history_db = db;
    EngineThread engine(c);
    Events ev{engine};
    const RuntimeOptions ro = test::one_cpu_thread();
    REQUIRE(ev.job<ModelLoaded>(engine.submit(LoadModel{model, ro}), 120));

    LearnNow learn;
    learn.model_dir = model;
    learn.adapter_dir = versions;
    learn.round.max_steps = 12;
    learn.round.lr = 2e-2;
    learn.round.lora_r = 4;
    learn.round.threads = 1;
    const JobId round = engine.submit(learn);
    REQUIRE(ev.wait<JobStarted>([&](const JobStarted& s) { return s.job == round && s.kind == "learn"; }, 60));
    // Generation is not queued behind the round: it runs on the model lane while the round trains.
    Generate g;
    g.texts = {"item number 3"};
    g.options.max_new_tokens = 4;
    g.record_history = false;
    const JobId gen = engine.submit(g);
    REQUIRE(ev.job<GenerationDone>(gen, 120));
    const auto done = ev.job<LearningRoundDone>(round, 600);
    REQUIRE(done);
    INFO(done->result.to_json());
    CHECK(ev.position<GenerationDone>(gen) < ev.position<LearningRoundDone>(round));
    REQUIRE(done->result.status == "adopted");
    CHECK(done->result.version == 1);
    CHECK(done->result.loss_after < done->result.loss_before);
    CHECK(done->train_losses.size() == size_t(done->result.steps));
    if (::getpriority(PRIO_PROCESS, 0) < 10)  // the lane that ran the round yields the CPU to generation
        CHECK(threads_at_nice(10) >= 1);
    // The engine switched the loaded model to v1 itself (a SetAdapter of its own on the model lane).
    const auto set = ev.wait<AdapterSet>(
        [&](const AdapterSet& a) { return a.dir == fs::path(adapter_version_dir(versions.string(), 1)); }, 120);
    REQUIRE(set);
    CHECK(set->parameters > 0);
    const auto listed = ev.job<AdapterVersionsListed>(round, 60);
    REQUIRE(listed);
    CHECK(listed->current == 1);
    REQUIRE(listed->versions.size() == 1);
    CHECK(listed->versions[0].current);
    CHECK(listed->versions[0].loss_before == Approx(done->result.loss_before));
    CHECK(listed->versions[0].loss_after == Approx(done->result.loss_after));
    CHECK(listed->versions[0].pairs_total == done->result.pairs_total);
    CHECK_FALSE(listed->versions[0].created_at.empty());
    // The round's training curve and learning rate come back from the manifest (4 decimals there).
    REQUIRE(listed->versions[0].train_losses.size() == done->train_losses.size());
    for (size_t i = 0; i < done->train_losses.size(); ++i)
        CHECK(listed->versions[0].train_losses[i] == Approx(done->train_losses[i]).margin(1e-4));
    CHECK(listed->versions[0].lr == Approx(2e-2));
    CHECK(listed->versions[0].lora_r == 4);

    // A generation now names v1 in the history.
    g.record_history = true;
    REQUIRE(ev.job<GenerationDone>(engine.submit(g), 120));
    HistoryQuery q;
    q.limit = 1;
    auto page = ev.job<HistoryLoaded>(engine.submit(QueryHistory{q}), 60);
    REQUIRE(page);
    REQUIRE(page->page.generations.size() == 1);
    CHECK(page->page.generations[0].adapter_version == 1);

    // Back to the base, forward to v1; an unknown version fails and leaves v1.
    const JobId base = engine.submit(UseAdapterVersion{versions, 0});
    const auto to_base = ev.job<AdapterSet>(base, 120);
    REQUIRE(to_base);
    CHECK(to_base->dir.empty());
    const auto after_base = ev.job<AdapterVersionsListed>(base, 60);
    REQUIRE(after_base);
    CHECK(after_base->current == 0);
    CHECK(current_adapter_version(versions.string()) == 0);
    const JobId bad = engine.submit(UseAdapterVersion{versions, 7});
    const auto failed = ev.job<JobFailed>(bad, 60);
    REQUIRE(failed);
    CHECK(failed->code == ErrorCode::InvalidArgument);
    CHECK(current_adapter_version(versions.string()) == 0);
    const JobId again = engine.submit(UseAdapterVersion{versions, 1});
    REQUIRE(ev.job<AdapterSet>(again, 120));
    CHECK(current_adapter_version(versions.string()) == 1);
    const auto relisted = ev.job<AdapterVersionsListed>(engine.submit(ListAdapterVersions{versions}), 60);
    REQUIRE(relisted);
    CHECK(relisted->current == 1);
    CHECK(relisted->rejected_rounds == 0);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// Manifests written before the curve and the settings were recorded (and hand-edited ones with a
// wrong type) still list: their numbers as written, no curve, lr -1.
TEST_CASE("engine thread: ListAdapterVersions reads an older manifest without a curve", "[engine_thread][learning]") {
    const fs::path dir = fs::temp_directory_path() / ("t5s_et_learn_old_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "v0001");
    fs::create_directories(dir / "v0002");
    std::ofstream(dir / "v0001" / "manifest.json")
        << R"({"kind": "t5studio-learning", "version": 1, "round": 1, "pairs_total": 25, "pairs_new": 20,)"
           R"( "loss_before": 3.15, "loss_after": 3.13, "steps": 9, "elapsed_s": 4.2, "created_at": "2026-12-02T06:39:21Z"})";
    std::ofstream(dir / "v0002" / "manifest.json")
        << R"({"kind": "t5studio-learning", "version": 2, "round": "two", "train_losses": "none", "settings": [1]})";
    std::ofstream(dir / "current.json") << R"({"version": 1})";
    EngineConfig c = test::quiet_config();
    EngineThread engine(c);
    Events ev{engine};
    const auto listed = ev.job<AdapterVersionsListed>(engine.submit(ListAdapterVersions{dir}), 60);
    REQUIRE(listed);
    CHECK(listed->current == 1);
    REQUIRE(listed->versions.size() == 2);
    const AdapterVersionEntry& old = listed->versions[0];
    CHECK(old.pairs_total == 25);
    CHECK(old.loss_after == Approx(3.13));
    CHECK(old.steps == 9);
    CHECK(old.train_losses.empty());
    CHECK(old.lr == -1);
    CHECK(old.lora_r == 0);
    const AdapterVersionEntry& odd = listed->versions[1];
    CHECK(odd.round == 0);
    CHECK(odd.train_losses.empty());
    CHECK(odd.lr == -1);
    std::error_code ec;
    fs::remove_all(dir, ec);
}
