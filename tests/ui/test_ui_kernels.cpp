// The Model panel's CPU-kernel rows: what the engine's model info says, labelled for the panel.
#include <catch2/catch.hpp>

#include "kernel_rows.h"

using namespace t5s;
using namespace t5s::ui;

TEST_CASE("model panel: CPU kernel rows come from the model info", "[ui][kernels]") {
    ModelInfo info;
    CHECK(cpu_kernel_rows(info).empty());  // a model that reports no policy (the fake model) shows none
    info.cpu_class = "avx2";
    info.cpu_class_detected = "avx2";
    info.matmul_kernel = "fp32 panels (AVX2)";
    info.kernels =
        describe_kernels(choose_kernel_policy(capped_to(CpuFeatures{true, true, true, true, true, true}, CpuClass::Avx2), {}));
    const auto rows = cpu_kernel_rows(info);
    REQUIRE(rows.size() == 2 + info.kernels.size());
    CHECK(rows[0] == std::pair<std::string, std::string>{"CPU class", "avx2"});
    CHECK(rows[1].second == info.matmul_kernel);
    for (size_t k = 0; k < info.kernels.size(); ++k) CHECK(rows[2 + k].second == info.kernels[k].second);
    CHECK(rows[2].first == "fp32 GEMM");
    // A class lowered by T5S_CPU_CLASS names the detected one too.
    info.cpu_class_detected = "amx";
    CHECK(cpu_kernel_rows(info)[0].second == "avx2 (detected amx)");
}
