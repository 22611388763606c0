// ldmatrix: a warp loads 8×8 matrices of 16-bit elements from shared memory straight into the
// register fragments of mma.sync (sm_75+). The raw instructions and, beside them, their traits.
//
//   raw instruction                               traits (TV layouts, in b16 elements)
//   SM75_U32x1_LDSM_N   ldmatrix...x1.b16         Copy_Traits<...>: Src, Dst = Ref
//   SM75_U32x2_LDSM_N   ldmatrix...x2.b16
//   SM75_U32x4_LDSM_N   ldmatrix...x4.b16
//   SM75_U16x2_LDSM_T   ldmatrix...x1.trans.b16
//   SM75_U16x4_LDSM_T   ldmatrix...x2.trans.b16
//   SM75_U16x8_LDSM_T   ldmatrix...x4.trans.b16
//   SM90_U32x4_STSM_N   stmatrix...x4.b16         Copy_Traits<...>: ldmatrix.x4's, Src and Dst swapped
//
// What one instruction does (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): .x1/.x2/.x4
// load 1, 2 or 4 matrices of 8 rows × 8 b16 (16 bytes a row). Lanes 8j..8j+7 give the addresses of
// the 8 rows of matrix j (each row 16 contiguous, 16-byte aligned bytes; the rows anywhere). Lane t
// receives, in its register j, two b16 of matrix j: row t/4, columns 2(t%4) and 2(t%4)+1, the lower
// column in the lower half. With .trans it receives the matrix transposed: rows 2(t%4) and
// 2(t%4)+1 of column t/4. The register j is what the mma.sync fragments want: lane t's
// (groupID, 2·threadID_in_group) pair.
//
// The traits describe the instruction's tile of R matrices as the b16 elements e = col + 8·row +
// 64·matrix (row = the address a lane gives, col = the b16 within it):
//   SrcLayout (thread, value) -> e: lane s reads the 8 b16 of row s%8 of matrix s/8. For .x1/.x2 the
//     lanes past 8R repeat the first 8R (the instruction ignores their addresses, and a partition
//     gives them valid ones).
//   DstLayout (thread, (half, register)) -> e: as above; RefLayout = DstLayout, so a TiledCopy made
//     from an MMA's TV layout (make_tiled_copy_A/B) gives each lane its MMA fragment.
// Copy_Atom<Op, T> sees them in units of T: with T = bf16/half as they are; with T = float (tf32)
// the non-transposing ones move 4 fp32 a row and lane t receives one fp32 (row t/4, column t%4) per
// register, which is tf32 m16n8k8's fragment of a K-major A or B. A transposing one swaps 16-bit
// halves, so it takes 16-bit T only.
//
// On the host an ldmatrix cannot run on one thread (each lane's registers come from the other
// lanes' addresses); the CPU tests emulate the warp: ldmatrix_on_host (addresses in, registers out)
// and copy_warp_on_host (a whole TiledCopy partition of a warp).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layout/copy.hpp"

namespace mm {

namespace detail {
// ldmatrix exists from sm_75 (Turing): a use that reaches an older target's pass must not compile.
// A kernel that uses it guards its body with arch::compiled_for(arch::sm75) (layout/arch.hpp).
template <class S>
MM_HD void require_sm75() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 750)
  static_assert(sizeof(S) == 0,
                "ldmatrix (SM75_*_LDSM_* atoms) needs sm_75 or newer: guard the kernel body with "
                "`if constexpr (arch::compiled_for(arch::sm75))` (layout/arch.hpp)");
#endif
}
// A warp-wide instruction called on one host thread: a programming error (emulate the warp).
[[noreturn]] inline void warp_copy_on_host(char const* name) {
  std::fprintf(stderr, "mm: %s is a warp-wide instruction; it has no single-thread host version (use ldmatrix_on_host)\n",
               name);
  std::abort();
}
}  // namespace detail

// ---- Raw instructions ----
// No "memory" clobber: they only read shared memory, through an address the compiler sees as an
// input; `asm volatile` keeps them in order with the barriers and cp.async waits around them.

/// `ldmatrix.sync.aligned.m8n8.x1.shared.b16` (PTX ISA, "Warp-level matrix load instruction:
/// ldmatrix"): one 8×8 b16 matrix, lanes 0-7 give the row addresses. sm_75+.
struct SM75_U32x1_LDSM_N {
  using SRegisters = uint128_t;         ///< The row this lane points at (16 bytes of shared memory).
  using DRegisters = std::uint32_t[1];  ///< Two b16 of the matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(d0) : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0;
    detail::warp_copy_on_host("SM75_U32x1_LDSM_N");
#endif
  }
};

/// `ldmatrix.sync.aligned.m8n8.x2.shared.b16` (PTX ISA, "...: ldmatrix"):
/// two matrices, lanes 0-15 give the row addresses. sm_75+.
struct SM75_U32x2_LDSM_N {
  using SRegisters = uint128_t;         ///< The row this lane points at.
  using DRegisters = std::uint32_t[2];  ///< Two b16 of each matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0, std::uint32_t& d1) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0, (void)d1;
    detail::warp_copy_on_host("SM75_U32x2_LDSM_N");
#endif
  }
};

/// `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (PTX ISA, "...: ldmatrix"):
/// four matrices, every lane gives a row address. sm_75+.
struct SM75_U32x4_LDSM_N {
  using SRegisters = uint128_t;         ///< The row this lane points at.
  using DRegisters = std::uint32_t[4];  ///< Two b16 of each matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0, std::uint32_t& d1, std::uint32_t& d2,
                         std::uint32_t& d3) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0, (void)d1, (void)d2, (void)d3;
    detail::warp_copy_on_host("SM75_U32x4_LDSM_N");
#endif
  }
};

/// `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16` (PTX ISA, "...: ldmatrix"):
/// one matrix, transposed. sm_75+.
struct SM75_U16x2_LDSM_T {
  using SRegisters = uint128_t;         ///< The row this lane points at.
  using DRegisters = std::uint32_t[1];  ///< Two b16 of a column of the matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(d0)
                 : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0;
    detail::warp_copy_on_host("SM75_U16x2_LDSM_T");
#endif
  }
};

/// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16` (PTX ISA, "...: ldmatrix"):
/// two matrices, transposed. sm_75+.
struct SM75_U16x4_LDSM_T {
  using SRegisters = uint128_t;         ///< The row this lane points at.
  using DRegisters = std::uint32_t[2];  ///< Two b16 of a column of each matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0, std::uint32_t& d1) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0, (void)d1;
    detail::warp_copy_on_host("SM75_U16x4_LDSM_T");
#endif
  }
};

/// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (PTX ISA, "...: ldmatrix"):
/// four matrices, transposed. sm_75+.
struct SM75_U16x8_LDSM_T {
  using SRegisters = uint128_t;         ///< The row this lane points at.
  using DRegisters = std::uint32_t[4];  ///< Two b16 of a column of each matrix.
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(uint128_t const& smem_row, std::uint32_t& d0, std::uint32_t& d1, std::uint32_t& d2,
                         std::uint32_t& d3) {
    detail::require_sm75<uint128_t>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(detail::smem_address(&smem_row)));
#elif !defined(__CUDA_ARCH__)
    (void)smem_row, (void)d0, (void)d1, (void)d2, (void)d3;
    detail::warp_copy_on_host("SM75_U16x8_LDSM_T");
#endif
  }
};

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16` (PTX ISA, "Warp-level matrix store instruction:
/// stmatrix"): ldmatrix.x4 run backwards. Lane t gives in its register j the two b16 of matrix j at
/// row t/4, columns 2(t%4) and 2(t%4)+1 (the accumulator fragment of mma.sync and wgmma, once
/// converted to 16 bits), and lanes 8j..8j+7 give the addresses of the 8 rows of matrix j. A warp
/// writes four 8×8 tiles, 16 bytes a row, in one instruction instead of 16 stores of 4 bytes. sm_90+.
struct SM90_U32x4_STSM_N {
  using SRegisters = std::uint32_t[4];  ///< Two b16 of each matrix.
  using DRegisters = uint128_t;         ///< The row this lane points at (16 bytes of shared memory).
  /// One instruction (a template only so that the architecture check fires where it is used).
  template <class = void>
  MM_HD static void copy(std::uint32_t s0, std::uint32_t s1, std::uint32_t s2, std::uint32_t s3, uint128_t& smem_row) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900)
    static_assert(sizeof(uint128_t) == 0,
                  "stmatrix (SM90_U32x4_STSM_N) needs sm_90 or newer: guard the kernel body with "
                  "`if constexpr (arch::compiled_for(...))` (layout/arch.hpp)");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                     detail::smem_address(&smem_row)),
                 "r"(s0), "r"(s1), "r"(s2), "r"(s3)
                 : "memory");
#elif !defined(__CUDA_ARCH__)
    (void)s0, (void)s1, (void)s2, (void)s3, (void)smem_row;
    detail::warp_copy_on_host("SM90_U32x4_STSM_N");
#endif
  }
};

// ---- Traits ----

namespace detail {
// The traits of an ldmatrix of R matrices, in b16 elements e = col + 8·row + 64·matrix.
//   Src: lane s (of the 8R that give addresses; the others repeat them) reads row s%8 of matrix s/8.
//   Dst: lane t, value (half h, register j) receives matrix j's element (row t/4, col 2(t%4) + h),
//        or with Trans (row 2(t%4) + h, col t/4).
template <int R, bool Trans>
struct LdsmTraits {
  static_assert(R == 1 || R == 2 || R == 4, "ldmatrix loads 1, 2 or 4 matrices");
  using ValBits = _16;        ///< The layouts' unit: one b16.
  using ThrID = Layout<_32>;  ///< A warp.
  /// (thread, value) -> e: the 8 b16 of the row whose address the lane gives.
  using SrcLayout = Layout<Shape<Shape<Int<8 * R>, Int<4 / R>>, _8>, Stride<Stride<_8, _0>, _1>>;
  /// (thread, (half, register)) -> e: what the lane receives.
  using DstLayout = std::conditional_t<Trans, Layout<Shape<Shape<_4, _8>, Shape<_2, Int<R>>>, Stride<Stride<_16, _1>, Stride<_8, _64>>>,
                                       Layout<Shape<Shape<_4, _8>, Shape<_2, Int<R>>>, Stride<Stride<_2, _8>, Stride<_1, _64>>>>;
  /// The registers: a TiledCopy's TV layout says where each lane's received values go.
  using RefLayout = DstLayout;
};
}  // namespace detail

/// Traits of ldmatrix.x1 (see detail::LdsmTraits and the header comment).
template <>
struct Copy_Traits<SM75_U32x1_LDSM_N> : detail::LdsmTraits<1, false> {};
/// Traits of ldmatrix.x2.
template <>
struct Copy_Traits<SM75_U32x2_LDSM_N> : detail::LdsmTraits<2, false> {};
/// Traits of ldmatrix.x4.
template <>
struct Copy_Traits<SM75_U32x4_LDSM_N> : detail::LdsmTraits<4, false> {};
/// Traits of ldmatrix.x1.trans.
template <>
struct Copy_Traits<SM75_U16x2_LDSM_T> : detail::LdsmTraits<1, true> {};
/// Traits of ldmatrix.x2.trans.
template <>
struct Copy_Traits<SM75_U16x4_LDSM_T> : detail::LdsmTraits<2, true> {};
/// Traits of ldmatrix.x4.trans.
template <>
struct Copy_Traits<SM75_U16x8_LDSM_T> : detail::LdsmTraits<4, true> {};

/// Traits of stmatrix.x4: ldmatrix.x4's with source and destination swapped (the registers are the
/// source, the rows the destination), in the same b16 elements e = col + 8·row + 64·matrix.
template <>
struct Copy_Traits<SM90_U32x4_STSM_N> {
  using ValBits = _16;                                              ///< The layouts' unit: one b16.
  using ThrID = Layout<_32>;                                        ///< A warp.
  using SrcLayout = typename detail::LdsmTraits<4, false>::DstLayout;  ///< (thread, (half, register)) -> e
  using DstLayout = typename detail::LdsmTraits<4, false>::SrcLayout;  ///< (thread, value) -> e: the row it addresses
  using RefLayout = SrcLayout;                                      ///< The registers.
};

// ---- Host emulation (CPU tests) ----

/// The registers that ldmatrix `Op` gives each lane of a warp, computed on the host: `rows[lane]`
/// points at the 8 consecutive b16 (16 bytes) of the row that lane gives. Only the lanes the
/// instruction reads (8 per matrix) are used, as on the GPU. `regs[lane][j]` is the lane's register
/// j, its two b16 placed through the traits' DstLayout (the lower value in the lower half).
template <class Op>
std::array<std::array<std::uint32_t, std::extent_v<typename Op::DRegisters>>, 32> ldmatrix_on_host(
    std::array<void const*, 32> const& rows) {
  using Tr = Copy_Traits<Op>;
  constexpr int R = int(std::extent_v<typename Op::DRegisters>);
  std::vector<std::uint16_t> tile(64 * R);  // the R matrices, e = col + 8·row + 64·matrix
  std::vector<int> hits(64 * R, 0);
  typename Tr::SrcLayout src;
  for (int lane = 0; lane < 8 * R; ++lane)
    for (int w = 0; w < 8; ++w) {
      int e = int(src(lane, w));
      std::memcpy(&tile[e], static_cast<char const*>(rows[lane]) + 2 * w, 2);
      hits[e] += 1;
    }
  for (int h : hits) layout_check(h == 1, "ldmatrix_on_host: the source layout does not cover the matrices once");
  std::array<std::array<std::uint32_t, R>, 32> regs{};
  typename Tr::DstLayout dst;
  for (int lane = 0; lane < 32; ++lane)
    for (int v = 0; v < 2 * R; ++v) regs[lane][v / 2] |= std::uint32_t(tile[int(dst(lane, v))]) << (16 * (v % 2));
  return regs;
}

/// copy(tiled_copy, src, dst) of the 32 lanes of one warp with an ldmatrix atom, emulated on the
/// host: `src[lane]` and `dst[lane]` are the lanes' tensors as each lane would pass them to copy()
/// (partition_S of the shared tile, retile_D of its register fragment). For every instruction (CPY
/// group) each lane's source vector is checked as the device's copy checks it (NumValSrc contiguous
/// elements, within a swizzle unit), its address handed to ldmatrix_on_host, and the lane's
/// registers written to its destination values.
template <class TiledCopyOrAtom, class Srcs, class Dsts>
void copy_warp_on_host(TiledCopyOrAtom const&, Srcs const& src, Dsts& dst) {
  using Atom = Copy_Atom<typename TiledCopyOrAtom::op_type, typename TiledCopyOrAtom::value_type>;
  using Op = typename Atom::op_type;
  using T = typename Atom::value_type;
  static_assert(Atom::NumThr == 32, "copy_warp_on_host: a warp-wide atom");
  constexpr int VS = Atom::NumValSrc, VD = Atom::NumValDst;
  auto d0 = detail::group_rest(dst[0]);  // (CPY, REST), every lane's alike
  for (int r = 0; r < int(size<1>(d0)); ++r) {
    int groups = int(size<1>(zipped_divide(d0(_, r), make_shape(Int<VD>{}))));
    for (int j = 0; j < groups; ++j) {
      std::array<void const*, 32> rows;
      for (int lane = 0; lane < 32; ++lane) {
        auto sv = zipped_divide(detail::group_rest(src[lane])(_, r), make_shape(Int<VS>{}))(_, j);  // (VS)
        Atom::check_vector(sv);
        rows[lane] = &sv(0);
      }
      auto regs = ldmatrix_on_host<Op>(rows);
      for (int lane = 0; lane < 32; ++lane) {
        auto d = detail::group_rest(dst[lane]);
        auto dv = zipped_divide(d(_, r), make_shape(Int<VD>{}))(_, j);  // (VD)
        for (int v = 0; v < VD; ++v)
          std::memcpy(&dv(v), reinterpret_cast<char const*>(regs[lane].data()) + v * sizeof(T), sizeof(T));
      }
    }
  }
}

/// What stmatrix `SM90_U32x4_STSM_N` writes, computed on the host: lane t's registers `regs[t]`
/// are stored to the rows whose addresses lanes 0-31 give (`rows[lane]`, 16 bytes each), placed
/// through the traits (the inverse of ldmatrix_on_host for .x4).
inline void stmatrix_x4_on_host(std::array<std::array<std::uint32_t, 4>, 32> const& regs,
                                std::array<void*, 32> const& rows) {
  using Tr = Copy_Traits<SM90_U32x4_STSM_N>;
  std::array<std::uint16_t, 256> tile{};  // e = col + 8·row + 64·matrix
  typename Tr::SrcLayout src;
  for (int lane = 0; lane < 32; ++lane)
    for (int v = 0; v < 8; ++v) tile[int(src(lane, v))] = std::uint16_t(regs[lane][v / 2] >> (16 * (v % 2)));
  typename Tr::DstLayout dst;
  for (int lane = 0; lane < 32; ++lane)
    for (int w = 0; w < 8; ++w) std::memcpy(static_cast<char*>(rows[lane]) + 2 * w, &tile[int(dst(lane, w))], 2);
}

}  // namespace mm
