#pragma once
// Which CPU kernels a model runs: chosen once from the CPU's class and the T5S_* switches
// (docs/performance.md "CPU kernels"), carried by value in RuntimeOptions to the model and from there to each
// kernel call. A test can therefore load the same model twice in one process, once with the fast
// path and once with a forced fallback (for_cpu_class), and compare the two.
// Torch-free: the CLI and the app print it (ModelInfo::cpu_class, ModelInfo::kernels).
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace t5s {

// What the CPU offers our kernels; each class includes the ones before it.
enum class CpuClass {
    Baseline,    // x86-64 without AVX2/FMA (or not x86): portable code and LibTorch
    Avx2,        // AVX2 + FMA: AMD Zen 1-4 EPYC / Ryzen, Intel before 2017
    Avx512,      // AVX-512 F/BW: Skylake-SP
    Avx512Vnni,  // + AVX512-VNNI (and BF16 where present): Cascade Lake, Ice Lake, Zen 4
    Amx,         // + AMX-INT8 granted by the OS: Sapphire Rapids and later
};
const char* to_string(CpuClass c);  // "x86-64", "avx2", "avx512", "avx512-vnni", "amx"
std::optional<CpuClass> parse_cpu_class(const std::string& text);

// The instruction-set features our kernels use.
struct CpuFeatures {
    bool avx2_fma = false;
    bool avx512 = false;       // AVX-512 F + BW
    bool avx512_vnni = false;  // AVX512-VNNI (with F + BW): our int8 kernel
    bool avx512_bf16 = false;  // reported only (oneDNN uses it by itself)
    bool avx_vnni = false;     // 256-bit AVX-VNNI: FBGEMM/oneDNN keep 8-bit activations
    bool amx_int8 = false;     // AMX tiles + INT8, and Linux granted the tile state
    bool amd = false;          // an AMD CPU: MKL runs its generic code there, whatever the width
};
// This CPU, detected once per process.
const CpuFeatures& detect_cpu_features();
CpuClass cpu_class_of(const CpuFeatures& f);
// The features a CPU of class `c` would have: those above it dropped (tests and A/B runs force a
// fallback with it; it never adds a feature).
CpuFeatures capped_to(CpuFeatures f, CpuClass c);

// The T5S_* switches that steer the choice (strings as read; each defaults to "auto" / on).
struct KernelSwitches {
    std::string cpu_class = "auto";     // T5S_CPU_CLASS: auto or a class name: choose as on that (lesser) class
    std::string fp32_gemm = "auto";     // T5S_FP32_GEMM: auto | panels | mkl
    std::string packed_gemm = "auto";   // T5S_PACKED_GEMM: auto | off | all
    std::string int8_kernel = "auto";   // T5S_INT8_KERNEL: auto | vnni | fbgemm | rows
    std::string vocab_kernel = "auto";  // T5S_VOCAB_KERNEL: auto | avx2 | avx512
    bool fused_kernels = true;          // T5S_FUSED_KERNELS
    bool one_pass_step = true;          // T5S_ONE_PASS_STEP
};
KernelSwitches read_kernel_switches_from_env();

// An instruction set a hand-written kernel is compiled for; Off = not used (ATen runs instead).
enum class KernelIsa { Off, Portable, Avx2, Avx512 };
enum class Fp32Gemm { MklPacked, Panels };    // Panels: batch-invariant (panel_gemm.h)
enum class WeightPacking { Auto, Off, All };  // which fp32/bf16 weights are packed at load
// Amx: AMX tiles from 2 rows, VNNI below. Avx2: the same packed weight and int32 sums without
// VNNI (bit-identical layer outputs); only when asked (T5S_INT8_KERNEL=avx2). Rows: the device path
// (int8 activations per row, int32 products by at::_int_mm, cuBLASLt's on CUDA), run on the CPU
// as its twin; never chosen by auto.
enum class Int8Kernel { Fbgemm, Vnni, Amx, Rows, Avx2 };
// Whether a CPU with features `f` can execute the int8 kernel (FBGEMM and the rows path pick
// their own code and run anywhere): the one rule the policy check and the kernels share.
bool cpu_runs_int8_kernel(Int8Kernel k, const CpuFeatures& f);

struct KernelPolicy {
    CpuClass detected = CpuClass::Baseline;       // what this CPU is
    CpuClass cpu = CpuClass::Baseline;            // the class the choices below were made for
    Fp32Gemm fp32_gemm = Fp32Gemm::MklPacked;     // packed fp32 weights: MKL's sgemm or our panels
    KernelIsa fp32_panels = KernelIsa::Portable;  // the panel kernel's code: Avx2 or Portable (same bits)
    WeightPacking packing = WeightPacking::Auto;
    Int8Kernel int8 = Int8Kernel::Fbgemm;
    bool int8_reduced_range = true;    // FBGEMM/oneDNN quantise activations to 7 bits (no VNNI)
    KernelIsa vocab = KernelIsa::Off;  // greedy pick / in-place log-softmax: Off, Avx2, Avx512
    KernelIsa step = KernelIsa::Off;   // fused RMS norm + single-query attention: Off = op by op
    // The CPU decode step as one pass per layer over its own buffers, no ATen call per operation
    // (t5_step_cpu.cpp), where step is on and every decoder layer's form takes raw rows; else a
    // tensor per operation. The same bits either way.
    bool one_pass_step = false;
    bool operator==(const KernelPolicy& o) const;
};

// The choice for features `f` under switches `s` (pure: tests feed it synthetic CPUs).
KernelPolicy choose_kernel_policy(const CpuFeatures& f, const KernelSwitches& s);
// This CPU under the environment's switches: chosen once per process (RuntimeOptions' default).
const KernelPolicy& default_kernel_policy();
// This CPU as if it were of class `c` (capped_to), under the environment's other switches: the
// forced fallback tests run beside the default.
KernelPolicy kernel_policy_for(CpuClass c);
// Throws InvalidArgument when `p` asks for an instruction set this CPU lacks.
void check_kernel_policy(const KernelPolicy& p);
// RuntimeOptions::kernels made definite: the default when empty, else the request, checked.
KernelPolicy resolve_kernel_policy(const std::optional<KernelPolicy>& requested);

// What `info` and the Model panel print: (kernel, choice) pairs in a fixed order, e.g.
// ("fp32_gemm", "panels (AVX2, batch-invariant)"), ("int8", "AMX from 2 rows, AVX512-VNNI below").
std::vector<std::pair<std::string, std::string>> describe_kernels(const KernelPolicy& p);

}  // namespace t5s
