#pragma once
// int8 without VNNI (AMD EPYC / Ryzen before Zen 4, Intel before Cascade Lake), chosen by
// T5S_INT8_KERNEL=avx2. It reads the VNNI kernel's packed weight (int8_gemm.h) and sums the same
// int32 products exactly, so each layer's output is bit-identical to the VNNI kernel's, with 8-bit
// activations. (A whole model still differs in the last bits between CPU classes: its fp32 step
// kernels are AVX2 or AVX-512 code.) Each int8 weight is sign-extended to int16 and multiplied
// with vpmaddwd, whose int32 pair sums cannot overflow.
//
// Why not the default there: measured with the AVX2 class forced (docs/performance.md), this kernel
// was 1.22x FBGEMM at t5-base batch 1, 0.74x at t5-small batch 1, 0.6-0.9x from 8 rows. FBGEMM,
// the default without VNNI, multiplies u8 x s8 pairs with vpmaddubsw at the price of 7-bit
// activations (its int16 pair sums would saturate with 8).
#include <cstdint>

namespace t5s {

struct Int8Weight;

// y [m, w.n] = x [m, w.k] times the packed weight; x's rows are quantised as the VNNI kernel
// quantises them (scale max|x_row| / 127, round to nearest even). Needs AVX2 (the caller checks).
void int8_linear_avx2(const float* x, int64_t m, const Int8Weight& w, float* y);

}  // namespace t5s
