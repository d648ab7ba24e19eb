#pragma once
// The int8 kernel for CPUs with AVX2 but no VNNI (AMD EPYC / Ryzen before Zen 4, Intel before
// Cascade Lake). It reads the VNNI kernel's packed weight (int8_gemm.h) and sums the same int32
// products exactly, so its outputs are bit-identical to the VNNI kernel's: one int8 result on
// every CPU class.
//
// Why not FBGEMM there (the fallback before): FBGEMM multiplies u8 x s8 pairs with vpmaddubsw,
// whose int16 sums saturate, so it needs 7-bit activations (less accurate), and at one row it
// streamed t5-base's int8 weights at about half the memory bandwidth. Here each int8 weight is
// sign-extended to int16 and multiplied with vpmaddwd, whose int32 pair sums cannot overflow.
#include <cstdint>

namespace t5s {

struct Int8Weight;

// y [m, w.n] = x [m, w.k] times the packed weight; x's rows are quantised as the VNNI kernel
// quantises them (scale max|x_row| / 127, round to nearest even). Needs AVX2 (the caller checks).
void int8_linear_avx2(const float* x, int64_t m, const Int8Weight& w, float* y);

}  // namespace t5s
