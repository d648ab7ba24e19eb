// Full disk through the engine thread: with the history on a tiny tmpfs, generations
// that cannot be recorded end as JobFailed with a one-line "disk full" message naming the file, the
// engine stays alive, everything recorded before is still listed, an export onto the full disk fails
// the same way without leaving a file, and once space is freed generation and recording go on.
// Uses the fake model (tests/ui/fake_model.h): the disk is what is tested, not decoding.
// Skipped (with the reason, shown by ctest as a skip) where a tmpfs cannot be mounted (not root).
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include "../skip.h"

#include "../tiny_tmpfs.h"
#include "../ui/fake_model.h"
#include "t5s/engine_thread.h"

using namespace t5s;
using Clock = std::chrono::steady_clock;

namespace {

// Drains events until job `job` ends; returns its JobFailed, or nullopt when it succeeded.
struct JobEnd {
    bool failed = false;
    std::string message;
    int64_t generations = 0;  // GenerationDone: recorded ids
    int64_t listed = -1;      // HistoryLoaded: total
};

JobEnd wait_end(EngineThread& engine, JobId job) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
        for (auto& e : engine.drain_events()) {
            if (auto* f = std::get_if<JobFailed>(&e); f && f->job == job) return {true, f->message};
            if (auto* d = std::get_if<GenerationDone>(&e); d && d->job == job)
                return {false, "", static_cast<int64_t>(d->history_ids.size())};
            if (auto* h = std::get_if<HistoryLoaded>(&e); h && h->job == job) return {false, "", 0, h->total};
            if (auto* x = std::get_if<ExportDone>(&e); x && x->job == job) return {false, ""};
            if (auto* m = std::get_if<ModelLoaded>(&e); m && m->job == job) return {false, ""};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL("job " << job << " did not end within 60 s");
    return {};
}

}  // namespace

TEST_CASE("engine thread on a full disk: JobFailed with the reason, engine alive, nothing lost", "[engine_thread][full_disk]") {
    t5s::test::TinyTmpfs disk(6 << 20);
    if (!disk.mounted()) T5S_SKIP(disk.why());
    const std::string filler = disk.file("filler.bin");
    {
        FILE* f = std::fopen(filler.c_str(), "wb");
        REQUIRE(f);
        const std::string mb(1 << 20, 'x');
        std::fwrite(mb.data(), 1, mb.size(), f);
        std::fclose(f);
    }
    EngineConfig config;
    config.history_db = disk.file("history.sqlite");
    config.model_factory = [](const std::filesystem::path& d, const RuntimeOptions& o) { return make_fake_model(d, o, 0); };
    config.telemetry_hz = 0;
    EngineThread engine(config);
    REQUIRE_FALSE(wait_end(engine, engine.submit(LoadModel{disk.file(""), {}})).failed);

    int64_t recorded = 0;
    std::string failure;
    for (int i = 0; i < 20000 && failure.empty(); ++i) {
        Generate g;
        g.texts = {"full disk input " + std::to_string(i) + std::string(300, 'p'), "second input " + std::to_string(i)};
        g.options.max_new_tokens = 6;
        g.options.num_return_sequences = 1;
        const JobEnd end = wait_end(engine, engine.submit(g));
        if (end.failed) failure = end.message;
        else recorded += end.generations;
    }
    INFO(failure);
    REQUIRE_FALSE(failure.empty());
    CHECK(failure.find("disk full") != std::string::npos);
    CHECK(failure.find(config.history_db.string()) != std::string::npos);
    CHECK(failure.find('\n') == std::string::npos);
    CHECK(engine.alive());

    QueryHistory q;
    q.query.limit = 1;
    const JobEnd listed = wait_end(engine, engine.submit(q));
    REQUIRE_FALSE(listed.failed);
    CHECK(listed.listed == recorded);  // every generation reported as recorded is there

    ExportHistory x;
    x.out = disk.file("export.jsonl");
    const JobEnd exported = wait_end(engine, engine.submit(x));
    CHECK(exported.failed);
    CHECK(exported.message.find("disk full") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(x.out));

    ::unlink(filler.c_str());  // space again: the same engine generates and records on
    Generate g;
    g.texts = {"after space was freed"};
    const JobEnd after = wait_end(engine, engine.submit(g));
    CHECK_FALSE(after.failed);
    CHECK(after.generations == 1);
    WARN("engine on a 6 MB tmpfs: " << recorded << " generations recorded, then JobFailed: " << failure);
}
