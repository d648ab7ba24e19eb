#include "history/open_check.h"

#include <sys/stat.h>

#include <condition_variable>

#include "history/sqlite_db.h"
#include "t5s/error.h"

namespace t5s::history {

struct OpenCheck::Shared {
    mutable std::mutex mutex;
    mutable std::condition_variable done;
    HistoryCheck result;
    sqlite3* running = nullptr;  // the background connection while it checks (for sqlite3_interrupt)
    bool stopping = false;
};

namespace {

int64_t file_size(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// quick_check's answer may span lines ("*** in database main ***\nPage 14: ..."): one line, without the banner.
std::string one_line(std::string problem) {
    const std::string banner = "*** in database main ***";
    if (problem.rfind(banner, 0) == 0) problem.erase(0, banner.size());
    std::string out;
    for (char c : problem) {
        if (c == '\n' || c == '\r') {
            if (!out.empty() && out.back() != ' ') out += "; ";
        } else {
            out.push_back(c);
        }
    }
    while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
    while (!out.empty() && (out.front() == ' ' || out.front() == ';')) out.erase(0, 1);
    return out;
}

std::string corrupt_message(const std::string& path, const std::string& problem) {
    return "history database " + path + " is damaged (SQLite quick_check: " + one_line(problem) +
           "); restore a backup or export what is readable with the sqlite3 tool's .recover";
}

}  // namespace

std::string quick_check(Db& db) {
    try {
        Stmt s(db, "PRAGMA quick_check(1)");
        return s.step() ? s.text(0) : std::string("no result");
    } catch (const Error& e) {
        if (e.code() == ErrorCode::CorruptFile) return e.what();
        throw;
    }
}

OpenCheck::OpenCheck(Db& db, int64_t foreground_max_bytes) : shared_(std::make_shared<Shared>()) {
    const std::string& path = db.path();
    const int64_t size = path.empty() || path == ":memory:" ? 0 : file_size(path);
    if (foreground_max_bytes < 0 || size == 0) return;  // state stays NotChecked
    if (size <= foreground_max_bytes) {
        const std::string problem = quick_check(db);
        if (problem != "ok") throw Error(ErrorCode::CorruptFile, corrupt_message(path, problem));
        shared_->result.state = HistoryCheck::State::Ok;
        return;
    }
    shared_->result.state = HistoryCheck::State::Running;
    thread_ = std::thread([this, path] { run_background(path); });
}

void OpenCheck::run_background(const std::string& path) {
    HistoryCheck result;
    try {
        Db check(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
        // Published for sqlite3_interrupt while checking; withdrawn (by `published`'s destructor)
        // before `check` closes, so the store's destructor never interrupts a closed handle.
        struct Published {
            Shared& shared;
            ~Published() {
                std::lock_guard<std::mutex> lock(shared.mutex);
                shared.running = nullptr;
            }
        } published{*shared_};
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            if (shared_->stopping) return;
            shared_->running = check.handle();
        }
        const std::string problem = quick_check(check);
        result.state = problem == "ok" ? HistoryCheck::State::Ok : HistoryCheck::State::Corrupt;
        if (problem != "ok") result.message = corrupt_message(path, problem);
    } catch (const Error& e) {
        // Interrupted (store closing) or unreadable: nothing proven either way, unless SQLite said corrupt.
        result.state = e.code() == ErrorCode::CorruptFile ? HistoryCheck::State::Corrupt : HistoryCheck::State::NotChecked;
        if (e.code() == ErrorCode::CorruptFile) result.message = corrupt_message(path, e.what());
    } catch (...) {
        result.state = HistoryCheck::State::NotChecked;
    }
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->result = result;
    shared_->done.notify_all();
}

OpenCheck::~OpenCheck() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->stopping = true;
        if (shared_->running) sqlite3_interrupt(shared_->running);
    }
    thread_.join();
}

HistoryCheck OpenCheck::status() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->result;
}

void OpenCheck::throw_if_corrupt(bool wait) const {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    if (wait) shared_->done.wait(lock, [&] { return shared_->result.state != HistoryCheck::State::Running; });
    if (shared_->result.state == HistoryCheck::State::Corrupt) throw Error(ErrorCode::CorruptFile, shared_->result.message);
}

}  // namespace t5s::history
