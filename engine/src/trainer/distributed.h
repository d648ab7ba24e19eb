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

    void all_reduce_sum(int64_t* values, int n);
    void all_reduce_sum(double* values, int n);
    void barrier();
    // Sums every parameter's gradient across ranks (missing gradients count as zeros), in buckets
    // of about 25 MiB that are all in flight at once.
    void all_reduce_gradients(const std::vector<NamedParam>& params);

private:
    struct Impl;
    explicit Distributed(DistributedEnv env);
    template <class F>
    void guarded(const char* what, F&& f);
    DistributedEnv env_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace t5s
