// Tensor-core MMA atoms of sm_80 (Ampere, and Hopper's mma.sync path): the raw instructions and,
// beside each, its traits: which lane of the warp holds which element of A, B and C.
//
//   raw instruction                       traits (TV layouts)
//   SM80_16x8x16_F32BF16BF16F32_TN  <->   MMA_Traits<...>: D(16×8,f32) = A(16×16,bf16)·B(16×8,bf16) + C
//   SM80_16x8x8_F32TF32TF32F32_TN   <->   MMA_Traits<...>: D(16×8,f32) = A(16×8,tf32)·B(8×8,tf32) + C
//
// "TN" is BLAS's name for what the instruction multiplies: A is M×K with K contiguous in each
// lane's registers ("row"), B is K×N with K contiguous ("col"): `mma.sync.aligned.m16n8k16.row.col`.
// Either operand can be stored in memory any way; the copy into registers (ldmatrix, or .trans)
// brings it into this order.
//
// The TV layouts follow the library's convention for MMA traits (mma.hpp): (thread, value) -> the
// column-major index of the element in the atom's tile, m + M·k for A, n + N·k for B, m + M·n for
// C. They encode the PTX ISA's figures "Matrix Fragments for mma.m16n8k16 with floating point
// type" and "... for mma.m16n8k8" (.tf32), where a lane's position is split as
//   groupID = lane / 4 (0..7),  threadID_in_group = lane % 4 (0..3).
// tests/layout/test_mma_sm80.cpp checks every element against those figures' formulas.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>

#include "layout/mma.hpp"

namespace mm {

namespace detail {
// mma.sync with bf16/tf32 and cvt.rna.tf32 exist from sm_80: a use that reaches an older target's
// pass must not compile. The check is a template on S, and the instructions below are templates
// too (`template <class = void>`), so that it fires only where one is used: a plain function would
// check in every sm_75 pass of every file that includes this header.
template <class S>
MM_HD void require_sm80_mma() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800)
  static_assert(sizeof(S) == 0,
                "mma.sync with bf16/tf32 (SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x8_F32TF32TF32F32_TN) and "
                "to_tf32 need sm_80 or newer: guard the kernel body with "
                "`if constexpr (arch::compiled_for(arch::sm80))` (layout/arch.hpp)");
#endif
}
// The warp-wide instructions below cannot run on one host thread: each lane's result needs the
// other 31 lanes' registers. A host call is a programming error (the CPU tests emulate a whole warp
// through the TV layouts instead), and it stops loudly rather than returning an unwritten result.
[[noreturn]] inline void warp_mma_on_host(char const* name) {
  std::fprintf(stderr, "mm: %s is a warp-wide tensor-core instruction; it has no single-thread host version\n", name);
  std::abort();
}
}  // namespace detail

// ---- Raw instructions ----

/// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (PTX ISA, "Warp-level matrix multiply-
/// accumulate instructions: mma"): D = A·B + C for a 16×8×16 tile, one warp. Each lane passes four
/// 32-bit registers of A (two bf16 each), two of B and four fp32 accumulators. sm_80+.
struct SM80_16x8x16_F32BF16BF16F32_TN {
  using DRegisters = float[4];          ///< d0..d3
  using ARegisters = std::uint32_t[4];  ///< a0..a3, each two bf16 (the lower k in the low half)
  using BRegisters = std::uint32_t[2];  ///< b0..b1, each two bf16
  using CRegisters = float[4];          ///< c0..c3
  /// One instruction.
  template <class = void>
  MM_HD static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t a0, std::uint32_t a1,
                        std::uint32_t a2, std::uint32_t a3, std::uint32_t b0, std::uint32_t b1, float c0, float c1,
                        float c2, float c3) {
    detail::require_sm80_mma<float>();
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#endif
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::warp_mma_on_host("SM80_16x8x16_F32BF16BF16F32_TN");
#endif
  }
};

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: D = A·B + C for a 16×8×8 tile of tf32
/// inputs (fp32 registers whose 13 low mantissa bits the tensor core ignores; round them first with
/// to_tf32). Four registers of A, two of B, four accumulators per lane. sm_80+.
struct SM80_16x8x8_F32TF32TF32F32_TN {
  using DRegisters = float[4];          ///< d0..d3
  using ARegisters = std::uint32_t[4];  ///< a0..a3, one tf32 each
  using BRegisters = std::uint32_t[2];  ///< b0..b1, one tf32 each
  using CRegisters = float[4];          ///< c0..c3
  /// One instruction.
  template <class = void>
  MM_HD static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t a0, std::uint32_t a1,
                        std::uint32_t a2, std::uint32_t a3, std::uint32_t b0, std::uint32_t b1, float c0, float c1,
                        float c2, float c3) {
    detail::require_sm80_mma<float>();
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#endif
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::warp_mma_on_host("SM80_16x8x8_F32TF32TF32F32_TN");
#endif
  }
};

/// `cvt.rna.tf32.f32` (PTX ISA, "cvt"): rounds an fp32 value to tf32 (10 explicit mantissa bits),
/// to nearest with ties away from zero, returned as an fp32 bit pattern with the low 13 bits zero.
/// The tensor core would otherwise truncate. On the host: the same rounding in integer arithmetic
/// (NaN and infinity pass through). sm_80+ on the device.
template <class = void>
MM_HD float to_tf32(float x) {
#if defined(__CUDA_ARCH__)
  detail::require_sm80_mma<float>();
#if __CUDA_ARCH__ >= 800
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#else
  return x;
#endif
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u) {  // finite: add half of the dropped unit, then drop 13 bits
    u += 0x1000u;                          // ties (0x1000 exactly) round away from zero: the magnitude grows
    u &= 0xffffe000u;
  }
  std::memcpy(&x, &u, sizeof u);
  return x;
#endif
}

namespace detail {
/// Two bf16 values in one 32-bit register, `lo` in the low half: the operand order of mma.sync
/// (the element with the lower k, or the lower column, first).
MM_HD std::uint32_t pack_bf16x2(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  std::uint16_t l, h;
  std::memcpy(&l, &lo, 2);
  std::memcpy(&h, &hi, 2);
  return std::uint32_t(l) | (std::uint32_t(h) << 16);
}
/// Register j of a bf16 fragment: its values 2j (low half) and 2j+1 (high half). Where the fragment
/// keeps the two as neighbours in one static layout (a register fragment, as make_fragment_A/B build
/// it), the 32-bit word is read whole: the compiler then hands mma.sync the very register ldmatrix
/// wrote. Packing the halves one by one (pack_bf16x2) gives the same bits, but nvcc then rebuilds each
/// register with a PRMT or MOV before every group of mma.sync (64 per K step in chapter 08's kernels).
template <int J, class Frag>
MM_HD std::uint32_t bf16_register(Frag const& t) {
  using L = std::remove_cvref_t<decltype(t.layout())>;
  using Ref = decltype(t(0));
  if constexpr (is_static_v<L> && std::is_lvalue_reference_v<Ref>) {
    constexpr int lo = int(decltype(L{}(Int<2 * J>{}))::value);
    constexpr int hi = int(decltype(L{}(Int<2 * J + 1>{}))::value);
    if constexpr (hi == lo + 1) {
      std::uint32_t u;
      std::memcpy(&u, &t(2 * J), sizeof u);
      return u;
    }
  }
  return pack_bf16x2(t(2 * J), t(2 * J + 1));
}
/// The bits of an fp32 (tf32) value, as mma.sync's .tf32 operand takes them.
MM_HD std::uint32_t tf32_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
}  // namespace detail

// ---- Traits ----

/// bf16 m16n8k16, fp32 accumulators. From the PTX ISA's fragment figures for .bf16:
///  A (16×16), a_i for i = 0..7 (two per register): row = groupID + 8·(i/2 % 2), col =
///    2·threadID_in_group + i % 2 + 8·(i/4). As (thr, val) -> m + 16·k: threadID_in_group steps k
///    by 2 (32), groupID steps m (1); val = (k+1, m+8, k+8): strides (16, 8, 128).
///  B (16×8), b_i for i = 0..3: row (k) = 2·threadID_in_group + i % 2 + 8·(i/2), col (n) = groupID.
///    (thr, val) -> n + 8·k: (16, 1), val = (k+1, k+8): (8, 64).
///  C (16×8), c_i for i = 0..3: row = groupID + 8·(i/2), col = 2·threadID_in_group + i % 2.
///    (thr, val) -> m + 16·n: (32, 1), val = (n+1, m+8): (16, 8).
/// A lane's values are in register order: values 2j and 2j+1 share register j.
template <>
struct MMA_Traits<SM80_16x8x16_F32BF16BF16F32_TN> {
  using ValTypeD = float;          ///< Accumulator type written.
  using ValTypeA = __nv_bfloat16;  ///< A element type.
  using ValTypeB = __nv_bfloat16;  ///< B element type.
  using ValTypeC = float;          ///< Accumulator type read.
  using Shape_MNK = Shape<_16, _8, _16>;  ///< The tile of one instruction.
  using ThrID = Layout<_32>;              ///< A warp.
  /// (thr, val) -> m + 16·k
  using ALayout = Layout<Shape<Shape<_4, _8>, Shape<_2, _2, _2>>, Stride<Stride<_32, _1>, Stride<_16, _8, _128>>>;
  /// (thr, val) -> n + 8·k
  using BLayout = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_16, _1>, Stride<_8, _64>>>;
  /// (thr, val) -> m + 16·n
  using CLayout = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_32, _1>, Stride<_16, _8>>>;

  /// D = A·B + C on this lane's fragments: d, c (4 floats), a (8 bf16), b (4 bf16), in value order.
  template <class TD, class TA, class TB, class TC>
  MM_HD static void call(TD&& d, TA const& a, TB const& b, TC const& c) {
    using detail::bf16_register;
    SM80_16x8x16_F32BF16BF16F32_TN::fma(d(0), d(1), d(2), d(3), bf16_register<0>(a), bf16_register<1>(a),
                                        bf16_register<2>(a), bf16_register<3>(a), bf16_register<0>(b),
                                        bf16_register<1>(b), c(0), c(1), c(2), c(3));
  }
};

/// tf32 m16n8k8, fp32 accumulators. From the PTX ISA's fragment figures for .tf32:
///  A (16×8), a_i for i = 0..3: row = groupID + 8·(i % 2), col = threadID_in_group + 4·(i/2).
///    (thr, val) -> m + 16·k: (16, 1), val = (m+8, k+4): (8, 64).
///  B (8×8), b_i for i = 0..1: row (k) = threadID_in_group + 4·i, col (n) = groupID.
///    (thr, val) -> n + 8·k: (8, 1), val = (k+4): (32).
///  C: as for m16n8k16.
/// The values are fp32 registers already rounded to tf32 (to_tf32): the instruction reads their bits.
template <>
struct MMA_Traits<SM80_16x8x8_F32TF32TF32F32_TN> {
  using ValTypeD = float;  ///< Accumulator type written.
  using ValTypeA = float;  ///< A element type (tf32 in an fp32 register).
  using ValTypeB = float;  ///< B element type (tf32 in an fp32 register).
  using ValTypeC = float;  ///< Accumulator type read.
  using Shape_MNK = Shape<_16, _8, _8>;  ///< The tile of one instruction.
  using ThrID = Layout<_32>;             ///< A warp.
  /// (thr, val) -> m + 16·k
  using ALayout = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_16, _1>, Stride<_8, _64>>>;
  /// (thr, val) -> n + 8·k
  using BLayout = Layout<Shape<Shape<_4, _8>, _2>, Stride<Stride<_8, _1>, _32>>;
  /// (thr, val) -> m + 16·n
  using CLayout = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_32, _1>, Stride<_16, _8>>>;

  /// D = A·B + C on this lane's fragments: d, c (4 floats), a (4), b (2), in value order.
  template <class TD, class TA, class TB, class TC>
  MM_HD static void call(TD&& d, TA const& a, TB const& b, TC const& c) {
    using detail::tf32_bits;
    SM80_16x8x8_F32TF32TF32F32_TN::fma(d(0), d(1), d(2), d(3), tf32_bits(a(0)), tf32_bits(a(1)), tf32_bits(a(2)),
                                       tf32_bits(a(3)), tf32_bits(b(0)), tf32_bits(b(1)), c(0), c(1), c(2), c(3));
  }
};

}  // namespace mm
