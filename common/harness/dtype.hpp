/// @file dtype.hpp
/// @brief Element types of the chapters (fp32, tf32, bf16, fp16, fp8 e4m3), their names and their tolerances.
#pragma once

#include "gemm/problem.hpp"  // kScaleBlock

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <string_view>

namespace mm {

/// @brief How a GEMM stores its inputs and multiplies them.
/// `tf32` stores fp32 but multiplies on tensor cores with 10-bit mantissas. The two fp8 entries
/// store e4m3 (with a per-tensor scale each, GemmProblem::scale_a/scale_b) and differ in how the
/// products are added: `e4m3` as the tensor core adds them, all along K in its own accumulator (which
/// keeps fewer bits than fp32: cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1), `e4m3_promoted` with
/// the partial sums moved into fp32 registers every few K steps (FAST_ACCUM = 0, cuBLASLt's default).
/// `e4m3_block` is DeepSeek-V3's recipe: a scale per 1×128 block of A and per 128×128 block of B
/// (GemmProblem::scale_a/scale_b then point at scale tensors), the partial sums of every 128 K
/// promoted to fp32 with their two scales applied.
enum class DType { f32, tf32, bf16, f16, e4m3, e4m3_promoted, e4m3_block };

/// @brief The short name used in tables and CSV files ("fp32", "tf32", "bf16", "fp16").
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
    case DType::e4m3: return "e4m3";
    case DType::e4m3_promoted: return "e4m3_promoted";
    case DType::e4m3_block: return "e4m3_block";
  }
  return "?";
}

/// @brief Per-element tolerance of a GEMM result stored in fp32, relative to sum_k |a_ik * b_kj|.
///
/// The reference is computed in fp64 from the very inputs the kernel was given, so what is left is
/// what the kernel rounds. Measured against the sum of |products| (not against |c|, which
/// cancellation can make arbitrarily small), each number below holds whatever K:
///
/// - f32: 1e-5. Only fp32 rounding of products and partial sums. Its worst case, K·2^-24, is never
///   approached with inputs of both signs: each rounding is relative to a partial sum (about √k·|ab|),
///   so the error stays a few 2^-24 of sum|ab| at any K (at 64×64×K, K = 16 to 16384, the worst
///   element is 1.5e-7 to 2.6e-7). 1e-5 leaves 40× that for any order of summation, and fails a
///   result whose inputs were rounded to tf32 up to K ≈ 8192: those errors shrink as 1/√K against
///   sum|ab| (on average 9e-6 at K = 1024, 4e-6 at 4096; tests/harness/test_check.cpp): 4e-5 would
///   pass a tf32 result at K = 4096 as fp32.
/// - tf32: 4e-3. Each fp32 input is rounded to tf32 (11 significant bits) before it is multiplied:
///   |δ| ≤ 2^-11 with round to nearest (cvt.rna.tf32.f32), 2^-10 where the hardware truncates, so a
///   product a·b(1+δa)(1+δb) is off by at most 2^-10·|ab| (2^-9 truncated), and so is the sum
///   against sum|ab|, whatever K. 4e-3 is 4× the round-to-nearest bound, 2× the truncated one.
/// - bf16 and f16 (16-bit inputs, fp32 accumulation): 1e-5, as f32. The inputs are the stored 16-bit
///   values, which the reference sees too, and their products (8×8 or 11×11 significant bits) are
///   exact in fp32: only the fp32 accumulation is left. A 16-bit *output* adds its own rounding:
///   see gemm_tolerance.
/// - e4m3, e4m3_promoted and e4m3_block: 1e-2. The products of two e4m3 codes (4 × 4 significant bits) are exact,
///   and the reference multiplies the same codes (and scales: powers of two or not, the scales
///   multiply the reference as they do the result). What is left is the accumulation: the tensor
///   core aligns each instruction's 32 products and its accumulator to the largest exponent among
///   them and keeps about 13 bits below it (DeepSeek-V3's report: "around 14 bits"), so each of the
///   K/32 instructions may lose 2^-13 of the running sum's magnitude. With inputs of both signs the
///   running sum stays near √k·|ab| while sum|ab| grows as k: against sum|ab|, the loss of K/32
///   instructions is about 2·√K/(32·2^13), 1e-3 at K = 16384 (measured: chapter 12's page).
///   1e-2 leaves 10× that, and fails a wrong tile or a lost K slice, whose error is of the size of
///   the result itself. Promoted accumulation only makes it smaller.
constexpr double elementwise_tolerance(DType t) {
  switch (t) {
    case DType::f32: return 1e-5;
    case DType::tf32: return 4e-3;
    case DType::bf16: return 1e-5;  // bf16 inputs, fp32 accumulation, fp32 output
    case DType::f16: return 1e-5;   // fp16 inputs, fp32 accumulation, fp32 output
    case DType::e4m3:
    case DType::e4m3_promoted:
    case DType::e4m3_block: return 1e-2;  // e4m3 inputs, the tensor core's accumulation
  }
  return 0.0;
}

/// @brief `x` rounded to tf32 (10 explicit mantissa bits) to nearest, ties away from zero: what
/// `cvt.rna.tf32.f32` does on the device, for host emulations and tests. The result is an fp32
/// whose 13 low mantissa bits are zero.
///
/// Adding half of the last kept bit (0x1000) to the magnitude and clearing the 13 dropped bits rounds
/// to nearest with ties away from zero; a carry out of the mantissa steps the exponent up, and one
/// out of the largest finite exponent gives infinity, as IEEE rounding does. Infinities pass
/// unchanged; a NaN stays a NaN (its payload might otherwise round to infinity).
__host__ __device__ inline float round_to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return x;  // NaN
  bits = (bits + 0x1000u) & ~0x1FFFu;                  // a carry never reaches the sign bit: |x| ≤ inf = 0x7F800000
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

/// @brief Size in bytes of one stored element of `t`.
constexpr int dtype_bytes(DType t) {
  if (t == DType::e4m3 || t == DType::e4m3_promoted || t == DType::e4m3_block) return 1;
  return (t == DType::bf16 || t == DType::f16) ? 2 : 4;
}

/// @brief True for the fp8 types (e4m3 codes with per-tensor or block scales).
constexpr bool is_fp8(DType t) { return t == DType::e4m3 || t == DType::e4m3_promoted || t == DType::e4m3_block; }

// kScaleBlock, the K (and B's N) extent of one block of DType::e4m3_block's scales: gemm/problem.hpp,
// where the scales' layout is described (the kernels read it there, never from the harness).

/// @brief Maps a storage type to its DType (float maps to fp32, e4m3 to the tensor core's own
/// accumulation; ask for tf32 or e4m3_promoted explicitly).
template <class T> constexpr DType dtype_of();
/// @cond SPECIALIZATIONS
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<__nv_bfloat16>() { return DType::bf16; }
template <> constexpr DType dtype_of<__half>() { return DType::f16; }
template <> constexpr DType dtype_of<__nv_fp8_e4m3>() { return DType::e4m3; }
/// @endcond

}  // namespace mm
