#pragma once
// Sharded batch augmentation: which rows of an --input file a process owns, and resuming an --out
// file a killed run left behind.
//
// The rule: the file's rows (non-blank lines, numbered 0, 1, ... in file order = the global index)
// form global batches of --batch-size rows: batch b = rows [b*B, (b+1)*B). Shard I of N takes the
// batches b with b % N == I (round robin, so every shard gets the same share of work wherever the
// long rows are). Every batch is generated with the same rows and, when sampling, the seed
// derive_seed(seed, b*B) whichever process runs it, so the N shards together produce exactly the
// lines of the unsharded run, for every N.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace t5s::cli {

struct Shard {
    int index = 0;  // I: 0 <= I < N
    int count = 1;  // N
    bool owns_batch(int64_t batch) const { return batch % count == index; }
};

// "I/N", e.g. "0/3". Throws UsageError.
Shard parse_shard(const std::string& text);

// Slurm array: I = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT.
// Kubernetes Indexed Job: I = JOB_COMPLETION_INDEX, N = `shards` (--shards; 0 = not given).
// Throws UsageError naming the variable that is missing or out of range.
Shard shard_from_env(const std::function<const char*(const char*)>& getenv, int shards);

// The global batches an --out file of a previous run of the same shard holds complete.
struct WrittenBatches {
    std::vector<bool> complete;  // by global batch index
    int64_t rows = 0;            // rows in those batches
    bool has(int64_t batch) const {
        return batch < static_cast<int64_t>(complete.size()) && complete[static_cast<size_t>(batch)];
    }
};

// Reads the file as a stream (its size does not matter). Lines of a batch that is not complete (a
// run killed mid-write) are dropped from the file (rewritten atomically), so the batch is generated
// again. Throws t5s::Error naming the file and line when a line is not one this shard writes.
WrittenBatches batches_already_written(const std::string& out_path, const Shard& shard, int64_t batch_size, int64_t total_rows);

// Appends `text` to the file and fsyncs it: a batch's lines land whole or (killed mid-write) are
// repaired by batches_already_written on the next run.
class AppendFile {
public:
    explicit AppendFile(const std::string& path);
    ~AppendFile();
    AppendFile(const AppendFile&) = delete;
    AppendFile& operator=(const AppendFile&) = delete;
    void append(const std::string& text);

private:
    std::string path_;
    int fd_ = -1;
};

}  // namespace t5s::cli
