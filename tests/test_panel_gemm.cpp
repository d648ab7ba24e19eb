// fp32 linear layers held in panels for our AVX2 kernel (CPU decoding, panel_gemm.h): the product
// of at::linear to rounding, and batch-invariant bit for bit — a row's result does not depend on
// how many rows are multiplied with it, where it sits, the thread count or the CPU path.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <utility>

#include "torch/panel_gemm.h"

using namespace t5s;

namespace {

const std::pair<int64_t, int64_t> kShapes[] = {{1024, 512}, {700, 600}, {512, 2048}, {33, 40}};  // N x K; 700, 33: a part panel
const int64_t kRowCounts[] = {1, 2, 3, 4, 5, 6, 7, 13, 16, 29, 97};

}  // namespace

TEST_CASE("panel fp32 linear equals at::linear for every row count", "[packed][panels]") {
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        CHECK(panels.sizes() == at::IntArrayRef({(n + 15) / 16, k, 16}));
        for (int64_t rows : kRowCounts) {
            at::Tensor x = at::randn({rows, 1, k});  // [B, 1, K] as in a decode step
            at::Tensor got = panel_linear(x, panels, n), want = at::linear(x, w);
            REQUIRE(got.sizes() == want.sizes());
            const double scale = want.abs().max().item<double>();
            CHECK((got - want).abs().max().item<double>() <= 1e-5 * scale);
        }
        at::Tensor xt = at::randn({k, 4}).t();  // a non-contiguous input
        CHECK(at::allclose(panel_linear(xt, panels, n), at::linear(xt, w), 1e-4, 1e-4));
    }
}

TEST_CASE("a row's panel product is the same bits in any batch, position and thread count", "[packed][panels]") {
    const int threads_before = at::get_num_threads();
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        at::Tensor batch = at::randn({97, k});
        at::set_num_threads(2);
        at::Tensor whole = panel_linear(batch, panels, n);
        at::set_num_threads(1);
        CHECK(at::equal(panel_linear(batch, panels, n), whole));
        at::set_num_threads(threads_before);
        for (int64_t rows : kRowCounts) {
            for (int64_t start : {int64_t{0}, 97 - rows, (97 - rows) / 2}) {
                at::Tensor part = panel_linear(batch.narrow(0, start, rows), panels, n);
                CHECK(at::equal(part, whole.narrow(0, start, rows)));
            }
        }
    }
}

TEST_CASE("the portable panel path gives the AVX2 kernel's bits", "[packed][panels]") {
    // Where the CPU lacks AVX2 both calls take the portable path: the check still holds.
    INFO("AVX2/FMA kernel on this CPU: " << panel_gemm_has_avx2());
    for (auto [n, k] : kShapes) {
        at::Tensor w = at::randn({n, k});
        at::Tensor panels = pack_panels(w);
        for (int64_t rows : {int64_t{1}, int64_t{6}, int64_t{13}}) {
            at::Tensor x = at::randn({rows, k});
            CHECK(at::equal(panel_linear(x, panels, n), panel_linear_portable(x, panels, n)));
        }
    }
}

TEST_CASE("panel products refuse inputs they cannot multiply", "[packed][panels]") {
    at::Tensor panels = pack_panels(at::randn({64, 32}));
    CHECK_THROWS(panel_linear(at::randn({2, 31}), panels, 64));                      // K differs
    CHECK_THROWS(panel_linear(at::randn({2, 32}).to(at::kDouble), panels, 64));      // not fp32
    CHECK_THROWS(pack_panels(at::randn({64, 32}).to(at::kBFloat16)));                // fp32 weights only
    CHECK(panel_linear(at::randn({0, 32}), panels, 64).sizes() == at::IntArrayRef({0, 64}));  // no rows
}
