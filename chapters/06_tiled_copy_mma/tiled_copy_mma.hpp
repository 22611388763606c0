// Chapter 06's layouts: the 128×128×8 block tile of chapter 05, and the TiledCopies, TiledMMAs and
// shared layouts that its kernels (tiled.cuh, tiled_prefetch.cuh) are configured with; the strides
// and copies of each storage order (the host's only switch on them), the K-step load both kernels
// share, and the size rule.
//
// The host chooses, per operand, how the matrix lies in global memory (a stride), how the block's 256
// threads copy a tile of it (a TiledCopy: thread layout × value layout, 128-bit vectors) and how the
// tile lies in shared memory; the four storage orders RRR, RCR, CRR, CCR are four sets of those
// layouts for one kernel. The permuted TiledMMA gives every thread an 8×8 block of C made of 2×2 runs
// of 4 consecutive rows/columns, so the inner loop reads shared memory with 128-bit loads.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gemm/predicated_copy.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_grid.hpp"
#include "layout/all.hpp"

namespace mm::ch06 {

// ---- The block tile and the thread count: chapter 05's 8×8 steps', unchanged ----

using BM = _128;                      ///< rows of C per block
using BN = _128;                      ///< columns of C per block
using BK = _8;                        ///< depth of one K step
inline constexpr int kThreads = 256;  ///< threads per block: 16×16, each 8×8 of C
/// The block tile (BM, BN, BK) that local_tile cuts the matrices into.
using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));

// ---- Shared memory: one layout for every storage order ----
//
// (MN,BK):(1,MN+pad). The compute threads read 4 consecutive M (or N) values of one k with a 128-bit
// load, so M is the contiguous mode. A pad of 4 keeps every column 16-byte aligned (an odd pad would
// break the 128-bit loads and stores) and shifts each column by 4 banks, so that a copy writing 4
// different k of 16 rows (a K-major operand) hits 32 different banks. The chapter's first step keeps
// chapter 05's pad of 1, which only scalar shared loads and stores can use.
template <class MN, int kPad>
using SmemLayoutPadded = decltype(make_layout(make_shape(MN{}, BK{}), make_stride(_1{}, Int<MN::value + kPad>{})));  // (MN,BK)
using SmemLayoutA = SmemLayoutPadded<BM, 4>;  // (BM,BK): tiled_vec128's and every later kernel's
using SmemLayoutB = SmemLayoutPadded<BN, 4>;  // (BN,BK)

// ---- TiledCopy: 256 threads, 4 floats (one 128-bit vector) each, 1024 floats = one (128,8) tile ----
//
// The copy's tile is (MN, K), MN being M for A and N for B. The value layout puts each thread's 4
// floats along the dimension that is contiguous in global memory; the thread layout decides which
// vectors the 32 lanes of a warp read together, i.e. whether the warp's request is coalesced.

/// The 128-bit copy atom: one LDG.128 moves four floats.
using VecCopyAtom = Copy_Atom<UniversalCopy<uint128_t>, float>;

/// MN contiguous (column-major A, row-major B): lane i reads floats [4i, 4i+4) of one k-row, so a
/// warp reads 128 consecutive floats = 512 contiguous bytes. Threads: (32,8), MN fastest.
using ThrMNMajor = Layout<Shape<_32, _8>, Stride<_1, _32>>;  // (MN/4, K) -> thread
using ValMNMajor = Layout<Shape<_4, _1>>;                    // (4, 1)    -> value: a float4 along MN
/// K contiguous (row-major A, column-major B): a row of the tile is only 8 floats (32 bytes), two
/// lanes share it, a warp reads 16 rows: 16 full 32-byte sectors. Threads: (128,2), K fastest.
using ThrKMajor = Layout<Shape<_128, _2>, Stride<_2, _1>>;   // (MN, K/4) -> thread
using ValKMajor = Layout<Shape<_1, _4>>;                     // (1, 4)    -> value: a float4 along K

/// The counter-examples: the same vectors, the lanes of a warp spread so that each lands alone in a
/// 32-byte sector and uses half of it. MN contiguous: lanes walk k first, then MN groups 8 apart.
using ThrMNMajorStrided = Layout<Shape<Shape<_8, _4>, _8>, Stride<Stride<_32, _8>, _1>>;  // ((MN/4),K) -> thread
/// K contiguous: lanes walk MN (32 different rows), the other half of each row comes from another warp.
using ThrKMajorStrided = Layout<Shape<_128, _2>, Stride<_1, _128>>;  // (MN, K/4) -> thread

/// The thread layouts of a configuration's copies (its CopyThreads), for an MN-major and a K-major operand.
struct CoalescedCopyThreads {
  using MNMajor = ThrMNMajor;  ///< a warp reads 512 contiguous bytes
  using KMajor = ThrKMajor;    ///< a warp reads 16 rows × 32 bytes, 16 full sectors
};
/// The counter-example's: every lane alone in its 32-byte sector.
struct StridedCopyThreads {
  using MNMajor = ThrMNMajorStrided;
  using KMajor = ThrKMajorStrided;
};

// ---- TiledMMA: 16×16 threads of scalar FMA, each 8×8 values of C ----
//
// Without a permutation thread t would own rows t, t+16, t+32, ... (stride 16: scalar shared loads).
// The permutation (16,4):(4,1) renumbers each 64 rows so that the 16 threads × 4 values become
// 4 consecutive rows per thread: thread t owns rows 4t..4t+3 and 64+4t..64+4t+3, the same for N.
//
// The atom layout numbers the threads, and so decides which lanes read the same 16-byte vector. A
// warp's LDS.128 costs 2 wavefronts when lanes 2i and 2i+1 read the same address, 4 otherwise
// (chapter 03's wavefront rule). M fastest (thread = tm + 16·tn): the two lanes of a pair have
// different tm and one tn, they share their vector of B, not of A. N fastest (16·tm + tn): they
// share A, not B. No numbering shares both: that would be the same element of C.
using MmaAtomLayout = Layout<Shape<_16, _16, _1>>;                                  // (ThrM,ThrN,ThrK) -> thread, M fastest
using MmaAtomLayoutNFastest = Layout<Shape<_16, _16, _1>, Stride<_16, _1, _256>>;  // (ThrM,ThrN,ThrK) -> thread, N fastest
using MmaPermMN = Layout<Shape<_16, _4>, Stride<_4, _1>>;                           // logical row -> actual row, per 64
/// Permuted, M fastest: runs of 4 rows (LDS.128), lane pairs share B. The chapter's TiledMMA.
using TiledMmaT = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, MmaAtomLayout{},
                                          Tile<MmaPermMN, MmaPermMN, Underscore>{}));
/// Not permuted: thread (tm, tn) owns rows tm + 16i and columns tn + 16j (chapter 05's partition): scalar LDS.
using TiledMmaUnpermuted = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, MmaAtomLayout{}));
/// Permuted, N fastest: the same runs of 4 rows and columns, lane pairs share A.
using TiledMmaPairsShareA = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{},
                                                    MmaAtomLayoutNFastest{}, Tile<MmaPermMN, MmaPermMN, Underscore>{}));

/// (MN,BK):(1,MN+pad): a configuration's shared layout of A (MN = BM) or B (MN = BN).
template <class Cfg>
using SmemLayoutAOf = SmemLayoutPadded<BM, Cfg::kPad>;  // (BM,BK)
template <class Cfg>
using SmemLayoutBOf = SmemLayoutPadded<BN, Cfg::kPad>;  // (BN,BK)

// ---- What both kernels share ----

namespace detail {

/// Brings K step `kt` of an operand's (MN,BK) tiles from global memory into the thread's registers.
/// The whole tile inside the matrix and 16-byte aligned vectors: the TiledCopy's 128-bit loads.
/// Otherwise (the last tile along M, N or K, or a leading dimension that is not a multiple of 4)
/// each of the thread's four values is loaded on its own if its coordinate is inside the matrix,
/// zero if not; a zero adds nothing to the sum.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the same partition of the coordinates   dst: (CPY,CPY_MN,CPY_K)
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
MM_HD void load_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst& dst, Extent const& extent,
                       bool vec_rows, int kt, int K) {
  auto src_k = src(_, _, _, kt);  // (CPY,CPY_MN,CPY_K)
  if (vec_rows && (kt + 1) * BK{} <= K) {
    copy(tiled_copy, src_k, dst);  // one LDG.128
  } else {
    copy_or_zero(src_k, dst, crd(_, _, _, kt), extent);  // each float on its own (gemm/predicated_copy.hpp)
  }
}

}  // namespace detail

/// Everything the kernel needs to know about one problem. The strides and tiled copies are the
/// layouts the host chooses per storage order; their types make each order its own instantiation.
template <class AStride, class CopyA, class BStride, class CopyB, class CStride>
struct TiledGemmArgs {
  int m, n, k;      ///< C is M×N, K the inner dimension
  float const* a;   ///< A, seen as (M,K) with strides da
  AStride da;       ///< (M,K) strides of A
  CopyA copy_a;     ///< how 256 threads copy a (BM,BK) tile of A
  bool a_vec;       ///< A's rows (or columns) are 16-byte aligned: 128-bit loads allowed
  float const* b;   ///< B, seen as (N,K) with strides db
  BStride db;       ///< (N,K) strides of B
  CopyB copy_b;     ///< how 256 threads copy a (BN,BK) tile of B
  bool b_vec;       ///< 128-bit loads of B allowed
  float* c;         ///< C, (M,N) with strides dc
  CStride dc;       ///< (M,N) strides of C
};

/// The TiledCopy for an operand tile (MN,BK) with the thread layouts CopyThreads (CoalescedCopyThreads
/// or StridedCopyThreads): K-major when K is the contiguous dimension in memory.
template <bool kKMajor, class CopyThreads>
constexpr auto operand_copy() {
  if constexpr (kKMajor) return make_tiled_copy(VecCopyAtom{}, typename CopyThreads::KMajor{}, ValKMajor{});
  else return make_tiled_copy(VecCopyAtom{}, typename CopyThreads::MNMajor{}, ValMNMajor{});
}

/// Empty when the kernels take `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
/// Any M, N, K and all eight storage orders are taken within the grid's y limit and chapter 05's
/// 32-bit offsets: the strides are ints, and a partial tile's outside elements get offsets too.
inline std::string tiled_rejects(const GemmProblem& p) { return tile_grid_rejects(p, BM{}, BN{}, BK{}); }

/// The grid: blockIdx.x walks the tiles of M, blockIdx.y those of N.
inline dim3 tiled_grid(const GemmProblem& p) { return tile_grid(p, BM{}, BN{}); }

namespace detail {
template <class CopyThreads, class AStride, class BStride, class F>
void with_strides(const GemmProblem& p, const float* A, AStride dA, const float* B, BStride dB, float* C, F&& f) {
  // K-major operand: its K stride is the compile-time 1.
  constexpr bool a_k_major = is_constant_value_v<1, decltype(get<1>(dA))>;
  constexpr bool b_k_major = is_constant_value_v<1, decltype(get<1>(dB))>;
  auto copy_a = operand_copy<a_k_major, CopyThreads>();
  auto copy_b = operand_copy<b_k_major, CopyThreads>();
  const MatrixShape sc = p.shape_c();
  auto dC = make_stride(int(sc.row_stride()), int(sc.col_stride()));  // (M,N): run-time, the epilogue stores scalars
  f(TiledGemmArgs<AStride, decltype(copy_a), BStride, decltype(copy_b), decltype(dC)>{
      int(p.m), int(p.n), int(p.k), A, dA, copy_a, vector_aligned(A, p.shape_a().ld()),
      B, dB, copy_b, vector_aligned(B, p.shape_b().ld()), C, dC});
}
}  // namespace detail

/// Calls f(args) with the layouts for p's storage orders: the only place where they appear.
/// A as (M,K): row-major (K,1), column-major (1,M).  B as (N,K): row-major K×N is (1,N), column-major (K,1).
/// Cfg (a step's configuration) chooses the coalesced or the strided TiledCopies (its CopyThreads).
template <class Cfg, class F>
void with_tiled_gemm_args(const GemmProblem& p, const float* A, const float* B, float* C, F&& f) {
  using CopyThreads = typename Cfg::CopyThreads;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  auto a_row = make_stride(k, _1{});
  auto a_col = make_stride(_1{}, m);
  auto b_row = make_stride(_1{}, n);
  auto b_col = make_stride(k, _1{});
  if (p.a == Order::row && p.b == Order::row) detail::with_strides<CopyThreads>(p, A, a_row, B, b_row, C, f);
  if (p.a == Order::row && p.b == Order::col) detail::with_strides<CopyThreads>(p, A, a_row, B, b_col, C, f);
  if (p.a == Order::col && p.b == Order::row) detail::with_strides<CopyThreads>(p, A, a_col, B, b_row, C, f);
  if (p.a == Order::col && p.b == Order::col) detail::with_strides<CopyThreads>(p, A, a_col, B, b_col, C, f);
}

}  // namespace mm::ch06
