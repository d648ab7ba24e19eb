// The kernel policy (t5s/kernel_policy.h): CPU detection, the choice, and its description.
#include "t5s/kernel_policy.h"

#include <algorithm>

#include "t5s/env.h"
#include "t5s/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define T5S_X86 1
#else
#define T5S_X86 0
#endif

namespace t5s {
namespace {

constexpr std::pair<CpuClass, const char*> kClassNames[] = {
    {CpuClass::Baseline, "x86-64"},        {CpuClass::Avx2, "avx2"}, {CpuClass::Avx512, "avx512"},
    {CpuClass::Avx512Vnni, "avx512-vnni"}, {CpuClass::Amx, "amx"},
};

#if T5S_X86
// Linux hands out the 8 KB AMX tile state only on request (ARCH_REQ_XCOMP_PERM, XTILEDATA); the
// grant is per process, so asking once at detection covers every thread.
bool amx_granted() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return tile && int8 && syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
}

CpuFeatures detect() {
    __builtin_cpu_init();
    CpuFeatures f;
    f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    f.avx512 = f.avx2_fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    f.avx_vnni = __builtin_cpu_supports("avxvnni");
    f.amx_int8 = f.avx512_vnni && amx_granted();
    f.amd = __builtin_cpu_is("amd");
    return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

// Each switch's choices, as docs/performance.md's table lists them.
KernelIsa vocab_isa(const CpuFeatures& f, const KernelSwitches& s) {
    if (!s.fused_kernels) return KernelIsa::Off;
    if (s.vocab_kernel == "avx512") return f.avx512 ? KernelIsa::Avx512 : KernelIsa::Off;
    if (s.vocab_kernel == "avx2") return f.avx2_fma ? KernelIsa::Avx2 : KernelIsa::Off;
    return f.avx512 ? KernelIsa::Avx512 : f.avx2_fma ? KernelIsa::Avx2 : KernelIsa::Off;
}

Int8Kernel int8_kernel(const CpuFeatures& f, const KernelSwitches& s) {
    if (s.int8_kernel == "rows") return Int8Kernel::Rows;  // any CPU: ATen's int8 product, no VNNI needed
    // Our AVX2 kernel only when asked: its layers give the VNNI kernel's results (8-bit
    // activations) and it was 1.22x FBGEMM at t5-base batch 1, but 0.74x at t5-small batch 1 and
    // 0.6-0.9x from 8 rows (docs/performance.md).
    if (s.int8_kernel == "avx2") return f.avx2_fma ? Int8Kernel::Avx2 : Int8Kernel::Fbgemm;
    if (s.int8_kernel == "fbgemm" || !f.avx512_vnni) return Int8Kernel::Fbgemm;
    if (s.int8_kernel == "vnni" || !f.amx_int8) return Int8Kernel::Vnni;
    return Int8Kernel::Amx;
}

Fp32Gemm fp32_gemm(const CpuFeatures& f, const KernelSwitches& s) {
    if (s.fp32_gemm != "auto") return s.fp32_gemm == "panels" ? Fp32Gemm::Panels : Fp32Gemm::MklPacked;
    // MKL runs its generic code on AMD CPUs (with AVX-512 too: on a Zen 4 EPYC the panels decode
    // t5-small 1.6-2.8x faster than MKL's packed sgemm at 1-32 rows), and the panels stream each
    // weight once for all rows (batch-invariant). On Intel with AVX-512, MKL's wider kernels are
    // expected to win; without AVX2 the portable chains are far slower than any BLAS.
    if (!f.avx2_fma) return Fp32Gemm::MklPacked;
    return f.amd || !f.avx512 ? Fp32Gemm::Panels : Fp32Gemm::MklPacked;
}

// What an int8 kernel needs, as check_kernel_policy names it.
const char* int8_kernel_needs(Int8Kernel k) {
    switch (k) {
        case Int8Kernel::Vnni: return "the AVX512-VNNI int8 kernel";
        case Int8Kernel::Amx: return "AMX tiles";
        case Int8Kernel::Avx2: return "the AVX2 int8 kernel";
        case Int8Kernel::Fbgemm:
        case Int8Kernel::Rows: break;
    }
    return "an int8 kernel";
}

void require(bool ok, const char* what) {
    if (!ok) throw Error(ErrorCode::InvalidArgument, std::string("kernel policy asks for ") + what + ", which this CPU lacks");
}

}  // namespace

const char* to_string(CpuClass c) {
    for (const auto& [cls, name] : kClassNames)
        if (cls == c) return name;
    return "?";
}

std::optional<CpuClass> parse_cpu_class(const std::string& text) {
    for (const auto& [cls, name] : kClassNames)
        if (text == name) return cls;
    return std::nullopt;
}

const CpuFeatures& detect_cpu_features() {
    static const CpuFeatures features = detect();  // the hardware does not change while we run
    return features;
}

CpuClass cpu_class_of(const CpuFeatures& f) {
    if (f.amx_int8 && f.avx512_vnni) return CpuClass::Amx;
    if (f.avx512_vnni) return CpuClass::Avx512Vnni;
    if (f.avx512) return CpuClass::Avx512;
    if (f.avx2_fma) return CpuClass::Avx2;
    return CpuClass::Baseline;
}

CpuFeatures capped_to(CpuFeatures f, CpuClass c) {
    if (c < CpuClass::Amx) f.amx_int8 = false;
    // The AVX2 class is the VNNI-less AMD EPYC / Ryzen of this project: no VNNI of any width.
    if (c < CpuClass::Avx512Vnni) f.avx512_vnni = f.avx512_bf16 = f.avx_vnni = false;
    if (c < CpuClass::Avx512) f.avx512 = false;
    if (c < CpuClass::Avx2) f.avx2_fma = false;
    return f;
}

KernelSwitches read_kernel_switches_from_env() {
    KernelSwitches s;
    s.cpu_class = read_choice_from_env("T5S_CPU_CLASS", {"auto", "x86-64", "avx2", "avx512", "avx512-vnni", "amx"}, "auto");
    s.fp32_gemm = read_choice_from_env("T5S_FP32_GEMM", {"auto", "panels", "mkl"}, "auto");
    s.packed_gemm = read_choice_from_env("T5S_PACKED_GEMM", {"auto", "off", "all"}, "auto");
    s.int8_kernel = read_choice_from_env("T5S_INT8_KERNEL", {"auto", "vnni", "avx2", "fbgemm", "rows"}, "auto");
    s.vocab_kernel = read_choice_from_env("T5S_VOCAB_KERNEL", {"auto", "avx2", "avx512"}, "auto");
    s.fused_kernels = read_bool_from_env("T5S_FUSED_KERNELS", true);
    s.one_pass_step = read_bool_from_env("T5S_ONE_PASS_STEP", true);
    return s;
}

bool KernelPolicy::operator==(const KernelPolicy& o) const {
    return detected == o.detected && cpu == o.cpu && fp32_gemm == o.fp32_gemm && fp32_panels == o.fp32_panels &&
           packing == o.packing && int8 == o.int8 && int8_reduced_range == o.int8_reduced_range && vocab == o.vocab &&
           step == o.step && one_pass_step == o.one_pass_step;
}

KernelPolicy choose_kernel_policy(const CpuFeatures& detected, const KernelSwitches& s) {
    KernelPolicy p;
    p.detected = cpu_class_of(detected);
    const std::optional<CpuClass> cap = parse_cpu_class(s.cpu_class);
    const CpuFeatures f = cap ? capped_to(detected, std::min(*cap, p.detected)) : detected;
    p.cpu = cpu_class_of(f);
    p.fp32_gemm = fp32_gemm(f, s);
    p.fp32_panels = f.avx2_fma ? KernelIsa::Avx2 : KernelIsa::Portable;
    p.packing = s.packed_gemm == "off" ? WeightPacking::Off : s.packed_gemm == "all" ? WeightPacking::All : WeightPacking::Auto;
    p.int8 = int8_kernel(f, s);
    // Without VNNI, FBGEMM and oneDNN sum u8 x s8 pairs in saturating int16 (linear.cpp); our
    // kernels sum in int32 and keep 8 bits.
    p.int8_reduced_range = p.int8 == Int8Kernel::Fbgemm && !(f.avx512_vnni || f.avx_vnni);
    p.vocab = vocab_isa(f, s);
    p.step = !s.fused_kernels ? KernelIsa::Off
             : f.avx512       ? KernelIsa::Avx512
             : f.avx2_fma     ? KernelIsa::Avx2
                              : KernelIsa::Portable;
    p.one_pass_step = s.one_pass_step && p.step != KernelIsa::Off;
    return p;
}

bool cpu_runs_int8_kernel(Int8Kernel k, const CpuFeatures& f) {
    switch (k) {
        case Int8Kernel::Vnni: return f.avx512_vnni;
        case Int8Kernel::Amx: return f.amx_int8;
        case Int8Kernel::Avx2: return f.avx2_fma;
        case Int8Kernel::Fbgemm:
        case Int8Kernel::Rows: return true;
    }
    return false;
}

const KernelPolicy& default_kernel_policy() {
    static const KernelPolicy policy = choose_kernel_policy(detect_cpu_features(), read_kernel_switches_from_env());
    return policy;
}

KernelPolicy kernel_policy_for(CpuClass c) {
    KernelSwitches s = read_kernel_switches_from_env();
    s.cpu_class = to_string(c);
    return choose_kernel_policy(detect_cpu_features(), s);
}

void check_kernel_policy(const KernelPolicy& p) {
    const CpuFeatures& f = detect_cpu_features();
    require(p.fp32_panels != KernelIsa::Avx2 || f.avx2_fma, "the AVX2 panel kernel");
    require(cpu_runs_int8_kernel(p.int8, f), int8_kernel_needs(p.int8));
    for (KernelIsa isa : {p.vocab, p.step}) {
        require(isa != KernelIsa::Avx512 || f.avx512, "AVX-512 kernels");
        require(isa != KernelIsa::Avx2 || f.avx2_fma, "AVX2 kernels");
    }
    require(p.vocab != KernelIsa::Portable, "a portable vocabulary kernel (there is none)");
}

KernelPolicy resolve_kernel_policy(const std::optional<KernelPolicy>& requested) {
    if (!requested) return default_kernel_policy();
    check_kernel_policy(*requested);
    return *requested;
}

std::vector<std::pair<std::string, std::string>> describe_kernels(const KernelPolicy& p) {
    auto isa = [](KernelIsa i, const char* off) -> std::string {
        switch (i) {
            case KernelIsa::Off: return off;
            case KernelIsa::Portable: return "portable";
            case KernelIsa::Avx2: return "AVX2";
            case KernelIsa::Avx512: return "AVX-512";
        }
        return "?";
    };
    const std::string fp32 = p.fp32_gemm == Fp32Gemm::Panels ? "panels, " + isa(p.fp32_panels, "") + " (batch-invariant)"
                                                             : std::string("MKL packed sgemm where LibTorch has it");
    const char* packing = p.packing == WeightPacking::Off   ? "off"
                          : p.packing == WeightPacking::All ? "every weight"
                                                            : "weights of 512x512 and more";
    std::string int8 = p.int8 == Int8Kernel::Amx    ? "AMX from 2 rows, AVX512-VNNI below"
                       : p.int8 == Int8Kernel::Vnni ? "AVX512-VNNI"
                       : p.int8 == Int8Kernel::Avx2 ? "AVX2 (int16 products: the VNNI kernel's results)"
                       : p.int8 == Int8Kernel::Rows ? "int8 rows (ATen int32 products, the CUDA path's twin)"
                                                    : "FBGEMM / oneDNN";
    if (p.int8 == Int8Kernel::Fbgemm && p.int8_reduced_range) int8 += " (7-bit activations)";
    return {
        {"fp32_gemm", fp32},
        {"weight_packing", packing},
        {"int8_gemm", int8},
        {"vocab", isa(p.vocab, "off (ATen)")},
        {"step", p.step == KernelIsa::Off ? "off (ATen op by op)" : "fused, " + isa(p.step, "")},
        {"decode_step", p.one_pass_step ? "one pass per layer over its own buffers (fp32 panels / MKL packed / our int8 layers)"
                                        : "a tensor per operation"},
    };
}

}  // namespace t5s
