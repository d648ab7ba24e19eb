#include "history/sqlite_db.h"

#include <sys/stat.h>
#include <cerrno>
#include <cstring>

#include "t5s/error.h"

namespace t5s::history {

namespace {

ErrorCode code_for(int rc) {
    switch (rc & 0xff) {
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
        case SQLITE_FORMAT: return ErrorCode::CorruptFile;
        case SQLITE_NOMEM: return ErrorCode::OutOfMemory;
        case SQLITE_CANTOPEN: return ErrorCode::FileNotFound;
        case SQLITE_INTERRUPT: return ErrorCode::Cancelled;
        case SQLITE_CONSTRAINT:
        case SQLITE_MISMATCH:
        case SQLITE_RANGE:
        case SQLITE_TOOBIG: return ErrorCode::InvalidArgument;
        default: return ErrorCode::Internal;
    }
}

std::string parent_dir(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

}  // namespace

Db::Db(const std::string& path, int flags) : path_(path) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        if ((rc & 0xff) == SQLITE_CANTOPEN && path != ":memory:") {
            struct stat st {};
            const std::string dir = parent_dir(path);
            if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
                throw Error(ErrorCode::FileNotFound, "history database " + path + ": directory " + dir + " does not exist");
            if (::stat(path.c_str(), &st) != 0)
                throw Error(ErrorCode::FileNotFound, "history database " + path + " does not exist");
        }
        throw Error(code_for(rc), "history database " + path + ": cannot open (" + message + ")");
    }
    sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() {
    if (db_) sqlite3_close_v2(db_);
}

void Db::fail(int rc, const std::string& what) const {
    const int primary = rc & 0xff;
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_FORMAT)
        throw Error(ErrorCode::CorruptFile,
                    "history database " + path_ + " is corrupt or not a T5 Studio history (" + message + ")");
    if (primary == SQLITE_FULL)
        throw Error(ErrorCode::Internal, "history database " + path_ + ": disk full while " + what +
                                             " (this change was not saved; everything saved before is intact)");
    if (primary == SQLITE_READONLY)
        throw Error(ErrorCode::InvalidArgument, "history database " + path_ + " is read-only (" + message + ")");
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        throw Error(ErrorCode::Internal, "history database " + path_ + " is locked by another process (" + message + ")");
    throw Error(code_for(rc), "history database " + path_ + ": " + what + " failed (" + message + ")");
}

void Db::exec(const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (err) sqlite3_free(err);
    if (rc != SQLITE_OK) fail(rc, "executing SQL");
}

int64_t Db::query_int(const char* sql) {
    Stmt stmt(*this, sql);
    return stmt.step() ? stmt.int64(0) : 0;
}

std::string Db::query_text(const char* sql) {
    Stmt stmt(*this, sql);
    return stmt.step() ? stmt.text(0) : std::string();
}

Stmt::Stmt(Db& db, const char* sql) : db_(db) {
    int rc = sqlite3_prepare_v2(db.handle(), sql, -1, &stmt_, nullptr);
    if (rc != SQLITE_OK) db_.fail(rc, "preparing a query");
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::bind(int index, int64_t value) {
    int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) db_.fail(rc, "binding a parameter");
    return *this;
}

Stmt& Stmt::bind(int index, double value) {
    int rc = sqlite3_bind_double(stmt_, index, value);
    if (rc != SQLITE_OK) db_.fail(rc, "binding a parameter");
    return *this;
}

Stmt& Stmt::bind(int index, const std::string& value) {
    int rc = sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) db_.fail(rc, "binding a parameter");
    return *this;
}

Stmt& Stmt::bind_null(int index) {
    int rc = sqlite3_bind_null(stmt_, index);
    if (rc != SQLITE_OK) db_.fail(rc, "binding a parameter");
    return *this;
}

bool Stmt::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(stmt_);
    db_.fail(rc, "running a query");
}

void Stmt::run() {
    while (step()) {
    }
}

void Stmt::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Stmt::real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Stmt::text(int column) const {
    const unsigned char* p = sqlite3_column_text(stmt_, column);
    int n = sqlite3_column_bytes(stmt_, column);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

bool Stmt::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    db_.exec("COMMIT");
    done_ = true;
}

ReadTransaction::ReadTransaction(Db& db) : db_(db) { db_.exec("BEGIN"); }

ReadTransaction::~ReadTransaction() { sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr); }

}  // namespace t5s::history
