#pragma once
// The SQL for a HistoryFilter (a WHERE clause over `generations g` with its parameters) and the
// column list + row reader for a StoredGeneration. Shared by listing, counting and export.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "history/sqlite_db.h"
#include "t5s/history_store.h"

namespace t5s::history {

struct Where {
    std::string sql;  // "" or " WHERE ..."
    std::vector<std::function<void(Stmt&, int)>> binders;

    void add(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
    void bind_text(std::string value);
    void bind_int(int64_t value);
    int apply(Stmt& stmt) const;  // binds in order; returns the next free parameter index
    std::string next_param() const { return "?" + std::to_string(binders.size() + 1); }
};

Where build_where(const HistoryFilter& filter);

// Columns read_generation expects, in its order (generations aliased as g).
extern const char* const kGenerationColumns;
StoredGeneration read_generation(const Stmt& s);  // candidates left empty

}  // namespace t5s::history
