// Crash loops: a child process writes to the history and is killed with SIGKILL at a
// random moment, over and over. After each kill the parent checks the file (PRAGMA integrity_check)
// and that every generation and decision the child reported as committed is there. The same for
// export: after each kill the target path holds nothing or the complete file.
// Iterations: T5S_CRASH_ITERATIONS (default 40 in ctest; tests/soak/crash_loops.sh runs >= 200) and
// each loop prints one "crash loop ..." line with its counts.
#include <poll.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

using Clock = std::chrono::steady_clock;

int crash_iterations() {
    const char* v = std::getenv("T5S_CRASH_ITERATIONS");
    const int n = v ? std::atoi(v) : 0;
    return n > 0 ? n : 40;
}

// Row i gets decision i % 4 after it is recorded: accept 0 / reject 1 / edit 0 / accept 1 then undo.
void decide(HistoryStore& store, GenerationId id, int64_t i) {
    switch (i % 4) {
        case 0: store.accept(id, 0); break;
        case 1: store.reject(id, 1); break;
        case 2: store.edit(id, 0, "edited " + std::to_string(i)); break;
        default: store.accept(id, 1); store.undo(id);
    }
}

bool decision_kept(const StoredGeneration& g, int64_t i) {
    if (g.candidates.size() != 3) return false;
    switch (i % 4) {
        case 0: return g.candidates[0].state == CandidateState::Accepted;
        case 1: return g.candidates[1].state == CandidateState::Rejected;
        case 2:
            return g.candidates[0].state == CandidateState::Edited && g.candidates[0].final_text == "edited " + std::to_string(i);
        default: return g.candidates[1].state == CandidateState::None;
    }
}

std::string row_input(int64_t i) { return "crash row " + std::to_string(i) + " 中文"; }

// Child: records rows forever; after a row and its decision committed, writes {id, i} to `fd`.
[[noreturn]] void child_writer(const std::string& path, int fd, int64_t first) {
    try {
        HistoryStore store(path);
        for (int64_t i = first;; ++i) {
            auto r = sample_record(row_input(i), {"c0 " + std::to_string(i), "c1", "c2"});
            r.origin = "crash#" + std::to_string(i);
            const GenerationId id = store.record(r);
            decide(store, id, i);
            const int64_t msg[2] = {id, i};
            if (::write(fd, msg, sizeof(msg)) != static_cast<ssize_t>(sizeof(msg))) ::_exit(3);
        }
    } catch (...) {
        ::_exit(2);
    }
}

struct Child {
    pid_t pid = -1;
    int fd = -1;  // read end of the child's report pipe
};

template <class Body>
Child fork_child(Body body) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        body(fds[1]);
        ::_exit(0);
    }
    ::close(fds[1]);
    return {pid, fds[0]};
}

bool read_report(int fd, int timeout_ms, int64_t (&msg)[2]) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    return ::read(fd, msg, sizeof(msg)) == static_cast<ssize_t>(sizeof(msg));
}

// SIGKILL + reap; true if the child was still running (killed mid-work).
bool kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace

TEST_CASE("crash loop: SIGKILL at random moments while writing loses no committed decision", "[history][crash]") {
    TempDir dir;
    const std::string path = dir.file("crash.sqlite");
    { HistoryStore init(path); }  // schema created before the first child starts
    const int iterations = crash_iterations();
    std::mt19937 rng(20261130);
    std::vector<std::pair<int64_t, int64_t>> committed;  // (id, i) over all rounds
    int killed_mid_write = 0, integrity_failures = 0;
    int64_t generations_lost = 0, decisions_lost = 0;
    for (int round = 0; round < iterations; ++round) {
        const int64_t first = committed.empty() ? 0 : committed.back().second + 1;
        Child child = fork_child([&](int fd) { child_writer(path, fd, first); });
        // Random moment: after the first commit (so the child is inside its write loop), 0-25 ms later.
        int64_t msg[2];
        if (read_report(child.fd, 30000, msg)) committed.emplace_back(msg[0], msg[1]);
        const auto kill_at = Clock::now() + std::chrono::microseconds(std::uniform_int_distribution<int>(0, 25000)(rng));
        while (Clock::now() < kill_at) {
            const int left =
                static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count());
            if (read_report(child.fd, std::max(left, 0), msg)) committed.emplace_back(msg[0], msg[1]);
        }
        if (kill_and_reap(child.pid)) ++killed_mid_write;
        while (read_report(child.fd, 0, msg)) committed.emplace_back(msg[0], msg[1]);
        ::close(child.fd);

        HistoryStore store(path);  // open-time quick_check runs here too
        const std::string integrity = store.integrity_check();
        if (integrity != "ok") {
            ++integrity_failures;
            UNSCOPED_INFO("round " << round << ": " << integrity);
        }
        for (const auto& [id, i] : committed) {
            auto g = store.get(id);
            if (!g || g->input != row_input(i)) ++generations_lost;
            else if (!decision_kept(*g, i)) ++decisions_lost;
        }
    }
    std::printf(
        "crash loop (history writes): %d iterations, %d killed mid-write, %zu committed generations with "
        "decisions checked after every kill, integrity failures %d, generations lost %lld, decisions lost %lld\n",
        iterations, killed_mid_write, committed.size(), integrity_failures, static_cast<long long>(generations_lost),
        static_cast<long long>(decisions_lost));
    CHECK(killed_mid_write == iterations);
    CHECK(integrity_failures == 0);
    CHECK(generations_lost == 0);
    CHECK(decisions_lost == 0);
    HistoryStore store(path);
    CHECK(store.record(sample_record("after the crashes", {"x"})) > committed.back().first);  // still writable
}

TEST_CASE("crash loop: SIGKILL during export leaves nothing or the complete file", "[history][crash][export]") {
    TempDir dir;
    const std::string db = dir.file("export.sqlite");
    const std::string reference = dir.file("reference.jsonl");
    double export_ms = 0;
    {
        HistoryStore store(db);
        std::vector<GenerationRecord> batch;
        for (int i = 0; i < 2000; ++i)
            batch.push_back(sample_record("export row " + std::to_string(i) + " 天気", {"a " + std::to_string(i), "b", "c"}));
        store.record_many(batch);
        const auto start = Clock::now();
        store.export_to(reference, {});
        export_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
    const std::string expected = read_file(reference);
    REQUIRE(expected.size() > 100000);  // ~1.3 MB: an export takes ~100 ms, long enough to land kills inside it
    const int iterations = crash_iterations();
    std::mt19937 rng(7);
    int nothing = 0, complete = 0, partial = 0, killed_mid_export = 0;
    size_t temp_files_left = 0;
    const std::string target = dir.file("target.jsonl");
    for (int round = 0; round < iterations; ++round) {
        Child child = fork_child([&](int fd) {
            try {
                HistoryStore store(db);
                const int64_t ready[2] = {1, 0};
                if (::write(fd, ready, sizeof(ready)) != static_cast<ssize_t>(sizeof(ready))) ::_exit(3);
                store.export_to(target, {});
            } catch (...) {
                ::_exit(2);
            }
        });
        int64_t msg[2];
        REQUIRE(read_report(child.fd, 30000, msg));  // the child opened the store and starts exporting
        // Random moment across the export's duration (and a little past it, so some finish).
        const int max_us = static_cast<int>(export_ms * 1300) + 1000;
        const auto kill_at = Clock::now() + std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_us)(rng));
        std::this_thread::sleep_until(kill_at);  // the random kill moment itself, not a synchronisation
        if (kill_and_reap(child.pid)) ++killed_mid_export;
        ::close(child.fd);
        if (!file_exists(target)) ++nothing;
        else if (read_file(target) == expected) ++complete;
        else ++partial;
        ::unlink(target.c_str());
        for (const auto& name : dir.entries()) {  // temp files of killed exports (never the target's name)
            if (name.find(".tmp") == std::string::npos) continue;
            ++temp_files_left;
            ::unlink(dir.file(name).c_str());
        }
    }
    std::printf(
        "crash loop (export): %d iterations (export of %zu bytes takes %.0f ms), %d killed mid-export, "
        "target absent %d, complete %d, partial %d, temp files left by killed exports %zu\n",
        iterations, expected.size(), export_ms, killed_mid_export, nothing, complete, partial, temp_files_left);
    CHECK(partial == 0);
    CHECK(nothing + complete == iterations);
}
