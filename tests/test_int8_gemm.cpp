// The AVX512-VNNI int8 linear against an exact reference: with the weight already int8, the only
// error is rounding each activation row to 8 bits, which bounds every output by
// 0.5 * row_scale * sum_k |w_q[n][k]| * w_scale[n]. The int8 generation checks (bf16 and int8
// agree with fp32) run through this kernel too; ctest engine_int8_fbgemm reruns them on the
// FBGEMM fallback, engine_int8_avx2 on the AVX2 kernel (T5S_INT8_KERNEL=avx2).
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "skip.h"
#include "torch/int8_gemm.h"
#include "torch/int8_rows_linear.h"

using namespace t5s;

namespace {

// The kernel the policy picks here: AMX, VNNI, AVX2 (T5S_INT8_KERNEL=avx2, or a CPU without VNNI),
// or FBGEMM / the rows path, which have their own forms: then the packed kernel's tests are skipped.
Int8Kernel kernel() { return default_kernel_policy().int8; }
#define SKIP_WITHOUT_PACKED_KERNEL()                                                                   \
    if (kernel() == Int8Kernel::Fbgemm || kernel() == Int8Kernel::Rows)                                \
    T5S_SKIP(                                                                                          \
        "no AVX2 or AVX512-VNNI on this CPU (or T5S_INT8_KERNEL=fbgemm/rows): int8 layers use FBGEMM " \
        "or the rows path")

// Per-row symmetric int8 of a weight, as the network quantises it.
std::pair<at::Tensor, at::Tensor> quantise_weight(const at::Tensor& w) {
    at::Tensor scale = (w.abs().amax({1}) / 127.0).clamp_min(1e-8);
    at::Tensor q = at::round(w / scale.unsqueeze(1)).clamp(-127, 127).to(at::kChar);
    return {q, scale};
}

// One row takes the VNNI kernel, 2 or more AMX tiles where the policy chose AMX: both sum the
// same int32 products, so each row's output must be bit-identical.
void check_rows_alone_equal_batch() {
    auto [q, wscale] = quantise_weight(at::randn({300, 200}));
    const Int8Weight packed = pack_int8_weight(q, wscale);
    const at::Tensor x = at::randn({40, 200});
    const at::Tensor batch = int8_linear(x, packed, kernel());
    for (int64_t r : {0, 7, 16, 39}) {
        const at::Tensor alone = int8_linear(x.narrow(0, r, 1), packed, kernel());
        INFO("row " << r << (kernel() == Int8Kernel::Amx ? " (batch on AMX)" : " (batch on VNNI)"));
        CHECK(at::equal(alone[0], batch[r]));
    }
    // Up to 4 rows run block by block (one weight stream per block), more in 4 x 4-block tiles.
    const at::Tensor few = int8_linear(x.narrow(0, 20, 3), packed, kernel());
    CHECK(at::equal(few, batch.narrow(0, 20, 3)));
}

}  // namespace

TEST_CASE("int8 VNNI linear is the int8 product up to activation rounding", "[packed][int8][may_skip][vnni]") {
    SKIP_WITHOUT_PACKED_KERNEL();
    // Shapes cover full and partial 4-block tiles, N not a multiple of 16 and K not of 4.
    for (auto [n, k] : {std::pair<int64_t, int64_t>{512, 512}, {1536, 512}, {512, 2048}, {100, 70}, {17, 3}, {64, 64}}) {
        auto [q, wscale] = quantise_weight(at::randn({n, k}));
        const Int8Weight packed = pack_int8_weight(q, wscale);
        CHECK(packed.n == n);
        CHECK(packed.k == k);
        const at::Tensor w_deq = q.to(at::kFloat) * wscale.unsqueeze(1);
        const at::Tensor w_abs_sum = (q.to(at::kFloat).abs() * wscale.unsqueeze(1)).sum(1);  // [N]
        for (int64_t rows : {1, 2, 3, 4, 5, 8, 13, 32, 97}) {
            at::Tensor x = at::randn({rows, 1, k});
            x[0].zero_();  // an all-zero row (scale fallback)
            const at::Tensor got = int8_linear(x, packed, kernel());
            REQUIRE(got.sizes() == std::vector<int64_t>{rows, 1, n});
            const at::Tensor want = at::linear(x, w_deq);
            const at::Tensor row_scale = x.abs().amax({2}, true) / 127.0;  // [rows, 1, 1]
            const at::Tensor bound = 0.5 * row_scale * w_abs_sum.view({1, 1, n}) + 1e-4 * (1 + want.abs());
            const at::Tensor excess = ((got - want).abs() - bound).max();
            INFO("n=" << n << " k=" << k << " rows=" << rows << " worst excess over the rounding bound " << excess.item<float>());
            CHECK(excess.item<float>() <= 0);
            CHECK(got[0].abs().max().item<float>() == 0);
        }
    }
}

TEST_CASE("int8 VNNI linear is close to the fp32 product on T5-like activations", "[packed][int8][may_skip][vnni]") {
    SKIP_WITHOUT_PACKED_KERNEL();
    at::manual_seed(7);
    const at::Tensor w = at::randn({2048, 512}) * 0.05;
    auto [q, wscale] = quantise_weight(w);
    const Int8Weight packed = pack_int8_weight(q, wscale);
    const at::Tensor x = at::randn({8, 512});
    const at::Tensor got = int8_linear(x, packed, kernel()), want = at::linear(x, w);
    // 8-bit weights and activations: about 1% relative error on a 512-term dot product.
    const double rel = ((got - want).norm() / want.norm()).item<double>();
    INFO("relative error " << rel);
    CHECK(rel < 0.02);
    CHECK(packed.bytes() < w.numel() * 4 / 3);  // int8 values plus per-row scale and compensation
}

TEST_CASE("int8 rows give the same output alone or in a batch on the VNNI kernel", "[packed][int8][may_skip][vnni]") {
    SKIP_WITHOUT_PACKED_KERNEL();
    check_rows_alone_equal_batch();
}

TEST_CASE("int8 products on AMX tiles equal the VNNI kernel's, in one process", "[packed][int8][may_skip][amx]") {
    if (!detect_cpu_features().amx_int8) T5S_SKIP("no AMX-INT8 on this CPU (or not granted by Linux)");
    // Both kernels are named outright: the AMX path and its VNNI fallback on the same inputs.
    for (auto [n, k] : {std::pair<int64_t, int64_t>{300, 200}, {1536, 512}, {17, 3}}) {
        auto [q, wscale] = quantise_weight(at::randn({n, k}));
        const Int8Weight packed = pack_int8_weight(q, wscale);
        for (int64_t rows : {1, 2, 5, 16, 17, 40}) {
            const at::Tensor x = at::randn({rows, k});
            INFO("n=" << n << " k=" << k << " rows=" << rows);
            CHECK(at::equal(int8_linear(x, packed, Int8Kernel::Amx), int8_linear(x, packed, Int8Kernel::Vnni)));
        }
    }
    auto [q, wscale] = quantise_weight(at::randn({17, 3}));
    CHECK_THROWS(int8_linear(at::randn({2, 3}), pack_int8_weight(q, wscale), Int8Kernel::Fbgemm));  // FBGEMM has its own form
}

TEST_CASE("int8 products of the AVX2 kernel equal the VNNI kernel's, in one process", "[packed][int8][may_skip][vnni]") {
    const CpuFeatures& cpu = detect_cpu_features();
    if (!cpu.avx512_vnni || !cpu.avx2_fma) T5S_SKIP("needs AVX512-VNNI and AVX2 on this CPU to compare the two kernels");
    // Both sum the same int32 products (AVX2 without the +128 shift and its compensation) and
    // rescale them in the same order: bit-identical. Shapes: partial blocks, K not a multiple of 4
    // or 8 (the quantiser's scalar tail), rows odd and even (the AVX2 kernel's row pairs).
    for (auto [n, k] : {std::pair<int64_t, int64_t>{300, 200}, {1536, 512}, {512, 2048}, {17, 3}, {100, 70}}) {
        auto [q, wscale] = quantise_weight(at::randn({n, k}));
        const Int8Weight packed = pack_int8_weight(q, wscale);
        for (int64_t rows : {1, 2, 3, 4, 5, 8, 17, 32}) {
            at::Tensor x = at::randn({rows, k}) * 3;
            x[0].zero_();  // the all-zero row's scale fallback
            INFO("n=" << n << " k=" << k << " rows=" << rows);
            CHECK(at::equal(int8_linear(x, packed, Int8Kernel::Avx2), int8_linear(x, packed, Int8Kernel::Vnni)));
        }
    }
}

TEST_CASE("the next panel's prefetch: the row groups after the first share it, each line once", "[int8]") {
    // Row group 0 reads its own panel from memory and prefetches nothing; groups 1..G-1 split the
    // next panel's lines between them, in order, each share spread over the group's K loop at up to
    // 8 lines a step (a share larger than that leaves its tail to the memory stream).
    alignas(64) static int8_t panel[8192];
    const int64_t lines = sizeof panel / 64;
    for (int64_t groups : {1, 2, 3, 8, 16})
        for (int64_t k4 : {2, 48, 192}) {
            INFO("groups " << groups << " k4 " << k4);
            std::vector<int> seen(static_cast<size_t>(lines), 0);
            for (int64_t g = 0; g < groups; ++g) {
                const auto pf = int8_detail::next_panel_share(panel, sizeof panel, g, groups, k4);
                if (g == 0) {
                    CHECK(pf.lines == 0);
                    continue;
                }
                REQUIRE(pf.lines > 0);
                CHECK((pf.per_step >= 1 && pf.per_step <= 8));
                const int64_t first = (pf.from - panel) / 64, fetched = std::min(pf.lines, k4 * pf.per_step);
                CHECK(fetched == (pf.per_step < 8 ? pf.lines : std::min(pf.lines, 8 * k4)));
                REQUIRE((first >= 0 && first + fetched <= lines));  // inside the next panel
                for (int64_t l = first; l < first + fetched; ++l) ++seen[static_cast<size_t>(l)];
            }
            const int64_t share = groups < 2 ? 0 : (lines + groups - 2) / (groups - 1);
            const bool capped = share > 8 * k4;
            for (int64_t l = 0; l < lines; ++l) {
                const int n = seen[static_cast<size_t>(l)];
                if (groups < 2) CHECK(n == 0);
                else if (capped) CHECK(n <= 1);
                else CHECK(n == 1);
            }
        }
    CHECK(int8_detail::next_panel_share(nullptr, sizeof panel, 1, 4, 48).lines == 0);  // no next panel
}

TEST_CASE("per-row int8 quantisation: the CPU loop equals the ATen formula", "[int8]") {
    at::Tensor w = at::randn({300, 77});
    w[5].zero_();                                     // scale floor 1e-8, all zeros
    w[6] = at::arange(-38, 39).to(at::kFloat) * 0.5;  // exact halves: round half to even
    const at::Tensor want_scale = (at::maximum(w.amax({1}, true), -w.amin({1}, true)) / 127.0).clamp_min(1e-8);
    const at::Tensor want_q = at::round(w / want_scale).clamp(-127, 127).to(at::kChar);
    const Int8Rows cpu = quantize_int8_rows(w);
    CHECK(at::equal(cpu.scale, want_scale));
    CHECK(at::equal(cpu.q, want_q));
    // A strided view takes the ATen path: same values.
    const Int8Rows strided = quantize_int8_rows(w.t().contiguous().t());
    CHECK(at::equal(strided.scale, want_scale));
    CHECK(at::equal(strided.q, want_q));
}

// The device path (CUDA's int8, T5S_INT8_KERNEL=rows on the CPU): activations rounded per row to
// int8, int32 sums, one rescale. Its reference here is independent of ATen's int8 product: the
// int8 values multiplied exactly in int64, then the same two scales applied in the same order.
TEST_CASE("int8 rows linear (the CUDA path's twin) is the exact int32 product, rescaled", "[int8]") {
    at::manual_seed(11);
    const at::Tensor w = at::randn({264, 192}) * 0.05;
    const Int8Rows weight = quantize_int8_rows(w);
    for (int64_t m : {1, 5, 17, 24, 40}) {  // below, at and above the 24-row padding
        at::Tensor x = at::randn({m, 192}) * 3;
        if (m > 1) x[1].zero_();  // a zero row: scale floor, zero output
        const at::Tensor got = int8_rows_linear(x, weight);
        const Int8Rows a = quantize_activation_rows(x);
        CHECK(at::equal(a.scale, (at::maximum(x.amax({1}, true), -x.amin({1}, true)) / 127.0).clamp_min(1e-8)));
        CHECK(at::equal(a.q, at::round(x / a.scale).clamp(-127, 127).to(at::kChar)));
        const at::Tensor sums = at::matmul(a.q.to(at::kLong), weight.q.to(at::kLong).t());
        CHECK(sums.abs().max().item<int64_t>() < (int64_t(1) << 24));  // exact in fp32 too
        const at::Tensor want = sums.to(at::kFloat).mul_(a.scale).mul_(weight.scale.view({1, -1}));
        INFO(m << " rows");
        REQUIRE(got.sizes() == want.sizes());
        CHECK(at::equal(got, want));
        if (m > 1) CHECK(at::equal(got[1], at::zeros({264})));
    }
}

TEST_CASE("int8 rows linear: close to fp32, each row as alone, any leading shape and dtype", "[int8]") {
    at::manual_seed(12);
    const at::Tensor w = at::randn({512, 256}) * 0.05;
    const Int8Rows weight = quantize_int8_rows(w);
    const at::Tensor x = at::randn({2, 20, 256});
    const at::Tensor got = int8_rows_linear(x, weight);
    REQUIRE(got.sizes() == at::IntArrayRef({2, 20, 512}));
    const at::Tensor want = at::linear(x, w);
    const double rel = ((got - want).norm() / want.norm()).item<double>();
    INFO("relative error " << rel);
    CHECK(rel < 0.02);  // 8-bit weights and activations, as the VNNI kernel's bound
    for (int64_t r : {0, 13, 19}) CHECK(at::equal(int8_rows_linear(x[1].narrow(0, r, 1), weight)[0], got[1][r]));
    const Int8Rows bf16_weight{weight.q, weight.scale.to(at::kBFloat16)};
    const at::Tensor bf = int8_rows_linear(x.to(at::kBFloat16), bf16_weight);
    CHECK(bf.scalar_type() == at::kBFloat16);
    CHECK(((bf.to(at::kFloat) - want).norm() / want.norm()).item<double>() < 0.03);
    // A shape off the 8-alignment dequantises the one layer instead, same rows of results.
    const Int8Rows odd = quantize_int8_rows(at::randn({13, 256}) * 0.05);
    CHECK(int8_rows_linear(x, odd).sizes() == at::IntArrayRef({2, 20, 13}));
}
