// History benchmark (not a test): fills a file database with N generations (4 candidates each,
// mixed Latin / Chinese / Japanese text), then times inserts, decisions, substring search (Latin
// and CJK, common and rare), a page deep in the list, filters, and export of every row.
//   history_bench [ROWS=100000] [DIR=a new temp dir]
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "t5s/history_store.h"

using namespace t5s;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Median of `reps` runs, in ms.
double time_ms(int reps, const std::function<void()>& fn) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto s = Clock::now();
        fn();
        t.push_back(ms_since(s));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Rng {
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    uint32_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<uint32_t>(s >> 16);
    }
};

const char* kWords[] = {"the",  "quick", "brown", "fox",  "jumps",  "over", "lazy",    "dog",    "weather",    "today",
                        "is",   "very",  "nice",  "we",   "should", "go",   "outside", "and",    "play",       "together",
                        "今天", "天气",  "很好",  "我们", "出去",   "玩吧", "東京",    "タワー", "行きました", "美味しい"};
constexpr int kNumWords = sizeof(kWords) / sizeof(kWords[0]);

std::string sentence(Rng& rng, int words) {
    std::string s;
    for (int i = 0; i < words; ++i) {
        if (i) s.push_back(' ');
        s += kWords[rng.next() % kNumWords];
    }
    return s;
}

int64_t file_size(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

}  // namespace

int main(int argc, char** argv) {
    const int rows = argc > 1 ? std::atoi(argv[1]) : 100000;
    std::string dir;
    if (argc > 2) {
        dir = argv[2];
    } else {
        std::string tmpl = "/tmp/t5s-history-bench-XXXXXX";
        if (!::mkdtemp(tmpl.data())) return 1;
        dir = tmpl;
    }
    const std::string db_path = dir + "/bench.sqlite";
    ::unlink(db_path.c_str());
    std::printf("history benchmark: %d generations x 4 candidates, db %s\n", rows, db_path.c_str());

    try {
        HistoryStore store(db_path);
        Rng rng;
        const int64_t t0 = 1700000000000;
        GenerationOptions opts;
        const std::string settings = generation_options_to_json(opts);

        // Inserts: batches of 1000 in one transaction each (batch augmentation), rare markers sprinkled in.
        auto t = Clock::now();
        std::vector<GenerationRecord> batch;
        for (int i = 0; i < rows; ++i) {
            GenerationRecord r;
            r.input = sentence(rng, 8 + static_cast<int>(rng.next() % 8));
            if (i % 10007 == 5000) r.input += " zebra";        // rare Latin marker (~10 rows)
            if (i % 9973 == 4000) r.input += " 鳳凰が飛んだ";  // rare CJK marker (~10 rows)
            for (int c = 0; c < 4; ++c)
                r.candidates.push_back({sentence(rng, 8 + static_cast<int>(rng.next() % 8)), -0.1 * (c + 1)});
            r.settings_json = settings;
            r.seed = i;
            r.model_path = (i % 2) ? "models/t5-small" : "models/mt5-base";
            r.model_hash = (i % 2) ? "sha256:aaaa" : "sha256:bbbb";
            r.precision = "bf16";
            r.device = "cpu";
            r.total_ms = 50.0;
            r.origin = "batch:bench.tsv#" + std::to_string(i);
            r.created_at_ms = t0 + static_cast<int64_t>(i) * 1000;
            batch.push_back(std::move(r));
            if (batch.size() == 1000 || i + 1 == rows) {
                store.record_many(batch);
                batch.clear();
            }
        }
        const double insert_ms = ms_since(t);
        std::printf("insert %d generations (batches of 1000): %.0f ms (%.1f us/generation)\n", rows, insert_ms,
                    1000.0 * insert_ms / rows);

        // Single-generation transactions (the interactive path).
        t = Clock::now();
        GenerationRecord one;
        one.input = "single insert";
        one.candidates = {{"a", -1.0}, {"b", -2.0}, {"c", -3.0}, {"d", -4.0}};
        for (int i = 0; i < 1000; ++i) store.record(one);
        std::printf("insert 1000 generations one transaction each: %.3f ms/generation\n", ms_since(t) / 1000.0);

        // Decisions on ~10% of generations.
        t = Clock::now();
        int decisions = 0;
        for (int id = 1; id <= rows; id += 10, ++decisions) {
            if (id % 30 == 1) store.edit(id, 1, "edited " + std::to_string(id));
            else store.accept(id, 0);
        }
        std::printf("record %d decisions (one transaction each): %.3f ms/decision\n", decisions, ms_since(t) / decisions);

        auto page_ms = [&store](HistoryQuery q, size_t* got = nullptr) {
            return time_ms(5, [&] {
                auto page = store.list(q);
                if (got) *got = page.generations.size();
            });
        };
        // Prints the median time of a page query and how many rows it returned.
        auto report = [&page_ms](const char* what, const HistoryQuery& query) {
            size_t got = 0;
            const double ms = page_ms(query, &got);
            std::printf("%s: %.2f ms (%zu rows)\n", what, ms, got);
        };
        HistoryQuery q;
        q.limit = 50;
        report("first page (50, with candidates)", q);
        q.after_id = 1000;  // deep: the last ~1000 rows of the newest-first list
        report("page deep in the list (after id 1000)", q);
        q.after_id = 0;
        q.filter.text = "quick fox";
        report("search common Latin 'quick fox', first page", q);
        q.filter.text = "ZEBRA";
        report("search rare Latin 'ZEBRA' (scans all rows)", q);
        q.filter.text = "天气 很好";
        report("search common CJK '天气 很好', first page", q);
        q.filter.text = "鳳凰";
        report("search rare CJK '鳳凰' (scans all rows)", q);
        q.filter.text = "no such text anywhere";
        report("search with no match (full scan)", q);
        HistoryFilter cf;
        cf.text = "鳳凰";
        std::printf("count rare CJK: %.2f ms\n", time_ms(5, [&] { store.count(cf); }));
        q.filter = {};
        q.filter.accepted_only = true;
        report("filter accepted-only, first page", q);
        q.filter = {};
        q.filter.model = "sha256:aaaa";
        q.filter.from_ms = t0 + 40000LL * 1000;
        q.filter.to_ms = t0 + 41000LL * 1000;
        report("filter model + date range (1000 s window)", q);
        std::printf("count all: %.2f ms\n", time_ms(5, [&] { store.count(); }));
        std::printf("find_by_origin: %.3f ms\n", time_ms(5, [&] { store.find_by_origin("batch:bench.tsv#77777"); }));

        auto export_run = [&](const char* name, ExportOptions o) {
            const std::string out = dir + "/" + name;
            ::unlink(out.c_str());
            auto s = Clock::now();
            const ExportResult r = store.export_to(out, o);
            std::printf("export %-28s %8lld rows %7.1f MB in %.2f s\n", name, static_cast<long long>(r.rows_written),
                        r.bytes_written / 1e6, ms_since(s) / 1000.0);
            ::unlink(out.c_str());
        };
        ExportOptions o;
        o.format = ExportFormat::Jsonl;
        export_run("all.jsonl", o);
        o.format = ExportFormat::Csv;
        export_run("all.csv", o);
        o.format = ExportFormat::Tsv;
        o.dedupe = true;
        o.include_originals = true;
        export_run("all+originals+dedupe.tsv", o);
        o.format = ExportFormat::Jsonl;
        o.filter.accepted_only = true;
        export_run("accepted.jsonl", o);

        std::printf("database size: %.1f MB\n", file_size(db_path) / 1e6);
        t = Clock::now();
        const std::string ic = store.integrity_check();
        std::printf("integrity_check: %s in %.0f ms\n", ic.c_str(), ms_since(t));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "history_bench: %s\n", e.what());
        return 1;
    }
    auto t = Clock::now();
    { HistoryStore reopen(db_path); }
    std::printf("open existing %d-row history: %.1f ms (with the open-time quick_check up to 64 MB)\n", rows, ms_since(t));
    for (int64_t limit : {int64_t{-1}, int64_t{0}}) {  // check off; check in the background (always)
        HistoryStoreOptions o;
        o.foreground_check_max_bytes = limit;
        t = Clock::now();
        { HistoryStore reopen(db_path, o); }
        std::printf("open existing %d-row history, %s: %.1f ms\n", rows, limit < 0 ? "check off" : "check in the background",
                    ms_since(t));
    }
    if (argc <= 2) {
        ::unlink(db_path.c_str());
        ::rmdir(dir.c_str());
    }
    return 0;
}
