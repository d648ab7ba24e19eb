// AtomicFile cleans up after writers that were killed mid-write, and never after a live one.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "t5s/atomic_file.h"

namespace fs = std::filesystem;

namespace {

void make_old_file(const fs::path& path) {
    std::ofstream(path) << "partial";
    const timespec two_minutes_ago[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), two_minutes_ago, 0) == 0);
}

}  // namespace

TEST_CASE("atomic file: temp files of killed writers are removed, a live writer's are not", "[atomic_file]") {
    const fs::path dir = fs::temp_directory_path() / ("t5s_atomic_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path abandoned = dir / ".out.jsonl.tmp-AAAAAA";  // its writer died: nobody holds the lock
    const fs::path live = dir / ".out.jsonl.tmp-BBBBBB";       // a writer still at work holds the lock
    const fs::path recent = dir / ".out.jsonl.tmp-CCCCCC";     // just created: its writer may not lock it yet
    const fs::path other = dir / ".other.jsonl.tmp-DDDDDD";    // another target's
    make_old_file(abandoned);
    make_old_file(live);
    make_old_file(other);
    std::ofstream(recent) << "partial";
    const int live_fd = ::open(live.c_str(), O_RDONLY);
    REQUIRE(live_fd >= 0);
    REQUIRE(::flock(live_fd, LOCK_EX | LOCK_NB) == 0);

    t5s::AtomicFile file((dir / "out.jsonl").string(), true);
    file.write("{}\n");
    file.commit();

    CHECK_FALSE(fs::exists(abandoned));
    CHECK(fs::exists(live));
    CHECK(fs::exists(recent));
    CHECK(fs::exists(other));
    CHECK(fs::file_size(dir / "out.jsonl") == 3);
    ::close(live_fd);
    fs::remove_all(dir);
}

namespace {

mode_t mode_of(const fs::path& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

void write_atomic(const fs::path& path, const std::string& text) {
    t5s::AtomicFile file(path.string(), /*overwrite=*/true);
    file.write(text);
    file.commit();
}

// Sets the umask for one test case and restores it (the test runner has no other threads).
struct ScopedUmask {
    explicit ScopedUmask(mode_t mask) : old(::umask(mask)) {}
    ~ScopedUmask() { ::umask(old); }
    mode_t old;
};

}  // namespace

TEST_CASE("atomic file: a new file honours the umask, a replaced one keeps its mode", "[atomic_file]") {
    const fs::path dir = fs::temp_directory_path() / ("t5s_atomic_mode_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    {
        ScopedUmask mask(077);
        write_atomic(dir / "private.jsonl", "{}\n");
        CHECK(mode_of(dir / "private.jsonl") == 0600);
    }
    {
        ScopedUmask mask(022);
        write_atomic(dir / "shared.jsonl", "{}\n");
        CHECK(mode_of(dir / "shared.jsonl") == 0644);
        // Replacing (export --force): the existing file's mode, whatever the umask says.
        for (const mode_t mode : {mode_t(0600), mode_t(0640)}) {
            const fs::path path = dir / ("existing_" + std::to_string(mode) + ".jsonl");
            std::ofstream(path) << "old\n";
            REQUIRE(::chmod(path.c_str(), mode) == 0);
            write_atomic(path, "new content\n");
            CHECK(mode_of(path) == mode);
            CHECK(fs::file_size(path) == 12);
        }
    }
    fs::remove_all(dir);
}
