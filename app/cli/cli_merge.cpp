// t5studio merge --out FILE PART...: the JSONL parts that sharded `generate --input` runs wrote,
// as one file in global row order (a k-way merge: each part is already in ascending order, so
// memory stays O(parts) for ten million rows). Missing or duplicated rows make it fail, listing
// them, and leave no output file behind.
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>

#include "cli/commands.h"
#include "common/args.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/input_reader.h"

namespace t5s::cli {
namespace {

// One part, read a line at a time under the input reader's line rule (t5s::LineReader: LF / CRLF,
// a BOM dropped, blank lines skipped).
struct PartReader {
    std::string path;
    std::ifstream in;
    LineReader lines{in};
    int64_t index = -1;       // global row index of `line` (-1 = exhausted)
    int64_t total_rows = -1;  // as the line states it
    std::string line;

    bool next() {
        int64_t previous = index;
        while (lines.next(&line)) {
            if (is_blank_line(line)) continue;
            const std::string where = path + ":" + std::to_string(lines.line_no());
            if (!lines.ended_with_newline())
                throw Error(ErrorCode::InvalidArgument,
                            where + ": last line is cut off (the shard was killed mid-write: rerun it)");
            nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
            if (j.is_discarded() || !j.is_object() || !j.contains("index") || !j["index"].is_number_integer() ||
                j["index"].get<int64_t>() < 0)
                throw Error(ErrorCode::InvalidArgument, where + ": not a generate --input output line (needs \"index\")");
            index = j["index"].get<int64_t>();
            total_rows = j.value("total_rows", int64_t(-1));
            if (index <= previous && previous >= 0)
                throw Error(ErrorCode::InvalidArgument, where + ": row " + std::to_string(index) + " after row " +
                                                            std::to_string(previous) +
                                                            " (a part must be in ascending order, as generate writes it)");
            return true;
        }
        index = -1;
        return false;
    }
};

// "3-5, 9, 12-40" (the first `limit` ranges, then "...").
std::string ranges_text(const std::vector<int64_t>& rows, size_t limit = 20) {
    std::string out;
    size_t ranges = 0;
    for (size_t i = 0; i < rows.size();) {
        size_t j = i;
        while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
        if (ranges++ == limit) return out + ", ...";
        out += (out.empty() ? "" : ", ") + std::to_string(rows[i]) + (j > i ? "-" + std::to_string(rows[j]) : "");
        i = j + 1;
    }
    return out;
}

}  // namespace

const CommandSpec kMergeSpec = {
    "merge",
    "merge the JSONL parts of a sharded generate --input run in global row order (atomic)",
    {
        {"out", "FILE", "the merged file; nothing is written when rows are missing or duplicated"},
        {"rows", "N", "expect at least N rows (0..N-1) in all; the total_rows the parts state count too"},
        {"parts", "PART", "part files written by generate --input --shard (each in ascending row order)", kPositional},
        {"json", "", "the result line also lists the part files read: {\"out\", \"rows\", \"parts\", \"part_files\"}"},
    }};

int run_merge(const Argv& argv) {
    const Args a(argv, kMergeSpec);
    const std::vector<std::string>& parts = a.all("parts");
    const std::string out_path = a.require("out");
    if (parts.empty()) throw UsageError("give the part files: t5studio merge --out FILE PART...");
    int64_t expected_rows = a.get_int64("rows", -1);

    std::vector<std::unique_ptr<PartReader>> readers;
    using Head = std::pair<int64_t, size_t>;  // (row, reader)
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    for (const auto& p : parts) {
        auto r = std::make_unique<PartReader>();
        r->path = p;
        r->in.open(p, std::ios::binary);
        if (!r->in) throw Error(ErrorCode::FileNotFound, p + ": cannot open part file");
        if (r->next()) heads.push({r->index, readers.size()});
        readers.push_back(std::move(r));
    }
    AtomicFile out(out_path, true, "merged file");
    std::vector<int64_t> missing, duplicated;
    int64_t next_row = 0, rows = 0;
    while (!heads.empty()) {
        auto [row, k] = heads.top();
        heads.pop();
        PartReader& r = *readers[k];
        if (r.total_rows >= 0) expected_rows = std::max(expected_rows, r.total_rows);
        if (row < next_row) {
            duplicated.push_back(row);
        } else {
            for (; next_row < row; ++next_row) missing.push_back(next_row);
            out.write(r.line);
            out.write("\n");
            next_row = row + 1;
            ++rows;
        }
        if (r.next()) heads.push({r.index, k});
    }
    for (; next_row < expected_rows; ++next_row) missing.push_back(next_row);
    if (!missing.empty() || !duplicated.empty()) {
        std::string msg;
        if (!missing.empty()) msg += std::to_string(missing.size()) + " missing rows: " + ranges_text(missing);
        if (!duplicated.empty())
            msg += std::string(msg.empty() ? "" : "; ") + std::to_string(duplicated.size()) +
                   " duplicated rows: " + ranges_text(duplicated);
        throw Error(ErrorCode::InvalidArgument, out_path + " not written: " + msg);
    }
    out.commit();
    // The result is JSON with or without --json (its shape predates the flag); --json adds the files.
    nlohmann::json result{{"out", out_path}, {"rows", rows}, {"parts", parts.size()}};
    if (a.has("json")) result["part_files"] = parts;
    std::cout << result.dump() << "\n";
    return 0;
}

}  // namespace t5s::cli
