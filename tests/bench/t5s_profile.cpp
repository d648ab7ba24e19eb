// Where does T5 Studio's decode time go? (a developer tool, not a test)
//
//   t5s_profile --model DIR [--dtype fp32|bf16|int8] [--threads N] [--batch B] [--beams K | --sample K] [--runs R]
//               [--input-len 32] [--new-tokens 32] [--top 30]
//
// Loads the checkpoint the way the engine does (fp32/bf16 weights, fused QKV, optional int8),
// then times the phases of a generation request — encoder, decoder set-up (cross-attention K/V,
// bias tables), the decode loop — and attributes the loop's time to ATen operators with a
// RecordFunction observer (top-level operators only; key = name + input shapes). Wall time not
// covered by operators is dispatcher / host overhead.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "decode/batch_decoder.h"
#include "t5s/model_config.h"
#include "torch/t5_network.h"
#include "torch/weight_loader.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct OpStat {
    int64_t calls = 0;
    double seconds = 0;
};

struct Profiler {
    std::map<std::string, OpStat> by_key, by_name;
    double total = 0;
    bool on = false;
};
Profiler g_prof;
thread_local int g_depth = 0;

struct Ctx : at::ObserverContext {
    Clock::time_point start;
    int depth = 0;
    std::string shapes;  // taken at entry: the inputs are gone by exit
};

std::string shapes_of(const at::RecordFunction& fn) {
    std::ostringstream s;
    int n = 0;
    for (const c10::IValue& v : fn.inputs()) {
        if (!v.isTensor() || n == 3) continue;
        const at::Tensor& t = v.toTensor();
        s << (n++ ? " " : "") << "[";
        for (int64_t d = 0; d < t.dim(); ++d) s << (d ? "," : "") << t.size(d);
        s << "]";
        if (t.scalar_type() != at::kFloat) s << c10::toString(t.scalar_type());
    }
    return s.str();
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
    auto ctx = std::make_unique<Ctx>();
    ctx->depth = ++g_depth;
    if (g_prof.on && ctx->depth == 1) ctx->shapes = shapes_of(fn);
    ctx->start = Clock::now();
    return ctx;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext* base) {
    auto* ctx = static_cast<Ctx*>(base);
    --g_depth;
    if (!ctx) return;
    if (!g_prof.on || ctx->depth != 1) return;
    const double dt = since(ctx->start);
    const std::string name = fn.name();
    auto& k = g_prof.by_key[name + " " + ctx->shapes];
    k.calls++, k.seconds += dt;
    auto& n = g_prof.by_name[name];
    n.calls++, n.seconds += dt;
    g_prof.total += dt;
}

std::vector<int> source_ids(int64_t row, int64_t length) {  // as bench_common.py
    std::vector<int> ids;
    for (int64_t j = 0; j + 1 < length; ++j) ids.push_back(static_cast<int>(3 + (row * 7919 + j * 104729 + 12345) % 31990));
    ids.push_back(1);
    return ids;
}

void print_top(const char* title, const std::map<std::string, OpStat>& m, double wall, int top, int steps) {
    std::vector<std::pair<std::string, OpStat>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::printf("\n%s (share of decode-loop wall time; calls per step)\n", title);
    for (int i = 0; i < static_cast<int>(v.size()) && i < top; ++i) {
        std::printf("  %5.1f%%  %8.3f ms/step  %6.1f calls/step  %s\n", 100.0 * v[i].second.seconds / wall,
                    1e3 * v[i].second.seconds / steps, static_cast<double>(v[i].second.calls) / steps, v[i].first.c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string model_dir, dtype = "fp32";
    int threads = 1, batch = 1, beams = 1, sample = 0, runs = 3, input_len = 32, new_tokens = 32, top = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--model") model_dir = v;
        else if (k == "--dtype") dtype = v;
        else if (k == "--threads") threads = std::stoi(v);
        else if (k == "--batch") batch = std::stoi(v);
        else if (k == "--beams") beams = std::stoi(v);
        else if (k == "--sample") sample = std::stoi(v);
        else if (k == "--runs") runs = std::stoi(v);
        else if (k == "--input-len") input_len = std::stoi(v);
        else if (k == "--new-tokens") new_tokens = std::stoi(v);
        else if (k == "--top") top = std::stoi(v);
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (model_dir.empty()) {
        std::fprintf(
            stderr,
            "usage: t5s_profile --model DIR [--dtype fp32|bf16|int8] [--threads N] [--batch B] [--beams K | --sample K]\n");
        return 2;
    }
    at::set_num_threads(threads);
    const at::ScalarType st = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
    t5s::ModelConfig config = t5s::load_model_config(model_dir + "/config.json");
    t5s::LoadedWeights loaded = t5s::load_checkpoint_tensors(model_dir);
    auto params = t5s::select_t5_parameters(loaded, config, loaded.files.back());
    for (auto& [name, t] : params) t = t.to(st).contiguous();
    t5s::T5Network net(config, std::move(params));
    if (dtype == "int8") net.quantize_int8();  // both fuse q|k|v first, as a model load does
    else net.pack_for_cpu_decoding();

    c10::InferenceMode guard;
    std::vector<int64_t> flat;
    for (int i = 0; i < batch; ++i) {
        for (int id : source_ids(i, input_len)) flat.push_back(id);
    }
    at::Tensor ids = at::tensor(flat, at::kLong).view({batch, input_len});
    at::Tensor mask = at::ones_like(ids);
    t5s::GenerationOptions o;
    o.max_new_tokens = o.min_new_tokens = new_tokens;
    o.num_beams = beams;
    o.batch_size = batch;
    if (sample > 0) o.do_sample = true, o.top_k = 50, o.num_return_sequences = sample;
    o.seed = 0;
    t5s::IdBatch rows_in;
    for (int i = 0; i < batch; ++i) rows_in.push_back(source_ids(i, input_len));
    // What Model::generate_ids runs: the serving decoder's steps, the encoder pass included.
    auto decode = [&] {
        t5s::decode::BatchDecoder decoder(net, nullptr);
        return t5s::decode::decode_batch(decoder, rows_in, o);
    };

    // Warm-up (allocator, MKL/oneDNN kernel selection).
    decode();

    auto handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsInputs(true));
    double t_enc = 0, t_setup = 0, t_loop = 0;
    for (int r = 0; r < runs; ++r) {
        auto t = Clock::now();
        at::Tensor enc = net.encode(ids, mask);
        t_enc += since(t);
        t = Clock::now();
        {
            const int64_t rows = std::max(beams, std::max(sample, 1));
            t5s::DecoderState s = net.start_decoding(enc, mask, new_tokens + 1, rows);  // as decode() does
        }
        t_setup += since(t);
        g_prof.on = true;
        t = Clock::now();
        decode();  // includes its own encoder pass and start_decoding (subtracted below)
        t_loop += since(t);
        g_prof.on = false;
    }
    at::removeCallback(handle);
    const double loop = t_loop - t_enc - t_setup;  // the decode loop proper
    const int steps = runs * new_tokens;
    std::printf("t5s_profile: %s, dtype %s, threads %d, batch %d, beams %d, sample %d, %d input / %d new tokens, %d runs\n",
                model_dir.c_str(), dtype.c_str(), threads, batch, beams, sample, input_len, new_tokens, runs);
    std::printf(
        "per request: encoder %.1f ms, decoder set-up (cross K/V, bias table) %.1f ms, decode loop %.1f ms "
        "(%.2f ms/step); total %.1f ms -> %.1f tokens/s\n",
        1e3 * t_enc / runs, 1e3 * t_setup / runs, 1e3 * loop / runs, 1e3 * loop / steps, 1e3 * t_loop / runs,
        batch * std::max(sample, 1) * new_tokens * runs / t_loop);  // t_loop: the whole request, its encoder once
    // The observer also saw the encoder and decoder set-up inside decode(): their ops are in the tables below.
    std::printf("operators account for %.1f%% of the decode call (rest: dispatcher, host logic, allocation)\n",
                100.0 * g_prof.total / t_loop);
    print_top("by operator", g_prof.by_name, t_loop, top, steps);
    print_top("by operator and input shapes", g_prof.by_key, t_loop, top, steps);
    return 0;
}
