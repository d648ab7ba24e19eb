// The kernel policy's choice (t5s/kernel_policy.h) for the CPU classes this project runs on,
// from synthetic feature sets, and what each T5S_* switch changes. Torch-free.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "t5s/error.h"
#include "t5s/kernel_policy.h"

using namespace t5s;

namespace {

// An AMD EPYC / Ryzen of Zen 2-3: AVX2 + FMA, nothing wider.
CpuFeatures epyc() {
    CpuFeatures f;
    f.avx2_fma = true;
    return f;
}
// An AMD EPYC of Zen 4-5: AVX-512 with VNNI and BF16, no AMX.
CpuFeatures epyc_zen4() {
    CpuFeatures f;
    f.avx2_fma = f.avx512 = f.avx512_vnni = f.avx512_bf16 = f.avx_vnni = f.amd = true;
    return f;
}
// A Sapphire Rapids Xeon: everything, AMX granted.
CpuFeatures sapphire_rapids() {
    CpuFeatures f;
    f.avx2_fma = f.avx512 = f.avx512_vnni = f.avx512_bf16 = f.avx_vnni = f.amx_int8 = true;
    return f;
}

}  // namespace

TEST_CASE("an AVX2-only CPU gets the batch-invariant panels, FBGEMM with 7-bit activations, AVX2 kernels", "[policy]") {
    const KernelPolicy p = choose_kernel_policy(epyc(), KernelSwitches{});
    CHECK(p.detected == CpuClass::Avx2);
    CHECK(p.cpu == CpuClass::Avx2);
    CHECK(p.fp32_gemm == Fp32Gemm::Panels);
    CHECK(p.fp32_panels == KernelIsa::Avx2);
    CHECK(p.packing == WeightPacking::Auto);
    CHECK(p.int8 == Int8Kernel::Fbgemm);
    CHECK(p.int8_reduced_range);  // FBGEMM's int16 pair sums need 7-bit activations there
    KernelSwitches avx2;
    avx2.int8_kernel = "avx2";  // our AVX2 kernel when asked: int32 sums, 8-bit activations
    CHECK(choose_kernel_policy(epyc(), avx2).int8 == Int8Kernel::Avx2);
    CHECK(!choose_kernel_policy(epyc(), avx2).int8_reduced_range);
    CHECK(p.vocab == KernelIsa::Avx2);
    CHECK(p.step == KernelIsa::Avx2);
}

TEST_CASE("an AMD CPU with AVX-512 gets the panels for fp32 (MKL's generic code there) and its AVX-512 kernels", "[policy]") {
    const KernelPolicy p = choose_kernel_policy(epyc_zen4(), KernelSwitches{});
    CHECK(p.cpu == CpuClass::Avx512Vnni);
    CHECK(p.fp32_gemm == Fp32Gemm::Panels);
    CHECK(p.fp32_panels == KernelIsa::Avx2);
    CHECK(p.int8 == Int8Kernel::Vnni);
    CHECK(p.step == KernelIsa::Avx512);
    KernelSwitches mkl;
    mkl.fp32_gemm = "mkl";  // the switch still forces MKL
    CHECK(choose_kernel_policy(epyc_zen4(), mkl).fp32_gemm == Fp32Gemm::MklPacked);
    CpuFeatures intel = epyc_zen4();
    intel.amd = false;
    CHECK(choose_kernel_policy(intel, {}).fp32_gemm == Fp32Gemm::MklPacked);
}

TEST_CASE("an AMX CPU gets MKL packing, AMX int8 with full-range activations, AVX-512 kernels", "[policy]") {
    const KernelPolicy p = choose_kernel_policy(sapphire_rapids(), KernelSwitches{});
    CHECK(p.cpu == CpuClass::Amx);
    CHECK(p.fp32_gemm == Fp32Gemm::MklPacked);
    CHECK(p.int8 == Int8Kernel::Amx);
    CHECK(!p.int8_reduced_range);
    CHECK(p.vocab == KernelIsa::Avx512);
    CHECK(p.step == KernelIsa::Avx512);
}

TEST_CASE("each CPU class in between gets its own choice", "[policy]") {
    CpuFeatures f = sapphire_rapids();
    f.amx_int8 = false;
    CHECK(cpu_class_of(f) == CpuClass::Avx512Vnni);
    CHECK(choose_kernel_policy(f, {}).int8 == Int8Kernel::Vnni);
    f.avx512_vnni = f.avx512_bf16 = false;
    CHECK(cpu_class_of(f) == CpuClass::Avx512);
    CHECK(choose_kernel_policy(f, {}).int8 == Int8Kernel::Fbgemm);
    CHECK(!choose_kernel_policy(f, {}).int8_reduced_range);  // AVX-VNNI keeps FBGEMM at 8 bits
    const KernelPolicy baseline = choose_kernel_policy(CpuFeatures{}, {});
    CHECK(baseline.cpu == CpuClass::Baseline);
    CHECK(baseline.fp32_gemm == Fp32Gemm::MklPacked);
    CHECK(baseline.fp32_panels == KernelIsa::Portable);
    CHECK(baseline.vocab == KernelIsa::Off);
    CHECK(baseline.step == KernelIsa::Portable);
}

TEST_CASE("T5S_CPU_CLASS caps the class and never raises it", "[policy]") {
    KernelSwitches s;
    s.cpu_class = "avx2";
    const KernelPolicy forced = choose_kernel_policy(sapphire_rapids(), s);
    CHECK(forced.detected == CpuClass::Amx);
    CHECK(forced == [] {
        KernelPolicy p = choose_kernel_policy(epyc(), {});
        p.detected = CpuClass::Amx;
        return p;
    }());
    s.cpu_class = "amx";
    CHECK(choose_kernel_policy(epyc(), s) == choose_kernel_policy(epyc(), {}));
    s.cpu_class = "x86-64";
    CHECK(choose_kernel_policy(epyc(), s).step == KernelIsa::Portable);
    // capped_to only removes features.
    CHECK(cpu_class_of(capped_to(epyc(), CpuClass::Amx)) == CpuClass::Avx2);
    CHECK(cpu_class_of(capped_to(sapphire_rapids(), CpuClass::Avx512)) == CpuClass::Avx512);
}

TEST_CASE("every kernel switch keeps its meaning", "[policy]") {
    KernelSwitches s;
    s.fp32_gemm = "mkl";
    CHECK(choose_kernel_policy(epyc(), s).fp32_gemm == Fp32Gemm::MklPacked);
    s.fp32_gemm = "panels";
    CHECK(choose_kernel_policy(sapphire_rapids(), s).fp32_gemm == Fp32Gemm::Panels);
    s = {};
    s.packed_gemm = "off";
    CHECK(choose_kernel_policy(epyc(), s).packing == WeightPacking::Off);
    s.packed_gemm = "all";
    CHECK(choose_kernel_policy(epyc(), s).packing == WeightPacking::All);
    s = {};
    s.int8_kernel = "vnni";
    CHECK(choose_kernel_policy(sapphire_rapids(), s).int8 == Int8Kernel::Vnni);
    s.int8_kernel = "fbgemm";
    CHECK(choose_kernel_policy(sapphire_rapids(), s).int8 == Int8Kernel::Fbgemm);
    CHECK(!choose_kernel_policy(sapphire_rapids(), s).int8_reduced_range);
    s.int8_kernel = "avx2";  // the kernel of CPUs without VNNI, forced where VNNI exists
    CHECK(choose_kernel_policy(sapphire_rapids(), s).int8 == Int8Kernel::Avx2);
    CHECK(choose_kernel_policy(CpuFeatures{}, s).int8 == Int8Kernel::Fbgemm);  // no AVX2: FBGEMM's own code
    s.int8_kernel = "rows";                                                    // the CUDA path's twin: on any CPU, VNNI or not
    CHECK(choose_kernel_policy(sapphire_rapids(), s).int8 == Int8Kernel::Rows);
    CHECK(choose_kernel_policy(epyc(), s).int8 == Int8Kernel::Rows);
    s = {};
    s.vocab_kernel = "avx2";
    CHECK(choose_kernel_policy(sapphire_rapids(), s).vocab == KernelIsa::Avx2);
    s.vocab_kernel = "avx512";
    CHECK(choose_kernel_policy(epyc(), s).vocab == KernelIsa::Off);  // asked for what the CPU lacks: ATen
    s = {};
    s.fused_kernels = false;
    CHECK(choose_kernel_policy(sapphire_rapids(), s).vocab == KernelIsa::Off);
    CHECK(choose_kernel_policy(sapphire_rapids(), s).step == KernelIsa::Off);
    CHECK(!choose_kernel_policy(sapphire_rapids(), s).one_pass_step);  // its norm and attention are the fused kernels
    CHECK(choose_kernel_policy(epyc(), {}).one_pass_step);
    s = {};
    s.one_pass_step = false;  // T5S_ONE_PASS_STEP=0: a tensor per operation, the fused kernels kept
    CHECK(!choose_kernel_policy(epyc(), s).one_pass_step);
    CHECK(choose_kernel_policy(epyc(), s).step == KernelIsa::Avx2);
}

TEST_CASE("class names round-trip and the description names every kernel", "[policy]") {
    for (CpuClass c : {CpuClass::Baseline, CpuClass::Avx2, CpuClass::Avx512, CpuClass::Avx512Vnni, CpuClass::Amx})
        CHECK(parse_cpu_class(to_string(c)) == c);
    CHECK(!parse_cpu_class("avx3"));
    const auto rows = describe_kernels(choose_kernel_policy(epyc(), {}));
    std::set<std::string> names;
    for (const auto& [name, choice] : rows) {
        names.insert(name);
        CHECK(!choice.empty());
    }
    CHECK(names == std::set<std::string>{"fp32_gemm", "weight_packing", "int8_gemm", "vocab", "step", "decode_step"});
    CHECK(rows.front().second == "panels, AVX2 (batch-invariant)");
}

TEST_CASE("a policy asking for more than this CPU has is refused", "[policy]") {
    const KernelPolicy here = default_kernel_policy();
    CHECK(resolve_kernel_policy(std::nullopt) == here);
    CHECK(resolve_kernel_policy(here) == here);
    CHECK_NOTHROW(check_kernel_policy(kernel_policy_for(CpuClass::Baseline)));
    KernelPolicy wish = here;
    wish.vocab = KernelIsa::Portable;  // there is no portable vocabulary kernel
    CHECK_THROWS_AS(check_kernel_policy(wish), Error);
    if (!detect_cpu_features().amx_int8) {
        wish = here;
        wish.int8 = Int8Kernel::Amx;
        CHECK_THROWS_AS(resolve_kernel_policy(wish), Error);
    }
}
