#pragma once
// PRAGMA quick_check of a history file when it is opened, so that a damaged file (overwritten page
// headers, a bad copy) is reported instead of being read as empty rows. Small files are checked
// before the store is used; large ones on a background thread with their own read-only connection,
// so opening never blocks the app on a big file. Once damage is found, the store refuses every call.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "t5s/history_store.h"

namespace t5s::history {

class Db;

class OpenCheck {
public:
    // Checks `db`'s file: in the caller's thread (throwing Error(CorruptFile) naming the file) when it is
    // at most `foreground_max_bytes`, else in the background. Skips ":memory:", "" and empty files;
    // a negative limit skips the check.
    OpenCheck(Db& db, int64_t foreground_max_bytes);
    ~OpenCheck();  // interrupts a running background check and joins it
    OpenCheck(const OpenCheck&) = delete;
    OpenCheck& operator=(const OpenCheck&) = delete;

    HistoryCheck status() const;
    // Throws Error(CorruptFile) once the check found damage. wait: first let a running check finish
    // (export does, so that it never writes rows from a file that is about to be found damaged).
    void throw_if_corrupt(bool wait) const;

private:
    void run_background(const std::string& path);

    struct Shared;  // state the background thread shares with the store
    std::shared_ptr<Shared> shared_;
    std::thread thread_;
};

// The first problem PRAGMA quick_check reports on `db`, or "ok". SQLite errors while checking
// (SQLITE_CORRUPT / NOTADB) come back as their message.
std::string quick_check(Db& db);

}  // namespace t5s::history
