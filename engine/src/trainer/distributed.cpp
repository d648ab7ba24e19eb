// c10d process groups for data-parallel training: TCPStore rendezvous at MASTER_ADDR:MASTER_PORT,
// ProcessGroupGloo collectives with a timeout (the small ones: token counts, stop flags, the loss,
// barriers), the gradients through NCCL on CUDA (trainer/nccl_loader.h) or Gloo, and a heartbeat per
// rank in the store so that a failed collective can name the rank that was lost.
#define USE_C10D_GLOO 1
#include "trainer/distributed.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "t5s/env.h"
#include "t5s/error.h"
#include "t5s/seed.h"
#include "torch/runtime.h"
#include "trainer/grad_reducer.h"
#include "trainer/nccl_loader.h"

namespace t5s {
namespace {

constexpr int64_t kBucketKiB = 25 << 10;  // DDP's default bucket size, 25 MiB
constexpr auto kHeartbeatPeriod = std::chrono::milliseconds(250);

int parse_int_var(const char* name, const char* value, int min) {
    try {
        size_t used = 0;
        const int v = std::stoi(value, &used);
        if (used == std::string(value).size() && v >= min) return v;
    } catch (const std::exception&) {
    }
    throw Error(ErrorCode::InvalidArgument, std::string(name) + "=" + value + ": expected an integer >= " + std::to_string(min));
}

// Where this rank listens: GLOO_SOCKET_IFNAME as torch.distributed reads it; loopback when rank 0
// is on loopback (one machine); else this host's own name (createDefaultDevice).
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    if (master_addr == "127.0.0.1" || master_addr == "localhost")
        return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
    return c10d::ProcessGroupGloo::createDefaultDevice();
}

// T5S_DDP_BUCKET_KB: the gradient bucket size (tests use small ones to get many buckets from a tiny
// model). A value that is not a positive integer is reported once and the default is used.
int64_t bucket_bytes_from_env() {
    const std::string text = read_string_from_env("T5S_DDP_BUCKET_KB");
    if (text.empty()) return kBucketKiB << 10;
    try {
        size_t used = 0;
        const long long kib = std::stoll(text, &used);
        if (used == text.size() && kib > 0 && kib <= (int64_t{1} << 30)) return static_cast<int64_t>(kib) << 10;
    } catch (const std::exception&) {
    }
    std::fprintf(stderr, "t5studio: T5S_DDP_BUCKET_KB=%s is not a positive integer (KiB); using %lld\n", text.c_str(),
                 static_cast<long long>(kBucketKiB));
    return kBucketKiB << 10;
}

std::string heartbeat_key(int rank) { return "t5s/heartbeat/" + std::to_string(rank); }

}  // namespace

std::optional<DistributedEnv> read_distributed_env(const std::function<const char*(const char*)>& getenv) {
    DistributedEnv env;
    const char *rank = nullptr, *world = nullptr, *local = nullptr;
    const char *rank_name = "RANK", *world_name = "WORLD_SIZE", *local_name = "LOCAL_RANK";
    if (getenv("WORLD_SIZE")) {  // torchrun, Kubeflow PyTorchJob
        env.launcher = "torchrun";
        world = getenv("WORLD_SIZE"), rank = getenv("RANK"), local = getenv("LOCAL_RANK");
    } else if (getenv("SLURM_NTASKS") && getenv("SLURM_PROCID")) {  // srun: one task per device
        env.launcher = "slurm";
        rank_name = "SLURM_PROCID", world_name = "SLURM_NTASKS", local_name = "SLURM_LOCALID";
        world = getenv(world_name), rank = getenv(rank_name), local = getenv(local_name);
    } else {
        return std::nullopt;
    }
    env.world_size = parse_int_var(world_name, world, 1);
    if (env.world_size == 1) return std::nullopt;
    if (!rank) throw Error(ErrorCode::InvalidArgument, std::string(world_name) + " is set but " + rank_name + " is not");
    env.rank = parse_int_var(rank_name, rank, 0);
    if (env.rank >= env.world_size)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(rank_name) + "=" + rank + " is not below " + world_name + "=" + world);
    env.local_rank = local ? parse_int_var(local_name, local, 0) : 0;
    const char* addr = getenv("MASTER_ADDR");
    const char* port = getenv("MASTER_PORT");
    if (!addr || !port)
        throw Error(ErrorCode::InvalidArgument, "distributed training (" + std::string(world_name) + "=" + world +
                                                    ") needs MASTER_ADDR and MASTER_PORT (rank 0's host and a free port)");
    env.master_addr = addr;
    env.master_port = parse_int_var("MASTER_PORT", port, 1);
    if (env.master_port > 65535) throw Error(ErrorCode::InvalidArgument, std::string("MASTER_PORT=") + port + ": not a port");
    return env;
}

int training_rank_from_environment() {
    auto env = read_distributed_env([](const char* name) { return std::getenv(name); });
    return env ? env->rank : 0;
}

struct Distributed::Impl {
    c10::intrusive_ptr<c10d::TCPStore> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
    c10::intrusive_ptr<c10d::Backend> gradient_group;  // NCCL on CUDA, else `group`
    std::unique_ptr<GradientReducer> reducer;
    // Heartbeat: its own store connection, so a collective in flight never waits behind it.
    c10::intrusive_ptr<c10d::TCPStore> heartbeat_store;
    std::thread heartbeat;
    std::mutex mutex;
    std::condition_variable cv;
    bool stopping = false;
    double timeout_s = 60;

    // Ranks whose heartbeat did not advance over a few periods; {0} when the store (on rank 0)
    // itself is gone.
    std::vector<int> lost_ranks(int self, int world) {
        try {
            c10d::TCPStoreOptions o;
            o.port = store->getPort();
            o.timeout = std::chrono::milliseconds(3000);
            o.waitWorkers = false;
            auto probe = c10::make_intrusive<c10d::TCPStore>(store->getHost(), o);
            auto read = [&] {
                std::vector<std::string> v;
                for (int r = 0; r < world; ++r) {
                    auto bytes = probe->get(heartbeat_key(r));
                    v.emplace_back(bytes.begin(), bytes.end());
                }
                return v;
            };
            const auto before = read();
            std::this_thread::sleep_for(kHeartbeatPeriod * 8);
            const auto after = read();
            std::vector<int> lost;
            for (int r = 0; r < world; ++r)
                if (r != self && before[r] == after[r]) lost.push_back(r);
            return lost;
        } catch (const std::exception&) {
            return {0};
        }
    }
};

Distributed::Distributed(DistributedEnv env) : env_(std::move(env)), impl_(std::make_unique<Impl>()) {}

Distributed::~Distributed() {
    if (!impl_->heartbeat.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->cv.notify_all();
    impl_->heartbeat.join();
}

std::unique_ptr<Distributed> Distributed::from_environment(Device device, double timeout_s) {
    auto env = read_distributed_env([](const char* name) { return std::getenv(name); });
    if (!env) return nullptr;
    const bool cuda_run = device == Device::Cuda || (device == Device::Auto && cuda_available(false));
    const bool nccl = use_nccl_for_gradients(cuda_run);  // a CPU run asking for NCCL fails here, before any rendezvous
    std::unique_ptr<Distributed> d(new Distributed(*env));
    d->backend_ = nccl ? "nccl" : "gloo";
    Impl& m = *d->impl_;
    m.timeout_s = timeout_s;
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    const std::string where = env->master_addr + ":" + std::to_string(env->master_port);
    try {
        c10d::TCPStoreOptions so;
        so.port = static_cast<uint16_t>(env->master_port);
        so.isServer = env->rank == 0;
        so.numWorkers = env->world_size;
        so.waitWorkers = false;  // the process group's own rendezvous waits for every rank
        so.timeout = timeout;
        m.store = c10::make_intrusive<c10d::TCPStore>(env->master_addr, so);
        so.isServer = false;
        so.timeout = std::min(timeout, std::chrono::milliseconds(5000));  // bounds how long exit waits for a beat
        m.heartbeat_store = c10::make_intrusive<c10d::TCPStore>(env->master_addr, so);
        m.heartbeat_store->set(heartbeat_key(env->rank), std::vector<uint8_t>{'0'});
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(gloo_device(env->master_addr));
        m.group = c10::make_intrusive<c10d::ProcessGroupGloo>(m.store, env->rank, env->world_size, options);
        m.gradient_group = m.group;
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Internal, "rank " + std::to_string(env->rank) + " of " + std::to_string(env->world_size) +
                                             ": cannot join the process group at " + where + " (" + env->launcher +
                                             " variables): " + std::string(e.what()).substr(0, 300));
    }
    if (nccl) {  // its own key space in the store, next to Gloo's
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl", m.store);
        m.gradient_group = make_nccl_backend(prefixed, env->rank, env->world_size, env->local_rank, timeout);
    }
    m.heartbeat = std::thread([&m, rank = env->rank] {
        for (uint64_t beat = 1;; ++beat) {
            {
                std::unique_lock<std::mutex> lock(m.mutex);
                if (m.cv.wait_for(lock, kHeartbeatPeriod, [&] { return m.stopping; })) return;
            }
            const std::string s = std::to_string(beat);
            try {  // outside the lock: a store that stopped answering never blocks the destructor's signal
                m.heartbeat_store->set(heartbeat_key(rank), std::vector<uint8_t>(s.begin(), s.end()));
            } catch (const std::exception&) {
                return;  // the store (rank 0) is gone: the next collective reports it
            }
        }
    });
    return d;
}

template <class F>
void Distributed::guarded(const char* what, F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        std::string lost;
        for (int r : impl_->lost_ranks(env_.rank, env_.world_size)) lost += (lost.empty() ? "" : ", ") + std::to_string(r);
        std::string first_line = e.what();
        first_line = first_line.substr(0, first_line.find('\n')).substr(0, 200);
        throw Error(ErrorCode::Internal, "rank " + std::to_string(env_.rank) + ": lost rank " + (lost.empty() ? "?" : lost) +
                                             " of " + std::to_string(env_.world_size) + " during " + what + " (" + first_line +
                                             ")");
    }
}

void Distributed::all_reduce_sum(int64_t* values, int n) {
    at::Tensor t = at::from_blob(values, {n}, at::kLong).clone();
    guarded("a token count all-reduce", [&] {
        std::vector<at::Tensor> v{t};
        impl_->group->allreduce(v)->wait();
    });
    for (int i = 0; i < n; ++i) values[i] = t[i].item<int64_t>();
}

void Distributed::all_reduce_sum(double* values, int n) {
    at::Tensor t = at::from_blob(values, {n}, at::kDouble).clone();
    guarded("a loss all-reduce", [&] {
        std::vector<at::Tensor> v{t};
        impl_->group->allreduce(v)->wait();
    });
    for (int i = 0; i < n; ++i) values[i] = t[i].item<double>();
}

void Distributed::barrier() {
    guarded("a barrier", [&] { impl_->group->barrier()->wait(); });
}

void Distributed::prepare_reducer(const std::vector<NamedParam>& params) {
    std::vector<at::Tensor> tensors;
    for (const auto& p : params)
        if (p.tensor.requires_grad()) tensors.push_back(p.tensor);
    auto& r = impl_->reducer;
    if (r && r->parameter_count() == tensors.size()) return;
    const bool overlap = read_bool_from_env("T5S_DDP_OVERLAP", true);
    r = std::make_unique<GradientReducer>(tensors, impl_->gradient_group, bucket_bytes_from_env(), overlap);
}

void Distributed::expect_final_backward(const std::vector<NamedParam>& params) {
    prepare_reducer(params);
    impl_->reducer->arm();
}

void Distributed::all_reduce_gradients(const std::vector<NamedParam>& params) {
    prepare_reducer(params);  // a rank without rows may not have built it yet
    guarded("the gradient all-reduce", [&] { impl_->reducer->finish(); });
}

std::vector<int> Distributed::gradient_buckets_overlapped() const {
    const auto& r = impl_->reducer;
    if (!r) return {0, 0};
    return {r->launched_during_backward(), static_cast<int>(r->bucket_count())};
}

void Distributed::seed_step_generators(int64_t seed, int64_t step, at::Device device) const {
    const auto s = static_cast<uint64_t>(derive_seed(derive_seed(seed, env_.rank), step));
    for (at::Generator gen : {at::detail::getDefaultCPUGenerator(),
                              device.is_cuda() ? at::globalContext().defaultGenerator(device) : at::Generator()}) {
        if (!gen.defined()) continue;
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_current_seed(s);
    }
}

}  // namespace t5s
