#include "cli/shard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/args.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"
#include "t5s/input_reader.h"
#include "t5s/settings_fields.h"

namespace t5s::cli {
namespace {

int parse_count(const std::string& what, const std::string& text, int min) {
    try {
        size_t used = 0;
        const long v = std::stol(text, &used);
        if (used == text.size() && v >= min && v <= 1000000) return static_cast<int>(v);
    } catch (const std::exception&) {
    }
    throw UsageError(range_message(what, from_to(min, 1000000), text));
}

}  // namespace

Shard parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    if (slash == std::string::npos) throw UsageError("--shard " + text + ": expected I/N, e.g. 0/3");
    Shard s;
    s.index = parse_count("--shard I", text.substr(0, slash), 0);
    s.count = parse_count("--shard N", text.substr(slash + 1), 1);
    if (s.index >= s.count) throw UsageError("--shard " + text + ": I must be below N");
    return s;
}

Shard shard_from_env(const std::function<const char*(const char*)>& getenv, int shards) {
    Shard s;
    if (const char* id = getenv("SLURM_ARRAY_TASK_ID")) {
        const char* count = getenv("SLURM_ARRAY_TASK_COUNT");
        const char* min = getenv("SLURM_ARRAY_TASK_MIN");
        if (!count || !min)
            throw UsageError(
                "--shard-from-env: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT/SLURM_ARRAY_TASK_MIN are not");
        s.count = parse_count("SLURM_ARRAY_TASK_COUNT", count, 1);
        s.index = parse_count("SLURM_ARRAY_TASK_ID", id, 0) - parse_count("SLURM_ARRAY_TASK_MIN", min, 0);
        if (s.index < 0 || s.index >= s.count)
            throw UsageError(std::string("--shard-from-env: SLURM_ARRAY_TASK_ID=") + id + " minus SLURM_ARRAY_TASK_MIN=" + min +
                             " is not below SLURM_ARRAY_TASK_COUNT=" + count + " (use a contiguous --array=0-" +
                             std::to_string(s.count - 1) + ", no step)");
        if (shards > 0 && shards != s.count)
            throw UsageError("--shards " + std::to_string(shards) + " disagrees with SLURM_ARRAY_TASK_COUNT=" + count);
        return s;
    }
    if (const char* index = getenv("JOB_COMPLETION_INDEX")) {
        if (shards < 1) throw UsageError("--shard-from-env with JOB_COMPLETION_INDEX needs --shards N (the Job's completions)");
        s.count = shards;
        s.index = parse_count("JOB_COMPLETION_INDEX", index, 0);
        if (s.index >= s.count)
            throw UsageError(std::string("JOB_COMPLETION_INDEX=") + index + " is not below --shards " + std::to_string(shards));
        return s;
    }
    throw UsageError(
        "--shard-from-env: neither SLURM_ARRAY_TASK_ID (Slurm array) nor JOB_COMPLETION_INDEX (Kubernetes Indexed Job) is set");
}

namespace {

// Reads an --out file line by line: each whole line with its global row index. A last line without
// its newline (a write cut by a kill) is reported as cut = true and not passed on.
template <class OnLine>
bool for_each_output_line(const std::string& out_path, const Shard& shard, int64_t batch_size, int64_t total_rows,
                          OnLine&& on_line) {
    std::ifstream in(out_path, std::ios::binary);
    LineReader lines(in);  // the input reader's line rule: LF / CRLF, a BOM dropped
    std::string line;
    while (lines.next(&line)) {
        if (!lines.ended_with_newline()) return true;  // no final newline
        if (is_blank_line(line)) continue;
        const std::string where = out_path + ":" + std::to_string(lines.line_no());
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("index") || !j["index"].is_number_integer())
            throw Error(ErrorCode::InvalidArgument,
                        where + ": not a generate output line (no \"index\"); is --out the right file?");
        const int64_t row = j["index"].get<int64_t>();
        if (row < 0 || row >= total_rows || !shard.owns_batch(row / batch_size))
            throw Error(ErrorCode::InvalidArgument, where + ": row " + std::to_string(row) + " is not one shard " +
                                                        std::to_string(shard.index) + "/" + std::to_string(shard.count) +
                                                        " of this input writes with --batch-size " + std::to_string(batch_size));
        on_line(row, line);
    }
    return false;
}

}  // namespace

WrittenBatches batches_already_written(const std::string& out_path, const Shard& shard, int64_t batch_size, int64_t total_rows) {
    WrittenBatches w;
    if (!std::ifstream(out_path, std::ios::binary)) return w;
    const int64_t batches = (total_rows + batch_size - 1) / batch_size;
    std::vector<uint32_t> lines(static_cast<size_t>(batches), 0);
    bool dropped = for_each_output_line(out_path, shard, batch_size, total_rows, [&](int64_t row, const std::string&) {
        lines[static_cast<size_t>(row / batch_size)] += 1;
    });
    w.complete.assign(static_cast<size_t>(batches), false);
    for (int64_t b = 0; b < batches; ++b) {
        const int64_t expected = std::min(batch_size, total_rows - b * batch_size);
        if (lines[static_cast<size_t>(b)] == 0) continue;
        if (static_cast<int64_t>(lines[static_cast<size_t>(b)]) != expected) {
            dropped = true;
            continue;
        }
        w.complete[static_cast<size_t>(b)] = true;
        w.rows += expected;
    }
    if (!dropped) return w;
    AtomicFile kept(out_path, true, "output file");
    for_each_output_line(out_path, shard, batch_size, total_rows, [&](int64_t row, const std::string& line) {
        if (!w.has(row / batch_size)) return;
        kept.write(line);
        kept.write("\n");
    });
    kept.commit();
    return w;
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ErrorCode::InvalidArgument, path + ": cannot open output file: " + std::strerror(errno));
}

AppendFile::~AppendFile() {
    if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error(ErrorCode::Internal, path_ + ": write failed: " + std::strerror(errno));
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd_) != 0) throw Error(ErrorCode::Internal, path_ + ": fsync failed: " + std::strerror(errno));
}

}  // namespace t5s::cli
