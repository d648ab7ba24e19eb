#pragma once
// Data-parallel training over LibTorch's c10d (ProcessGroupGloo + TCPStore from the torch wheel).
// One process per device; the launch contract is the one people already use:
//   torchrun / Kubeflow PyTorchJob: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
//   Slurm srun:                      SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (+ MASTER_ADDR, MASTER_PORT)
// A world of one (or no such variables) is a plain single-process run: no group is created.
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5s/model.h"
#include "trainer/optim.h"

namespace t5s {

struct DistributedEnv {
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;
    std::string master_addr;  // host of rank 0's TCPStore
    int master_port = 0;
    std::string launcher;  // "torchrun" (also PyTorchJob) or "slurm": named in messages
};

// Reads the variables above from `getenv`. nullopt when they describe a world of one. Throws
// t5s::Error(InvalidArgument) naming the variable that is missing or malformed.
std::optional<DistributedEnv> read_distributed_env(const std::function<const char*(const char*)>& getenv);

class Distributed {
public:
    // nullptr when the environment describes a single process. timeout_s bounds every collective:
    // a rank that dies or hangs makes the others fail with an Error naming it, never hang.
    static std::unique_ptr<Distributed> from_environment(Device device, double timeout_s);
    ~Distributed();

    int rank() const { return env_.rank; }
    int world_size() const { return env_.world_size; }
    int local_rank() const { return env_.local_rank; }

    // "nccl" (CUDA runs; T5S_DIST_BACKEND) or "gloo": the gradients' backend. The small collectives
    // (counts, flags, the loss, barriers) always go through Gloo on host memory.
    const std::string& gradient_backend() const { return backend_; }

    void all_reduce_sum(int64_t* values, int n);
    void all_reduce_sum(double* values, int n);
    void barrier();
    // Call right before the backward of a step's last micro-batch: the trainable parameters'
    // gradients (requires_grad) are then all-reduced in ~25 MiB buckets while that backward runs
    // (trainer/grad_reducer.h; T5S_DDP_OVERLAP=off defers it all to all_reduce_gradients).
    void expect_final_backward(const std::vector<NamedParam>& params);
    // Completes the sum of every trainable parameter's gradient across ranks (a gradient this rank
    // did not produce counts as zeros) and waits for it.
    void all_reduce_gradients(const std::vector<NamedParam>& params);
    // Of the last step's gradient buckets: {launched during the backward, all}.
    std::vector<int> gradient_buckets_overlapped() const;
    // Dropout across ranks: each rank's default generators (CPU, and `device` when CUDA) are seeded
    // at every step from (seed, rank, step) (t5s/seed.h), so ranks draw independent masks and a
    // resume, at any world size, draws the masks of the uninterrupted run. A single process with
    // the global batch draws other masks (one stream over the padded global batch): the same
    // distribution, not the same bits.
    void seed_step_generators(int64_t seed, int64_t step, at::Device device) const;

private:
    struct Impl;
    explicit Distributed(DistributedEnv env);
    template <class F>
    void guarded(const char* what, F&& f);
    void prepare_reducer(const std::vector<NamedParam>& params);
    DistributedEnv env_;
    std::string backend_ = "gloo";
    std::unique_ptr<Impl> impl_;
};

}  // namespace t5s
