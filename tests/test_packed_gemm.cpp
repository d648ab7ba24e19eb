// fp32 linear layers with MKL-packed weights (CPU decoding) against at::linear: the same product
// to rounding for any row count, one packed weight serving them all. The parity suite runs once
// more with every weight packed (ctest engine_packed_gemm, T5S_PACKED_GEMM=all).
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <string>

#include "skip.h"
#include "torch/packed_gemm.h"
#include "torch/t5_network.h"

using namespace t5s;

TEST_CASE("packed fp32 linear equals at::linear for every row count", "[packed][may_skip][mkl]") {
    if (!packed_gemm_available()) {
        CHECK(!pack_linear_weight(at::randn({1024, 512})).defined());
        T5S_SKIP("this LibTorch has no MKL packed sgemm: layers keep at::linear");
    }
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1024, 512}, {700, 600}, {512, 2048}}) {
        at::Tensor w = at::randn({n, k});
        at::Tensor packed = pack_linear_weight(w);
        REQUIRE(packed.defined());
        for (int64_t rows : {1, 2, 5, 8, 13, 32, 97}) {
            at::Tensor x = at::randn({rows, 1, k});  // [B, 1, K] as in a decode step
            at::Tensor got = packed_linear(x, packed, n, k), want = at::linear(x, w);
            REQUIRE(got.sizes() == want.sizes());
            // Same inner products, blocked differently: agreement to fp32 rounding of a k-term sum.
            const double scale = want.abs().max().item<double>();
            CHECK((got - want).abs().max().item<double>() <= 1e-5 * scale);
        }
        // A non-contiguous input (a transposed view) is made contiguous first.
        at::Tensor xt = at::randn({k, 4}).t();
        CHECK(at::allclose(packed_linear(xt, packed, n, k), at::linear(xt, w), 1e-4, 1e-4));
    }
}

TEST_CASE("small weights stay unpacked unless every size is asked for", "[packed][may_skip][mkl]") {
    const at::Tensor small = at::randn({64, 32}), large = at::randn({1024, 512});
    CHECK(!packing_wanted(small, WeightPacking::Auto));
    CHECK(packing_wanted(large, WeightPacking::Auto));
    CHECK(packing_wanted(small, WeightPacking::All));
    CHECK(!packing_wanted(large, WeightPacking::Off));
    if (!packed_gemm_available()) T5S_SKIP("this LibTorch has no MKL packed sgemm");
    CHECK(!pack_linear_weight(large.to(at::kBFloat16)).defined());  // fp32 only
}

TEST_CASE("oneDNN-reordered bf16 linear equals at::linear", "[packed][may_skip][onednn_bf16]") {
    at::Tensor w = at::randn({1024, 512}).to(at::kBFloat16);
    at::Tensor packed = pack_linear_weight_bf16(w);
    if (!packed.defined()) T5S_SKIP("this LibTorch has no oneDNN linear ops for bf16: layers keep at::linear");
    for (int64_t rows : {1, 2, 8, 33}) {
        at::Tensor x = at::randn({rows, 1, 512}).to(at::kBFloat16);
        at::Tensor got = packed_linear_bf16(x, packed), want = at::linear(x, w);
        REQUIRE(got.sizes() == want.sizes());
        REQUIRE(got.scalar_type() == at::kBFloat16);
        // One bf16 rounding step of the output at most (fp32 accumulation in both).
        const double scale = want.to(at::kFloat).abs().max().item<double>();
        CHECK((got.to(at::kFloat) - want.to(at::kFloat)).abs().max().item<double>() <= 1e-2 * scale);
    }
    CHECK(!pack_linear_weight_bf16(at::randn({1024, 512})).defined());  // fp32 goes to MKL instead
}
