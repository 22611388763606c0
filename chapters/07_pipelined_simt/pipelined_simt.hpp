// Chapter 07's layouts: what its two kernels (pipelined.cuh, fragment_pipelined.cuh) are configured
// with and share. A step's configuration names its block tile, its ring of shared stages, the thread
// numbering of its TiledMMA, its shared layout (padded or swizzled) and its register budget
// (PipelinedS2Cfg in pipelined.cuh is the first); Traits<Cfg> derives from it the TiledMMA, the
// shared rings, the cp.async TiledCopies and the bytes of shared memory. Then what both kernel bodies
// call: the arguments of one problem, the start of one K step's copies, a fragment's 128-bit shared
// loads; and on the host the layouts of each storage order, the grid and the size rule.
//
// Every storage order (RRR, RCR, CRR, CCR, and a column-major C) is a set of strides and tiled copies
// chosen on the host; any M, N, K: partial tiles are predicated, misaligned pointers or leading
// dimensions take 4-byte copies.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "gemm/predicated_copy.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_grid.hpp"
#include "layout/all.hpp"

namespace mm::ch07 {

// ---- Which shared-memory layout a configuration uses ----

/// How a (MN,BK) tile lies in shared memory. MN is the contiguous mode in both: the compute threads
/// read 4 consecutive M (or N) values of one k with one 128-bit load.
enum class Smem {
  padded,    ///< (MN,BK):(1,MN+4): each k-row shifted by 4 banks
  swizzled,  ///< (MN,BK):(1,MN) with the 16-byte units of each k-row permuted by k (Swizzle<3,2,log2 MN>)
};

// ---- The thread arrangement of the TiledMMA ----

/// Chapter 06's numbering: thread t at (t % ThrM, t / ThrM) of the ThrM×ThrN grid of compute threads.
/// The lanes of a pair (2i, 2i+1) differ along M and share N: a 128-bit load of A costs 4 wavefronts,
/// one of B 2 (README, "the pair rule").
template <int ThrM, int ThrN>
using PlainThreads = Layout<Shape<Int<ThrM>, Int<ThrN>, _1>>;  // (ThrM,ThrN,1) -> thread

/// Warp tiling: a warp is an 8×4 grid of lanes (lane = lm + 8·ln), the warps tile the rest, so a warp
/// owns a compact block of C and half a warp reads only 8 distinct 16-byte vectors of A. The pair
/// rule still prices a load of A at 4 wavefronts (the lanes of a pair differ along M): no numbering
/// can make a pair share both its A and its B vector.
template <int ThrM, int ThrN>
using WarpThreads =
    Layout<Shape<Shape<_8, Int<ThrM / 8>>, Shape<_4, Int<ThrN / 4>>, _1>,
           Stride<Stride<_1, _32>, Stride<_8, Int<32 * (ThrM / 8)>>, _0>>;  // ((lm,wm),(ln,wn),1) -> thread

using Plain16x16 = PlainThreads<16, 16>;  ///< 256 threads, chapter 06's numbering
using Warp16x16 = WarpThreads<16, 16>;    ///< 256 threads, numbered by warps of 8×4 lanes

// ---- What a configuration implies ----

/// The layouts of step configuration Cfg, whose members are (PipelinedS2Cfg in pipelined.cuh):
///   BM, BN, BK   the block tile (Int<>): BM×BN of C per block, K steps of BK
///   kStages      shared-memory tiles in flight (the ring)
///   ThrLayout    the ThrM×ThrN compute threads and their numbering (PlainThreads, WarpThreads); each
///                thread owns RunsM×RunsN runs of 4×4 outputs of C
///   kSmem        padded or swizzled shared tiles
///   kMinBlocks   blocks per SM the register budget must allow (__launch_bounds__)
///   FragVec      the 128-bit vector type of the shared-to-register copies (float4)
///   kL2Prefetch  whether the tile copies carry the .L2::128B hint
template <class Cfg>
struct Traits {
  using BM = typename Cfg::BM;  ///< rows of C per block
  using BN = typename Cfg::BN;  ///< columns of C per block
  using BK = typename Cfg::BK;  ///< depth of one K step
  static constexpr int kStages = Cfg::kStages;
  using ThrLayout = typename Cfg::ThrLayout;
  static constexpr int kThrM = size_v<decltype(layout<0>(ThrLayout{}))>;  ///< compute threads along M
  static constexpr int kThrN = size_v<decltype(layout<1>(ThrLayout{}))>;  ///< compute threads along N
  static constexpr int kThreads = kThrM * kThrN;                           ///< threads per block
  static_assert(BM::value % (kThrM * 4) == 0, "BM = ThrM × (RunsM runs of 4 rows)");
  static_assert(BN::value % (kThrN * 4) == 0, "BN = ThrN × (RunsN runs of 4 columns)");
  static_assert(BK::value % 8 == 0, "BK: whole 8-deep k groups (the K-major copy puts 8 lanes along k)");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");

  using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));  ///< (BM,BN,BK)

  /// The permutation that gives each thread runs of 4 consecutive rows (columns): logical position
  /// t + Thr·v (thread t, value v < 4) is row 4t + v, in blocks of 4·Thr rows; the runs of a thread
  /// are 4·Thr rows apart.
  using PermM = Layout<Shape<Int<kThrM>, _4>, Stride<_4, _1>>;
  using PermN = Layout<Shape<Int<kThrN>, _4>, Stride<_4, _1>>;
  using TiledMma = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, ThrLayout{},
                                           Tile<PermM, PermN, Underscore>{}));

  /// A (MN,BK,Stages) ring of tiles in shared memory.
  template <int MN>
  static constexpr auto smem_layout() {
    if constexpr (Cfg::kSmem == Smem::padded) {
      constexpr int ld = MN + 4;  // + 4 floats: 16-byte aligned rows, each shifted by 4 banks
      return make_layout(make_shape(Int<MN>{}, BK{}, Int<kStages>{}),
                         make_stride(_1{}, Int<ld>{}, Int<ld * BK::value>{}));
    } else {
      // XOR the k index (bits log2(MN).. of the offset) into the 16-byte unit index (bits 2..4): the
      // 8 k-rows of one group of 8 units land on 8 different bank groups. The pattern repeats every
      // 8 k-rows (8·MN floats), so each stage (a multiple of that) is swizzled alike.
      constexpr int log2_mn = MN == 64 ? 6 : MN == 128 ? 7 : MN == 256 ? 8 : -1;
      static_assert(log2_mn > 0, "swizzled tiles: MN of 64, 128 or 256");
      return composition(Swizzle<3, 2, log2_mn - 2>{}, make_layout(make_shape(Int<MN>{}, BK{}, Int<kStages>{})));
    }
  }
  using SmemLayoutA = decltype(smem_layout<BM::value>());  ///< (BM,BK,Stages)
  using SmemLayoutB = decltype(smem_layout<BN::value>());  ///< (BN,BK,Stages)
  /// Shared memory of one block, in bytes (both rings).
  static constexpr int kSmemBytes = int(sizeof(float)) * (cosize_v<SmemLayoutA> + cosize_v<SmemLayoutB>);

  /// The 128-bit copy from shared memory to registers: the TiledMMA's permutation makes each run of
  /// 4 values of a thread's fragment 4 consecutive, 16-byte aligned floats (one LDS.128). The vector
  /// type is CUDA's float4: the same LDS.128 as the library's uint128_t (two 64-bit words), but ptxas
  /// then assigns the FFMA operands to registers with fewer dispatch stalls (README, "Registers for two k").
  using SmemToRegs = Copy_Atom<UniversalCopy<typename Cfg::FragVec>, float>;

  // ---- How the block's threads copy an (MN,BK) tile of an operand ----
  //
  // One pass of the threads covers part of the tile; the partitions repeat it over the rest (the
  // CPY_MN and CPY_K modes). MN contiguous in global memory (column-major A, row-major B): 16-byte
  // cp.async, lane l takes the four floats [4l, 4l+4) of one k-row: a warp reads 512 contiguous bytes
  // and writes them to shared memory as they are. K contiguous (row-major A, column-major B): shared
  // memory wants MN contiguous, so each float is copied on its own (4-byte cp.async) into its
  // transposed place: lane l takes k = l % 8 of row l / 8, a warp reads 4 rows × 32 bytes (4 full
  // sectors) and writes 4 consecutive MN of 8 k-rows, which the padding (4 banks per k-row) or the
  // swizzle puts on 32 different banks. With kL2Prefetch the copies carry the `.L2::128B` hint: the
  // L2 fetches whole 128-byte lines, which the next K steps' copies of the same rows then find there
  // (cuBLAS's kernel copies this way).
  template <int MN>
  static constexpr auto mn_major_copy() {
    constexpr int tm = MN / 4, tk = kThreads / tm;  // threads along MN (one float4 each), along K
    static_assert(tm * tk == kThreads && BK::value % tk == 0, "MN-major copy: threads tile (MN/4, BK)");
    using Op = std::conditional_t<Cfg::kL2Prefetch, SM80_CP_ASYNC_CACHEGLOBAL_L2_128B<uint128_t>,
                                  SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>>;
    return make_tiled_copy(Copy_Atom<Op, float>{},
                           Layout<Shape<Int<tm>, Int<tk>>>{},  // (MN/4,tk) -> thread, MN fastest
                           Layout<Shape<_4, _1>>{});           // (4,1) -> value: a float4 along MN
  }
  template <int MN>
  static constexpr auto k_major_copy() {
    constexpr int tm = kThreads / 8;  // 8 lanes along K, the rest along MN
    static_assert(MN % tm == 0, "K-major copy: threads tile (MN, 8)");
    using Op = std::conditional_t<Cfg::kL2Prefetch, SM80_CP_ASYNC_CACHEALWAYS_L2_128B<float>,
                                  SM80_CP_ASYNC_CACHEALWAYS<float>>;
    return make_tiled_copy(Copy_Atom<Op, float>{},
                           Layout<Shape<Int<tm>, _8>, Stride<_8, _1>>{},  // (tm,8) -> thread, K fastest
                           Layout<Shape<_1, _1>>{});                       // one float each pass
  }
};

// ---- What both kernel bodies share ----

/// Everything one problem needs: sizes, pointers, the (MN,K) strides of A and B and the (M,N) strides
/// of C (types: which storage order), the tiled copies, and whether 16-byte copies are aligned.
template <class AStride, class CopyA, class BStride, class CopyB, class CStride>
struct GemmArgs {
  int m, n, k;     ///< C is M×N, K the inner dimension
  float const* a;  ///< A, seen as (M,K) with strides da
  AStride da;      ///< (M,K) strides of A
  CopyA copy_a;    ///< how the block copies a (BM,BK) tile of A
  bool a_vec;      ///< an MN-major A is 16-byte aligned (pointer and leading dimension): 16-byte copies allowed
  float const* b;  ///< B, seen as (N,K) with strides db
  BStride db;      ///< (N,K) strides of B
  CopyB copy_b;    ///< how the block copies a (BN,BK) tile of B
  bool b_vec;      ///< 16-byte copies of an MN-major B allowed
  float* c;        ///< C, (M,N) with strides dc
  CStride dc;      ///< (M,N) strides of C
};

namespace detail {

/// Starts the copy of K step `kt` of an operand into one stage of its shared ring, as cp.async
/// copies that land while the block computes. Inside the matrix and 16-byte aligned (`vec`): the
/// tiled copy's own atom (16-byte copies for an MN-major operand, 4-byte for a K-major one). At an
/// edge (or misaligned): each float on its own, zero where its coordinate lies outside the matrix
/// (cp.async's zero fill), so the partial tile adds nothing to C.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the coordinates of src   dst: (CPY,CPY_MN,CPY_K)
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
MM_HD void issue_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst& dst, Extent const& extent,
                        bool vec, int kt) {
  if (vec) {
    copy(tiled_copy, src(_, _, _, kt), dst);
  } else {
    auto inside = make_predicate(crd(_, _, _, kt), extent);  // (CPY,CPY_MN,CPY_K): coordinate inside the matrix
    copy_if(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{}, inside, src(_, _, _, kt), dst);
  }
}

/// Copies the fragment of one k, (MMA,MMA_MN), as runs of 4 with the 128-bit atom `Vec`: the two
/// modes grouped into one, which the atom divides into vectors of 4.
template <class Vec, class Src, class Dst>
MM_HD void copy_fragment(Src const& src, Dst&& dst) {
  copy(Vec{}, group_modes<0, 2>(src), group_modes<0, 2>(dst));
}

}  // namespace detail

// ---- Host: the layouts of each storage order, the grid, the size rule ----

/// Empty when the kernels with configuration Cfg take `p`; otherwise the constraint it breaks: N on
/// grid y, and 32-bit offsets (gemm/tile_grid.hpp).
template <class Cfg>
std::string pipelined_rejects(const GemmProblem& p) {
  return tile_grid_rejects(p, Cfg::BM::value, Cfg::BN::value, Cfg::BK::value);
}

/// The grid: blockIdx.x walks the tiles of M, blockIdx.y those of N.
template <class Cfg>
dim3 gemm_grid(const GemmProblem& p) {
  return tile_grid(p, Cfg::BM::value, Cfg::BN::value);
}

/// Which storage orders a launch function is compiled for: all, or only those with a row-major A
/// (the tuning sweep's RRR and RCR: half the kernels to compile).
enum class Orders { all, row_major_a };

/// Calls f(args) with the layouts of p's storage orders: the only place where they appear. A as
/// (M,K): row-major (K,1) is K-major, column-major (1,M) MN-major. B as (N,K): row-major K×N is
/// (1,N), MN-major; column-major (K,1), K-major. C as (M,N): row-major (N,1), column-major (1,M).
/// With Orders::row_major_a the caller has rejected a column-major A.
template <class Cfg, Orders kOrders = Orders::all, class F>
void with_gemm_args(const GemmProblem& p, const float* A, const float* B, float* C, F&& f) {
  using T = Traits<Cfg>;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  const MatrixShape sc = p.shape_c();
  auto dC = make_stride(int(sc.row_stride()), int(sc.col_stride()));  // (M,N): run-time, scalar stores
  auto call = [&](auto dA, auto dB) {
    constexpr bool a_k_major = is_constant_value_v<1, decltype(get<1>(dA))>;
    constexpr bool b_k_major = is_constant_value_v<1, decltype(get<1>(dB))>;
    auto copy_a = [] {
      if constexpr (a_k_major) return T::template k_major_copy<T::BM::value>();
      else return T::template mn_major_copy<T::BM::value>();
    }();
    auto copy_b = [] {
      if constexpr (b_k_major) return T::template k_major_copy<T::BN::value>();
      else return T::template mn_major_copy<T::BN::value>();
    }();
    // A K-major operand always takes 4-byte copies: only the bounds decide its path.
    const bool a_vec = a_k_major || vector_aligned(A, p.shape_a().ld());
    const bool b_vec = b_k_major || vector_aligned(B, p.shape_b().ld());
    f(GemmArgs<decltype(dA), decltype(copy_a), decltype(dB), decltype(copy_b), decltype(dC)>{
        m, n, k, A, dA, copy_a, a_vec, B, dB, copy_b, b_vec, C, dC});
  };
  auto a_row = make_stride(k, _1{});
  auto a_col = make_stride(_1{}, m);
  auto b_row = make_stride(_1{}, n);
  auto b_col = make_stride(k, _1{});
  if (p.a == Order::row && p.b == Order::row) call(a_row, b_row);
  if (p.a == Order::row && p.b == Order::col) call(a_row, b_col);
  if constexpr (kOrders == Orders::all) {
    if (p.a == Order::col && p.b == Order::row) call(a_col, b_row);
    if (p.a == Order::col && p.b == Order::col) call(a_col, b_col);
  }
}

}  // namespace mm::ch07
