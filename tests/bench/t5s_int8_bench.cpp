// Developer tool: time of one int8 linear layer, our AVX512-VNNI kernel vs LibTorch's FBGEMM
// and oneDNN dynamic-quantised linears, for t5-small/base layer shapes and the row counts
// decoding and encoding use. Same process, same thread count, alternating, best of rounds.
//   build/tests/t5s_int8_bench [--threads N] [--shape NxK ...]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
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

}  // namespace

int main(int argc, char** argv) {
    int threads = 1;
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
            long long n = 0, k = 0;
            if (std::sscanf(argv[++i], "%lldx%lld", &n, &k) == 2) shapes.emplace_back(n, k);
        } else {
            std::fprintf(stderr, "usage: t5s_int8_bench [--threads N] [--shape NxK ...]\n");
            return 2;
        }
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
        const at::Tensor w = at::randn({n, k});
        const at::Tensor scale = (w.abs().amax({1}) / 127.0).clamp_min(1e-8);
        const at::Tensor q8 = at::round(w / scale.unsqueeze(1)).clamp(-127, 127).to(at::kChar);
        const t5s::Int8Weight ours = t5s::pack_int8_weight(q8, scale);
        const at::Tensor q = at::quantize_per_channel(w, scale.to(at::kDouble), at::zeros({n}, at::kLong), 0, at::kQInt8);
        const c10::IValue fb = prepack(q, at::QEngine::FBGEMM);
        const c10::IValue dnn = prepack(q, at::QEngine::ONEDNN);
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
