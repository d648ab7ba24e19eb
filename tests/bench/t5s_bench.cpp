// T5 Studio benchmark driver (not a test). Loads a model once, runs named workloads and prints one
// JSON object, the same shape as tests/bench/hf_bench.py and ct2_bench.py print (bench_common.py
// documents workload names and the input ids, which this file computes identically).
//
//   t5s_bench --model DIR [--dtype fp32|bf16|fp16|int8] [--device cpu|cuda] [--threads N]
//             [--runs 5] [--warmup 1] [--workloads greedy_b1,beam4_b8,sample8_b4,train_b8]
//             [--input-len 32] [--new-tokens 32] [--train-src 64] [--train-tgt 32]
//
// Inference goes through the public t5s::Model API. The training step (forward, loss, backward,
// AdamW) runs the engine's T5Network with the trainer's AdamW (trainer/optim.h), weight decay
// 0.01 on every parameter like torch.optim.AdamW's default on the transformers side.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5s/model.h"
#include "t5s/process_memory.h"
#include "torch/lora.h"
#include "torch/t5_network.h"
#include "torch/weight_loader.h"
#include "trainer/block_cache.h"
#include "trainer/core.h"
#include "trainer/optim.h"

#include "torch/cuda_backend.h"

#ifndef T5S_TORCH_VERSION
#define T5S_TORCH_VERSION "?"
#endif
#ifndef T5S_VERSION
#define T5S_VERSION "?"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---- the same inputs as bench_common.py -----------------------------------------------------

std::vector<int> source_ids(int64_t row, int64_t length) {
    std::vector<int> ids;
    for (int64_t j = 0; j + 1 < length; ++j) ids.push_back(static_cast<int>(3 + (row * 7919 + j * 104729 + 12345) % 31990));
    ids.push_back(1);
    return ids;
}

std::vector<int> target_ids(int64_t row, int64_t length) {
    std::vector<int> ids;
    for (int64_t j = 0; j + 1 < length; ++j) ids.push_back(static_cast<int>(3 + (row * 6007 + j * 15485863 + 777) % 31990));
    ids.push_back(1);
    return ids;
}

struct Workload {
    std::string name, kind;  // greedy | beam | sample | train
    std::string variant;     // train: "" | "ckpt" | "lora"
    int batch = 1, beams = 1, candidates = 1;
};

Workload parse_workload(const std::string& name) {
    Workload w;
    w.name = name;
    const auto b = name.rfind("_b");
    if (b == std::string::npos) throw std::runtime_error("bad workload name '" + name + "'");
    w.batch = std::stoi(name.substr(b + 2));
    const std::string head = name.substr(0, b);
    auto number_after = [&](const std::string& prefix) { return std::stoi(head.substr(prefix.size())); };
    if (head == "greedy") w.kind = "greedy";
    else if (head == "train" || head == "train_ckpt" || head == "train_lora")
        w.kind = "train", w.variant = head.substr(std::min<size_t>(head.size(), 6));
    else if (head.rfind("beam", 0) == 0) w.kind = "beam", w.beams = number_after("beam");
    else if (head.rfind("sample", 0) == 0) w.kind = "sample", w.candidates = number_after("sample");
    else
        throw std::runtime_error("bad workload name '" + name +
                                 "' (greedy_bN, beamK_bN, sampleK_bN, train_bN, train_ckpt_bN, train_lora_bN)");
    return w;
}

// ---- memory and time -------------------------------------------------------------------------

int64_t status_bytes(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string key = std::string(field) + ":";
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size())) * 1024;
    }
    return 0;
}

void reset_peak_rss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";  // VmHWM := VmRSS (Linux >= 4.0)
}

double seconds_since_process_start() {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream rest(text.substr(text.rfind(')') + 1));
    std::string field;
    for (int i = 0; i < 20; ++i) rest >> field;  // fields 3..22; the 22nd is starttime
    const double start = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
    std::ifstream up("/proc/uptime");
    double uptime = 0;
    up >> uptime;
    return uptime - start;
}

struct Gpu {
    bool on = false;
    void reset() {
        if (on) t5s::cuda_reset_peak_stats(0);
    }
    int64_t peak() const { return on ? t5s::cuda_allocator_stats(0).peak_allocated : 0; }
    void sync() const {
        if (on) t5s::cuda_synchronize(0);
    }
};

// ---- options -----------------------------------------------------------------------------------

struct Args {
    std::string model, dtype = "fp32", device = "cpu", workloads = "greedy_b1";
    int threads = 2, runs = 5, warmup = 1, input_len = 32, new_tokens = 32, train_src = 64, train_tgt = 32;
};

Args parse_args(int argc, char** argv) {
    Args a;
    std::map<std::string, std::string*> strings{
        {"--model", &a.model}, {"--dtype", &a.dtype}, {"--device", &a.device}, {"--workloads", &a.workloads}};
    std::map<std::string, int*> ints{{"--threads", &a.threads},       {"--runs", &a.runs},
                                     {"--warmup", &a.warmup},         {"--input-len", &a.input_len},
                                     {"--new-tokens", &a.new_tokens}, {"--train-src", &a.train_src},
                                     {"--train-tgt", &a.train_tgt}};
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (k == "-h" || k == "--help") {
            std::puts(
                "t5s_bench --model DIR [--dtype fp32|bf16|fp16|int8] [--device cpu|cuda] [--threads N] [--runs N]\n"
                "          [--warmup N] [--workloads greedy_b1,greedy_b8,beam4_b8,sample8_b4,train_b8]\n"
                "          [--input-len 32] [--new-tokens 32] [--train-src 64] [--train-tgt 32]");
            std::exit(0);
        }
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + k);
        if (strings.count(k)) *strings[k] = argv[++i];
        else if (ints.count(k)) *ints[k] = std::stoi(argv[++i]);
        else throw std::runtime_error("unknown option " + k);
    }
    if (a.model.empty()) throw std::runtime_error("--model DIR is required");
    return a;
}

// ---- workloads -----------------------------------------------------------------------------------

struct RunResult {
    int64_t tokens = 0;
    int min_new = 1 << 30, max_new = 0;
    double forward_s = 0, backward_s = 0, optimizer_s = 0;  // train: where the step's time went
};

RunResult run_generation(const t5s::Model& model, const Workload& w, const Args& a, int seed) {
    t5s::IdBatch inputs;
    for (int i = 0; i < w.batch; ++i) inputs.push_back(source_ids(i, a.input_len));
    t5s::GenerationOptions o;
    o.max_new_tokens = o.min_new_tokens = a.new_tokens;
    o.batch_size = w.batch;
    o.num_beams = w.kind == "beam" ? w.beams : 1;
    if (w.kind == "sample") {
        o.do_sample = true;
        o.top_k = 50;  // transformers' default, given to every engine
        o.num_return_sequences = w.candidates;
        o.seed = seed;
    }
    RunResult r;
    for (const auto& cands : model.generate_ids(inputs, o)) {
        for (const auto& c : cands) {
            const int n = static_cast<int>(c.ids.size());
            r.tokens += n;
            r.min_new = std::min(r.min_new, n);
            r.max_new = std::max(r.max_new, n);
        }
    }
    return r;
}

// One AdamW training step as a training run takes it (trainer/core.h: the trainer's loading,
// batch and loss), with the run's CPU block cache (trainer/block_cache.h) installed: plain, with
// gradient checkpointing, or LoRA with the trainer's default settings (r 8, alpha 16, q,v).
class TrainStep {
public:
    TrainStep(const Args& a, const Workload& w, at::Device device) : args_(a), w_(w) {
        model_ = t5s::load_trainable(a.model, device);
        if (w.variant == "lora")
            t5s::make_lora_trainable(model_, t5s::init_lora_adapter(model_.config, t5s::LoraSettings{}, 1), device);
        model_.net->set_training(true, model_.config.dropout_rate);
        model_.net->set_gradient_checkpointing(w.variant == "ckpt");
        optimizer_ = t5s::make_adamw(model_.named, {0.9, 0.999, 1e-8, 0.01});
        std::vector<std::vector<int>> sources, targets;
        for (int i = 0; i < w.batch; ++i) {
            sources.push_back(source_ids(i, a.train_src));
            targets.push_back(target_ids(i, a.train_tgt));
        }
        batch_ = t5s::make_batch_from_ids(sources, targets, device);
    }

    RunResult operator()() {
        for (const t5s::NamedParam& p : model_.named) p.tensor.mutable_grad() = at::Tensor();  // zero_grad(set_to_none)
        RunResult r;
        auto t = Clock::now();
        at::Tensor loss = t5s::forward_loss(*model_.net, batch_, t5s::TrainPrecision::Fp32);
        r.forward_s = seconds_since(t), t = Clock::now();
        loss.backward();
        r.backward_s = seconds_since(t), t = Clock::now();
        optimizer_->step(1e-4);
        (void)loss.item<double>();  // host sync (CUDA)
        r.optimizer_s = seconds_since(t);
        r.tokens = static_cast<int64_t>(w_.batch) * args_.train_tgt;
        r.min_new = r.max_new = args_.train_tgt;
        return r;
    }

private:
    t5s::CpuBlockCacheScope block_cache_;  // first: outlives the tensors below
    const Args& args_;
    Workload w_;
    t5s::TrainableModel model_;
    std::unique_ptr<t5s::Optimizer> optimizer_;
    t5s::Batch batch_;
};

int run(int argc, char** argv) {
    const Args a = parse_args(argc, argv);
    std::vector<Workload> workloads;
    std::stringstream list(a.workloads);
    for (std::string item; std::getline(list, item, ',');) {
        if (!item.empty()) workloads.push_back(parse_workload(item));
    }
    // The training step frees the inference model: it runs last.
    std::stable_partition(workloads.begin(), workloads.end(), [](const Workload& w) { return w.kind != "train"; });

    t5s::RuntimeOptions ro;
    ro.device = t5s::parse_enum<t5s::Device>(a.device);
    ro.precision = t5s::parse_enum<t5s::Precision>(a.dtype);
    ro.threads = a.threads;
    Gpu gpu;
    gpu.on = ro.device == t5s::Device::Cuda;

    json result;
    result["engine"] = "t5studio";
    result["engine_version"] = T5S_VERSION;
    result["torch_version"] = T5S_TORCH_VERSION;
    result["dtype"] = a.dtype;

    result["rss_before_load_bytes"] = status_bytes("VmRSS");
    auto t0 = Clock::now();
    auto model = t5s::Model::load(a.model, ro);
    gpu.sync();
    result["load_s"] = seconds_since(t0);
    {
        t5s::GenerationOptions o;
        o.max_new_tokens = o.min_new_tokens = 1;
        model->generate_ids({source_ids(0, a.input_len)}, o);
    }
    result["first_token_s"] = seconds_since(t0);
    result["process_start_to_first_token_s"] = seconds_since_process_start();
    result["rss_after_load_bytes"] = status_bytes("VmRSS");
    result["rss_after_load"] = {{"anon", status_bytes("RssAnon")}, {"file", status_bytes("RssFile")}};
    int64_t process_peak = status_bytes("VmHWM");  // includes the load (reset per workload below)
    result["peak_rss_load_bytes"] = process_peak;
    result["weight_bytes"] = model->info().weight_bytes;  // what the engine holds (packed copies included)
    // The memory target's "weight bytes": the model's parameters at this dtype (int8: one byte each).
    const int64_t bytes_per_param = a.dtype == "int8" ? 1 : (a.dtype == "fp32" ? 4 : 2);
    result["param_bytes_at_dtype"] = model->info().parameter_count * bytes_per_param;
    result["device"] = model->info().device;
    result["threads"] = at::get_num_threads();

    json out = json::object();
    for (const Workload& w : workloads) {
        if (w.kind == "train" && a.dtype != "fp32") continue;
        std::unique_ptr<TrainStep> train;
        if (w.kind == "train") {
            model.reset();  // the trainer owns its own fp32 weights
            train = std::make_unique<TrainStep>(a, w, gpu.on ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU));
        }
        // Each workload's peak is its own: the buffers the one before freed would otherwise still
        // be resident (kept for the next request; a front end gives them back once idle).
        t5s::release_free_heap();
        reset_peak_rss();
        gpu.reset();
        std::vector<double> runs, forward, backward, optimizer;
        RunResult last;
        int lo = 1 << 30, hi = 0;
        for (int i = 0; i < a.warmup + a.runs; ++i) {
            auto t = Clock::now();
            last = train ? (*train)() : run_generation(*model, w, a, i);
            gpu.sync();
            const double dt = seconds_since(t);
            if (i >= a.warmup) {
                runs.push_back(dt);
                lo = std::min(lo, last.min_new), hi = std::max(hi, last.max_new);
                forward.push_back(last.forward_s), backward.push_back(last.backward_s), optimizer.push_back(last.optimizer_s);
            }
        }
        json entry{{"runs_s", runs},
                   {"tokens", last.tokens},
                   {"new_tokens_min", lo},
                   {"new_tokens_max", hi},
                   {"peak_rss_bytes", status_bytes("VmHWM")}};
        if (gpu.on) entry["peak_gpu_bytes"] = gpu.peak();
        if (train) {
            const t5s::CpuBlockCacheStats c = t5s::cpu_block_cache_stats();
            entry["block_cache"] = {
                {"hits", c.hits}, {"misses", c.misses}, {"peak_live_bytes", c.peak_live_bytes}, {"cached_bytes", c.cached_bytes}};
            entry["phases_s"] = {{"forward", forward}, {"backward", backward}, {"optimizer", optimizer}};
        }
        process_peak = std::max(process_peak, status_bytes("VmHWM"));
        out[w.name] = entry;
    }
    result["workloads"] = out;
    result["peak_rss_bytes"] = std::max(process_peak, status_bytes("VmHWM"));
    std::cout << result.dump() << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "t5s_bench: %s\n", e.what());
        return 1;
    }
}
