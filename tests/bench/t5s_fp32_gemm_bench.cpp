// Developer tool: time of one fp32 linear layer on the CPU, our panel kernel (panel_gemm.h)
// against MKL's packed sgemm (packed_gemm.h) and at::linear, for the t5-small layer shapes and the
// row counts decoding (1..64 rows) and encoding (tokens) use. Same process, same thread count,
// alternating, best of rounds; GFLOP/s beside each time.
//   build/tests/t5s_fp32_gemm_bench [--threads N] [--rows 1,4,16] [--shape NxK ...]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "torch/packed_gemm.h"
#include "torch/panel_gemm.h"

namespace {

double best_us(const std::function<void()>& fn, int64_t macs) {
    const int reps =
        static_cast<int>(std::clamp<int64_t>(int64_t{1} * 1000 * 1000 * 1000 / std::max<int64_t>(macs, 1) / 10, 3, 2000));
    fn();
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) fn();
        best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps);
    }
    return best;
}

std::vector<int64_t> parse_list(const char* s) {
    std::vector<int64_t> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(std::stoll(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 1;
    std::vector<int64_t> rows_list{1, 2, 4, 8, 16, 32, 64};
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) {
            rows_list = parse_list(argv[++i]);
        } else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
            long long n = 0, k = 0;
            if (std::sscanf(argv[++i], "%lldx%lld", &n, &k) == 2) shapes.emplace_back(n, k);
        } else {
            std::fprintf(stderr, "usage: t5s_fp32_gemm_bench [--threads N] [--rows 1,4,16] [--shape NxK ...]\n");
            return 2;
        }
    }
    if (shapes.empty())
        shapes = {{1536, 512}, {512, 512}, {2048, 512}, {512, 2048}, {32128, 512}};  // t5-small: qkv, o, wi, wo, head
    at::set_num_threads(threads);
    at::manual_seed(0);
    std::printf("threads %d, panel kernel: %s, MKL packed: %s\n", threads,
                t5s::default_kernel_policy().fp32_panels == t5s::KernelIsa::Avx2 ? "AVX2/FMA" : "portable",
                t5s::packed_gemm_available() ? "yes" : "no");
    std::printf("%-12s %5s %12s %12s %12s   (us; GFLOP/s)\n", "shape", "rows", "panels", "mkl-packed", "at::linear");
    for (auto [n, k] : shapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = t5s::pack_panels(w), mkl = t5s::pack_linear_weight(w);
        for (int64_t rows : rows_list) {
            at::Tensor x = at::randn({rows, k});
            const int64_t macs = rows * n * k;
            auto gflops = [&](double us) { return 2.0 * static_cast<double>(macs) / us / 1e3; };
            const double t_panel =
                best_us([&] { t5s::panel_linear(x, panels, n, t5s::default_kernel_policy().fp32_panels); }, macs);
            const double t_mkl = mkl.defined() ? best_us([&] { t5s::packed_linear(x, mkl, n, k); }, macs) : 0.0;
            const double t_aten = best_us([&] { at::linear(x, w); }, macs);
            std::printf("%5lldx%-6lld %5lld %7.0f;%4.0f %7.0f;%4.0f %7.0f;%4.0f\n", static_cast<long long>(n),
                        static_cast<long long>(k), static_cast<long long>(rows), t_panel, gflops(t_panel), t_mkl,
                        mkl.defined() ? gflops(t_mkl) : 0.0, t_aten, gflops(t_aten));
        }
    }
    return 0;
}
