// fp32 linear layers held in panels for our AVX2 kernel (CPU decoding, panel_gemm.h): the product
// of at::linear to rounding, and batch-invariant bit for bit — a row's result does not depend on
// how many rows are multiplied with it, where it sits, the thread count or the CPU path.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <limits>
#include <utility>
#include <vector>

#include "torch/panel_gemm.h"

using namespace t5s;

namespace {

// The panel code this CPU runs (AVX2/FMA where it has it, else the portable chains).
KernelIsa fast() { return default_kernel_policy().fp32_panels; }

const std::pair<int64_t, int64_t> kShapes[] = {{1024, 512}, {700, 600}, {512, 2048}, {33, 40}};  // N x K; 700, 33: a part panel
const int64_t kRowCounts[] = {1, 2, 3, 4, 5, 6, 7, 13, 16, 29, 97};

// An fp32 sum of K products is within K * eps * sum|x_i w_i| of the exact value (the classic bound
// for recursive summation; real errors are about sqrt(K) times smaller), so two summation orders
// stay within it too in practice. A fixed atol on random sums of 2048 products made this test
// flaky; the bound scales with each sum. Seeded, so a run is repeatable.
bool within_summation_bound(const at::Tensor& got, const at::Tensor& want, const at::Tensor& x, const at::Tensor& w) {
    const double k = static_cast<double>(w.size(1));
    const at::Tensor magnitude = at::linear(x.abs().to(at::kDouble), w.abs().to(at::kDouble));
    const at::Tensor bound = k * std::numeric_limits<float>::epsilon() * magnitude;
    return ((got.to(at::kDouble) - want.to(at::kDouble)).abs() <= bound).all().item<bool>();
}

}  // namespace

TEST_CASE("panel fp32 linear equals at::linear for every row count", "[packed][panels]") {
    at::manual_seed(20261202);
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        CHECK(panels.sizes() == at::IntArrayRef({(n + 15) / 16, k, 16}));
        for (int64_t rows : kRowCounts) {
            at::Tensor x = at::randn({rows, 1, k});  // [B, 1, K] as in a decode step
            at::Tensor got = panel_linear(x, panels, n, fast()), want = at::linear(x, w);
            REQUIRE(got.sizes() == want.sizes());
            CHECK(within_summation_bound(got, want, x, w));
        }
        at::Tensor xt = at::randn({k, 4}).t();  // a non-contiguous input
        CHECK(within_summation_bound(panel_linear(xt, panels, n, fast()), at::linear(xt, w), xt, w));
    }
}

TEST_CASE("a row's panel product is the same bits in any batch, position and thread count", "[packed][panels]") {
    at::manual_seed(20261202);
    const int threads_before = at::get_num_threads();
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        at::Tensor batch = at::randn({97, k});
        at::set_num_threads(2);
        at::Tensor whole = panel_linear(batch, panels, n, fast());
        at::set_num_threads(1);
        CHECK(at::equal(panel_linear(batch, panels, n, fast()), whole));
        at::set_num_threads(threads_before);
        for (int64_t rows : kRowCounts) {
            for (int64_t start : {int64_t{0}, 97 - rows, (97 - rows) / 2}) {
                at::Tensor part = panel_linear(batch.narrow(0, start, rows), panels, n, fast());
                CHECK(at::equal(part, whole.narrow(0, start, rows)));
            }
        }
    }
}

TEST_CASE("the portable panel path gives the AVX2 kernel's bits", "[packed][panels]") {
    at::manual_seed(20261202);
    // Where the CPU lacks AVX2 both calls take the portable path: the check still holds.
    INFO("AVX2/FMA kernel on this CPU: " << (fast() == KernelIsa::Avx2));
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        for (int64_t rows : {int64_t{1}, int64_t{6}, int64_t{13}}) {
            at::Tensor x = at::randn({rows, k});
            CHECK(at::equal(panel_linear(x, panels, n, fast()), panel_linear(x, panels, n, KernelIsa::Portable)));
        }
    }
}

TEST_CASE("panel products refuse inputs they cannot multiply", "[packed][panels]") {
    at::Tensor panels = pack_panels(at::randn({64, 32}));
    CHECK_THROWS(panel_linear(at::randn({2, 31}), panels, 64, fast()));                               // K differs
    CHECK_THROWS(panel_linear(at::randn({2, 32}).to(at::kDouble), panels, 64, fast()));               // not fp32
    CHECK_THROWS(pack_panels(at::randn({64, 32}).to(at::kBFloat16)));                                 // fp32 weights only
    CHECK(panel_linear(at::randn({0, 32}), panels, 64, fast()).sizes() == at::IntArrayRef({0, 64}));  // no rows
}

TEST_CASE("panels packed from a fused layer's parts are the panels of their concatenation", "[packed][panels]") {
    at::manual_seed(20261206);
    // q|k|v of one width; parts whose rows end inside a panel (33, 40, 7), so that a panel mixes
    // parts; a K that is not a multiple of the 16-wide transpose blocks (40); one part alone.
    const std::vector<std::vector<int64_t>> row_sets = {{64, 64, 64}, {33, 40, 7}, {5}, {16, 1}};
    for (int64_t k : {32, 40, 512}) {
        for (const auto& rows : row_sets) {
            std::vector<at::Tensor> parts;
            for (int64_t n : rows) parts.push_back(at::randn({n, k}));
            const at::Tensor from_parts = pack_panels(parts), from_cat = pack_panels(at::cat(parts, 0));
            REQUIRE(from_parts.sizes() == from_cat.sizes());
            CHECK(at::equal(from_parts, from_cat));
        }
    }
    // The layout itself: panel p, input kk, column c holds row p * 16 + c at kk; zero past N.
    const at::Tensor w = at::arange(20 * 3, at::kFloat).reshape({20, 3});
    const at::Tensor panels = pack_panels(std::vector<at::Tensor>{w.narrow(0, 0, 9), w.narrow(0, 9, 11)});
    CHECK(panels[1][2][3].item<float>() == w[19][2].item<float>());
    CHECK(panels[0][1][15].item<float>() == w[15][1].item<float>());
    CHECK(panels[1][0][4].item<float>() == 0.0f);
    CHECK_THROWS(pack_panels(std::vector<at::Tensor>{at::randn({16, 32}), at::randn({16, 31})}));  // K differs
    CHECK_THROWS(pack_panels(std::vector<at::Tensor>{}));
}
