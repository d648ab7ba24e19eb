#pragma once
// The history tests' one fixture header: a temp directory removed at scope exit, whole-file I/O,
// sample records, SQL run on a file as another writer would, and JSONL text read back as rows.
// Test files take it all with `using namespace t5s::test;`.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5s/history_store.h"

namespace t5s::test {

class TempDir {
public:
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/t5s-history-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() { remove_tree(path_); }
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    std::vector<std::string> entries() const {  // names in the directory (not . / ..), sorted
        std::vector<std::string> out;
        if (DIR* d = ::opendir(path_.c_str())) {
            while (dirent* e = ::readdir(d)) {
                std::string n = e->d_name;
                if (n != "." && n != "..") out.push_back(n);
            }
            ::closedir(d);
        }
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    static void remove_tree(const std::string& path) {
        if (DIR* d = ::opendir(path.c_str())) {
            while (dirent* e = ::readdir(d)) {
                std::string n = e->d_name;
                if (n == "." || n == "..") continue;
                const std::string child = path + "/" + n;
                struct stat st {};
                if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(child);
                else ::unlink(child.c_str());
            }
            ::closedir(d);
        }
        ::rmdir(path.c_str());
    }
    std::string path_;
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_file(const std::string& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
}

inline bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

inline GenerationRecord sample_record(const std::string& input, std::vector<std::string> candidates,
                                      int64_t created_at_ms = 1714564800000, const std::string& model = "models/tiny") {
    GenerationRecord r;
    r.input = input;
    double score = -0.5;
    for (auto& c : candidates) {
        r.candidates.push_back({c, score});
        score -= 0.75;
    }
    GenerationOptions opts;
    opts.do_sample = true;
    opts.seed = 42;
    r.settings_json = generation_options_to_json(opts);
    r.seed = 42;
    r.model_path = model;
    r.model_hash = "sha256:" + model;
    r.precision = "fp32";
    r.device = "cpu";
    r.total_ms = 12.5;
    r.timings_json = R"({"encode_ms":2.5,"decode_ms":10})";
    r.origin = "ui";
    r.created_at_ms = created_at_ms;
    return r;
}

// Runs `sql` on the file as another writer (an older T5 Studio, a damaged copy) would.
inline void exec_sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    INFO((err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

// One JSON value per line of `text` (an export's JSONL); Json = nlohmann::ordered_json keeps key order.
template <class Json = nlohmann::json>
std::vector<Json> jsonl_rows_of(const std::string& text) {
    std::vector<Json> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) rows.push_back(Json::parse(line));
    return rows;
}

template <class Json = nlohmann::json>
std::vector<Json> jsonl_rows(const std::string& path) {
    return jsonl_rows_of<Json>(read_file(path));
}

}  // namespace t5s::test
