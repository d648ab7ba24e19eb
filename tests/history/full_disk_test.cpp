// Full disk: the history and export on a tiny tmpfs. Writing until the disk is full gives
// a one-line error naming the file; every row committed before stays readable, the file passes
// integrity_check, the same store keeps working once space is freed, and export leaves no file.
// Skipped (with the reason, ctest shows it as skipped) where a tmpfs cannot be mounted (not root).
#include <catch2/catch.hpp>

#include "../skip.h"

#include "../tiny_tmpfs.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "test_util.h"

using namespace t5s;
using namespace t5s::test;

namespace {

bool one_line_naming(const std::string& message, const std::string& path) {
    return message.find('\n') == std::string::npos && message.find(path) != std::string::npos;
}

}  // namespace

TEST_CASE("history writes into a full disk: clear error, nothing lost, store keeps working", "[history][full_disk]") {
    TinyTmpfs disk(6 << 20);                    // room for the WAL (SQLite checkpoints it at ~4 MB) and some rows
    if (!disk.mounted()) T5S_SKIP(disk.why());  // ctest history_full_disk: skipped, with the reason
    const std::string path = disk.file("history.sqlite");
    const std::string filler = disk.file("filler.bin");
    write_file(filler, std::string(1 << 20, 'x'));  // freed later to give the store room again

    HistoryStore store(path);
    std::vector<std::pair<GenerationId, int>> committed;
    std::string error;
    size_t recorded = 0;  // generations saved: the disk may fill at the record or at the accept after it
    for (int i = 0; i < 100000 && error.empty(); ++i) {
        try {
            const GenerationId id = store.record(sample_record("full disk row " + std::to_string(i) + std::string(200, 'p'),
                                                               {"candidate " + std::to_string(i), "second"}));
            ++recorded;
            store.accept(id, 0);
            committed.emplace_back(id, i);
        } catch (const Error& e) {
            error = e.what();
        }
    }
    INFO("error: " << error);
    REQUIRE_FALSE(error.empty());
    CHECK(one_line_naming(error, path));
    CHECK(error.find("disk full") != std::string::npos);
    REQUIRE(committed.size() > 50);

    auto all_there = [&](HistoryStore& s) {
        size_t bad = 0;
        for (const auto& [id, i] : committed) {
            auto g = s.get(id);
            if (!g || g->input.rfind("full disk row " + std::to_string(i), 0) != 0 ||
                g->candidates.at(0).state != CandidateState::Accepted)
                ++bad;
        }
        return bad;
    };
    CHECK(all_there(store) == 0);  // the same store still reads everything committed
    CHECK(store.integrity_check() == "ok");
    // Export onto the full disk: fails naming the target, no file (not even a temp) left behind.
    const std::string out = disk.file("export.jsonl");
    try {
        store.export_to(out, {});
        FAIL("export onto a full disk succeeded");
    } catch (const Error& e) {
        CHECK(one_line_naming(e.what(), out));
        CHECK(std::string(e.what()).find("disk full") != std::string::npos);
    }
    CHECK_FALSE(file_exists(out));

    ::unlink(filler.c_str());  // space again: the same store writes on
    CHECK(store.record(sample_record("after space was freed", {"x"})) > committed.back().first);
    const auto r = store.export_to(out, {});
    // Two candidates per saved generation (one whose accept hit the full disk is saved, undecided),
    // and the one written after.
    CHECK(r.rows_written == static_cast<int64_t>(2 * recorded + 1));

    HistoryStore reopened(path);
    CHECK(reopened.integrity_check() == "ok");
    CHECK(all_there(reopened) == 0);
    WARN("full disk (6 MB tmpfs): " << committed.size() << " generations committed before: " << error);
}
