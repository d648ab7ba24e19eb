// Developer tool: time of one int8 linear layer, our AVX512-VNNI kernel vs LibTorch's FBGEMM
// and oneDNN dynamic-quantised linears, for t5-small/base layer shapes and the row counts
// decoding and encoding use. Same process, same thread count, alternating, best of rounds.
//   build/tests/t5s_int8_bench [--threads N] [--shape NxK ...]
//   build/tests/t5s_int8_bench --stream small|base|large|mt5base [--rows R] [--threads N]
// --stream: every int8 weight one greedy decoder step reads (per layer fused QKV, O,
// cross-attention Q and O, FFN in and out; then the head), distinct tensors larger than the
// caches, each multiplied by R rows (1: batch 1) in turn: the step's GEMM time alone, as GB/s, per kernel
// (ours on this CPU, our AVX2 kernel, FBGEMM), to set beside bandwidth_limit.py's read bandwidth.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "torch/int8_gemm.h"

namespace {

double best_us(const std::function<void()>& fn, int64_t macs) {
    const int reps =
        static_cast<int>(std::clamp<int64_t>(int64_t{2} * 1000 * 1000 * 1000 / std::max<int64_t>(macs, 1) / 20, 5, 2000));
    for (int i = 0; i < 3; ++i) fn();
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) fn();
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
        best = std::min(best, us);
    }
    return best;
}

c10::IValue prepack(const at::Tensor& q, at::QEngine engine) {
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
    at::globalContext().setQEngine(engine);
    std::vector<c10::IValue> stack{q, c10::IValue()};
    op.callBoxed(&stack);
    return stack[0];
}

at::Tensor run_dynamic(const at::Tensor& x, const c10::IValue& packed) {
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
    std::vector<c10::IValue> stack{x, packed, false};
    op.callBoxed(&stack);
    return stack[0].toTensor();
}

// A random [n, k] weight quantised per row, as our packed form takes it (q8, scale) and as
// FBGEMM / oneDNN prepack it (q).
struct RandomInt8 {
    at::Tensor q8, scale, q;
};
RandomInt8 random_int8(int64_t n, int64_t k) {
    const at::Tensor w = at::randn({n, k});
    const at::Tensor scale = (w.abs().amax({1}) / 127.0).clamp_min(1e-8);
    const at::Tensor q8 = at::round(w / scale.unsqueeze(1)).clamp(-127, 127).to(at::kChar);
    return {q8, scale, at::quantize_per_channel(w, scale.to(at::kDouble), at::zeros({n}, at::kLong), 0, at::kQInt8)};
}

struct ModelShape {
    int64_t layers, d, inner, ff, vocab;
    bool gated = false;  // two FFN input projections (mT5, flan-t5)
};

// One decoder step's weights, in the order the step reads them.
std::vector<std::pair<int64_t, int64_t>> step_shapes(const ModelShape& m) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t l = 0; l < m.layers; ++l) {
        for (auto s : {std::pair{3 * m.inner, m.d}, {m.d, m.inner}, {m.inner, m.d}, {m.d, m.inner}, {m.ff, m.d}, {m.d, m.ff}})
            out.push_back(s);
        if (m.gated) out.emplace_back(m.ff, m.d);
    }
    out.emplace_back(m.vocab, m.d);
    return out;
}

int stream_step(const std::string& name, int64_t rows) {
    const std::map<std::string, ModelShape> known{{"small", {6, 512, 512, 2048, 32128}},
                                                  {"base", {12, 768, 768, 3072, 32128}},
                                                  {"large", {24, 1024, 1024, 4096, 32128}},
                                                  {"mt5base", {12, 768, 768, 2048, 250112, true}}};
    if (!known.count(name)) {
        std::fprintf(stderr, "t5s_int8_bench: --stream small|base|large|mt5base\n");
        return 2;
    }
    struct Layer {
        t5s::Int8Weight ours;
        c10::IValue fb;
        at::Tensor x;
    };
    std::vector<Layer> layers;
    int64_t bytes = 0;
    for (auto [n, k] : step_shapes(known.at(name))) {
        const RandomInt8 r = random_int8(n, k);
        layers.push_back({t5s::pack_int8_weight(r.q8, r.scale), prepack(r.q, at::QEngine::FBGEMM), at::randn({rows, k})});
        bytes += n * k;
    }
    at::globalContext().setQEngine(at::QEngine::FBGEMM);
    const t5s::Int8Kernel own = t5s::default_kernel_policy().int8;
    std::vector<std::pair<std::string, std::function<void()>>> kernels;
    if (own == t5s::Int8Kernel::Vnni || own == t5s::Int8Kernel::Amx)
        kernels.emplace_back("ours (VNNI/AMX)", [&] {
            for (auto& l : layers) t5s::int8_linear(l.x, l.ours, own);
        });
    if (t5s::cpu_runs_int8_kernel(t5s::Int8Kernel::Avx2, t5s::detect_cpu_features()))
        kernels.emplace_back("ours AVX2", [&] {
            for (auto& l : layers) t5s::int8_linear(l.x, l.ours, t5s::Int8Kernel::Avx2);
        });
    kernels.emplace_back("FBGEMM", [&] {
        for (auto& l : layers) run_dynamic(l.x, l.fb);
    });
    std::printf("%s decoder step at batch %lld: %zu int8 weights, %.1f MB; threads %d; 5 alternating rounds of 20 steps\n",
                name.c_str(), static_cast<long long>(rows), layers.size(), bytes / 1e6, at::get_num_threads());
    std::vector<double> best(kernels.size(), 1e30);
    for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < kernels.size(); ++i) {
            kernels[i].second();
            const auto t0 = std::chrono::steady_clock::now();
            for (int s = 0; s < 20; ++s) kernels[i].second();
            best[i] = std::min(best[i], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 20);
        }
    }
    for (size_t i = 0; i < kernels.size(); ++i)
        std::printf("%-16s %8.3f ms/step  %6.1f GB/s\n", kernels[i].first.c_str(), best[i] * 1e3, bytes / best[i] / 1e9);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 1;
    std::vector<std::pair<int64_t, int64_t>> shapes;
    std::string stream;
    int64_t stream_rows = 1;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) stream_rows = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--stream") && i + 1 < argc) stream = argv[++i];
        else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
            long long n = 0, k = 0;
            if (std::sscanf(argv[++i], "%lldx%lld", &n, &k) == 2) shapes.emplace_back(n, k);
        } else {
            std::fprintf(
                stderr, "usage: t5s_int8_bench [--threads N] [--shape NxK ...] | --stream small|base|large|mt5base [--rows R]\n");
            return 2;
        }
    }
    if (!stream.empty()) {
        at::set_num_threads(threads);
        c10::InferenceMode guard;
        return stream_step(stream, stream_rows);
    }
    if (shapes.empty()) shapes = {{1536, 512}, {512, 512}, {2048, 512}, {512, 2048}, {32128, 512}, {3072, 768}, {768, 3072}};
    if (t5s::default_kernel_policy().int8 == t5s::Int8Kernel::Fbgemm) {
        std::fprintf(stderr, "t5s_int8_bench: this CPU has no AVX512-VNNI (or T5S_INT8_KERNEL=fbgemm)\n");
        return 1;
    }
    at::set_num_threads(threads);
    c10::InferenceMode guard;
    std::printf("threads %d; microseconds per call, best of 5 rounds; ratio = FBGEMM or oneDNN time / ours\n", threads);
    std::printf("%-11s %5s %10s %10s %10s %8s %8s\n", "N x K", "rows", "ours", "fbgemm", "onednn", "fb/ours", "dnn/ours");
    for (auto [n, k] : shapes) {
        const RandomInt8 r = random_int8(n, k);
        const t5s::Int8Weight ours = t5s::pack_int8_weight(r.q8, r.scale);
        const c10::IValue fb = prepack(r.q, at::QEngine::FBGEMM);
        const c10::IValue dnn = prepack(r.q, at::QEngine::ONEDNN);
        at::globalContext().setQEngine(at::QEngine::FBGEMM);
        for (int64_t rows : {1, 2, 4, 8, 16, 32, 256}) {
            const at::Tensor x = at::randn({rows, k});
            const int64_t macs = rows * n * k;
            const double t_ours = best_us([&] { t5s::int8_linear(x, ours, t5s::default_kernel_policy().int8); }, macs);
            const double t_fb = best_us([&] { run_dynamic(x, fb); }, macs);
            const double t_dnn = best_us([&] { run_dynamic(x, dnn); }, macs);
            std::printf("%5lldx%-5lld %5lld %10.1f %10.1f %10.1f %8.2f %8.2f\n", static_cast<long long>(n),
                        static_cast<long long>(k), static_cast<long long>(rows), t_ours, t_fb, t_dnn, t_fb / t_ours,
                        t_dnn / t_ours);
        }
    }
    return 0;
}
