#pragma once
// A thin RAII layer over the SQLite C API for the history store: one connection, prepared
// statements with bound parameters only, transactions, and SQLite errors turned into t5s::Error
// naming the database file.
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace t5s::history {

class Db;

class Stmt {
public:
    Stmt(Db& db, const char* sql);
    ~Stmt();
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    // Binding (1-based index, as in SQLite). Returns *this for chaining.
    Stmt& bind(int index, int64_t value);
    Stmt& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Stmt& bind(int index, double value);
    Stmt& bind(int index, const std::string& value);  // bound as TEXT, copied by SQLite
    Stmt& bind_null(int index);

    bool step();   // true: a row is available; false: done
    void run();    // step until done (for statements without rows)
    void reset();  // reset + clear bindings, ready for reuse

    int64_t int64(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    bool is_null(int column) const;

private:
    Db& db_;
    sqlite3_stmt* stmt_ = nullptr;
};

class Db {
public:
    // Opens (creating if missing). Throws t5s::Error naming `path`.
    Db(const std::string& path, int flags);
    ~Db();
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    sqlite3* handle() const { return db_; }
    const std::string& path() const { return path_; }

    void exec(const char* sql);          // SQL without parameters (DDL, pragmas)
    int64_t query_int(const char* sql);  // first column of the first row (0 if none)
    std::string query_text(const char* sql);
    int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
    int changes() const { return sqlite3_changes(db_); }

    // Throws the t5s::Error for SQLite result `rc` with `what` as context.
    [[noreturn]] void fail(int rc, const std::string& what) const;

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() was called.
class Transaction {
public:
    explicit Transaction(Db& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

private:
    Db& db_;
    bool done_ = false;
};

// A deferred read transaction (consistent snapshot across several statements).
class ReadTransaction {
public:
    explicit ReadTransaction(Db& db);
    ~ReadTransaction();
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

private:
    Db& db_;
};

}  // namespace t5s::history
