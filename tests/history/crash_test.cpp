// Crash safety: a child process records generations (and decisions) in a loop and reports each
// committed id through a pipe; the parent kills it with SIGKILL mid-write, then checks that the
// database passes PRAGMA integrity_check and holds every generation the child reported.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <poll.h>
#include <sys/wait.h>
#include <thread>

#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using t5s::test::sample_record;
using t5s::test::TempDir;

namespace {

[[noreturn]] void child_writer(const std::string& path, int fd) {
    try {
        HistoryStore store(path);
        for (int64_t i = 0;; ++i) {
            auto r = sample_record("crash row " + std::to_string(i) + " 中文", {"c0 " + std::to_string(i), "c1", "c2"});
            r.origin = "crash#" + std::to_string(i);
            const GenerationId id = store.record(r);
            if (i % 3 == 0) store.accept(id, static_cast<int>(i % 3));
            const int64_t msg[2] = {id, i};
            if (::write(fd, msg, sizeof(msg)) != static_cast<ssize_t>(sizeof(msg))) ::_exit(3);
        }
    } catch (...) {
        ::_exit(2);
    }
}

}  // namespace

TEST_CASE("SIGKILL while writing loses no committed generation and leaves an intact file", "[history][crash]") {
    TempDir dir;
    const std::string path = dir.file("crash.sqlite");
    { HistoryStore init(path); }  // schema created before the child starts
    for (int round = 0; round < 3; ++round) {
        DYNAMIC_SECTION("round " << round) {
            int fds[2];
            REQUIRE(::pipe(fds) == 0);
            std::fflush(nullptr);
            const pid_t pid = ::fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                ::close(fds[0]);
                child_writer(path, fds[1]);
            }
            ::close(fds[1]);
            std::vector<std::pair<int64_t, int64_t>> committed;
            auto read_some = [&](int timeout_ms) {
                pollfd p{fds[0], POLLIN, 0};
                if (::poll(&p, 1, timeout_ms) <= 0) return false;
                int64_t msg[2];
                const ssize_t n = ::read(fds[0], msg, sizeof(msg));
                if (n != static_cast<ssize_t>(sizeof(msg))) return false;
                committed.emplace_back(msg[0], msg[1]);
                return true;
            };
            // Let it write for a while (and at least 50 generations), then kill it mid-loop.
            const auto start = std::chrono::steady_clock::now();
            while ((committed.size() < 50 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300 + 200 * round)) &&
                   std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
                if (!read_some(1000)) break;
            }
            REQUIRE(::kill(pid, SIGKILL) == 0);
            int status = 0;
            REQUIRE(::waitpid(pid, &status, 0) == pid);
            CHECK(WIFSIGNALED(status));
            while (read_some(0)) {
            }
            ::close(fds[0]);
            REQUIRE(committed.size() >= 50);

            HistoryStore store(path);
            CHECK(store.integrity_check() == "ok");
            size_t missing = 0, wrong = 0;
            for (const auto& [id, i] : committed) {
                auto g = store.get(id);
                if (!g) {
                    ++missing;
                    continue;
                }
                const bool ok = g->input == "crash row " + std::to_string(i) + " 中文" && g->candidates.size() == 3 &&
                                g->candidates[0].text == "c0 " + std::to_string(i) &&
                                (i % 3 != 0 || g->candidates[0].state == CandidateState::Accepted);
                if (!ok) ++wrong;
            }
            CHECK(missing == 0);
            CHECK(wrong == 0);
            // The store is still writable after the crash.
            CHECK(store.record(sample_record("after crash", {"x"})) > committed.back().first);
        }
    }
}
