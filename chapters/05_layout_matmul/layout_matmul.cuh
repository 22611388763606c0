// Chapter 05: a register-tiled matmul written with layouts (MoYe's MatMul, CuTe's sgemm_1).
//
// One generic kernel, two steps of register tiling. In the main one, a block of 256 threads computes a
// 128×128 tile of C; per step along K it copies a (128,8) tile of A and one of B into shared memory, and
// each thread accumulates an 8×8 block of C in registers. The first step (blocktile_1d, siboehm's 1-D
// block tiling) is the same kernel with other layouts: a block of 512 threads computes a 64×64 tile,
// each thread a column of 8 outputs. Everything that depends on the tiling or on how the matrices are
// stored is a layout that the host passes: the block tile, the global strides, the copy thread layouts
// (chosen so that a warp reads contiguous memory), the compute thread layout (which outputs a thread
// owns, and a warp writing contiguous C) and the shared-memory layouts (unpadded or padded). The
// storage orders RRR, RCR, CRR, CCR (and the four with a column-major C) are eight sets of layouts for
// the same kernel.
//
// Build: cmake --build build --target ch05_layout_matmul      Run: build/bin/ch05_layout_matmul
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "layout/all.hpp"

namespace mm::ch05 {

// ---- The block tile and the thread count (compile-time: every register index is a constant) ----

using BM = _128;  ///< rows of C per block
using BN = _128;  ///< columns of C per block
using BK = _8;    ///< depth of one K step
inline constexpr int kThreads = 256;  ///< threads per block: 16×16 compute threads, each 8×8 of C

/// The block tile (BM, BN, BK) that local_tile cuts the matrices into.
using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));

using launch::ceil_div;    // gemm/launch.hpp: blocks that cover an extent
using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks along grid y

// ---- Which mode of an operand is contiguous in global memory ----
//
// The kernel sees A as (M,K), B as (N,K) (CuTe's convention: both operands indexed (MN, K)) and C as
// (M,N). "MN-major" means the MN index is the contiguous one (stride 1), "K-major" that K is.

/// Which index of an (MN,K) operand has stride 1.
enum class Major { mn, k };

/// A is M×K: row-major A walks K contiguously (K-major), column-major A walks M (M-major).
constexpr Major major_of_a(Order a) { return a == Order::row ? Major::k : Major::mn; }
/// B is K×N, seen as (N,K): row-major B walks N contiguously (N-major), column-major B walks K.
constexpr Major major_of_b(Order b) { return b == Order::row ? Major::mn : Major::k; }

// ---- Global strides: the only place where the storage order of a matrix appears ----

/// Strides of an (MN,K) operand with `ld` elements between consecutive rows/columns.
template <Major major>
MM_HD constexpr auto operand_stride(int ld) {
  if constexpr (major == Major::mn) return make_stride(_1{}, ld);  // (MN,K):(1,ld)
  else return make_stride(ld, _1{});                               // (MN,K):(ld,1)
}
/// Strides of the (M,N) matrix C.
template <Order c>
MM_HD constexpr auto c_stride(int m, int n) {
  if constexpr (c == Order::row) return make_stride(n, _1{});  // (M,N):(N,1)
  else return make_stride(_1{}, m);                            // (M,N):(1,M)
}

// ---- Copy threads: a warp reads contiguous global memory ----
//
// 256 threads copy a (128,8) tile, 4 elements each. The thread layout maps thread index -> its
// (mn, k) position in a (32,8) grid of threads; local_partition gives thread (i, j) the elements
// (i + 32·v, j), v = 0..3. (The 1-D step: 512 threads, a (64,8) grid of them over a (64,8) tile, one
// element each; its warps land exactly as below.) What matters is where the 32 lanes of one warp land:
//  MN-major operand: (32,8):(1,32), lane = mn. A warp reads 32 consecutive floats of one k column:
//                    128 contiguous bytes, 4 sectors.
//  K-major operand:  (32,8):(8,1), lane % 8 = k. A tile row is only 8 floats (32 bytes), so the best a
//                    warp can do is 4 rows × 8 consecutive floats: 4 full 32-byte sectors, again 4
//                    sectors for 32 floats. The MN-major thread layout would put the 32 lanes in 32
//                    different rows: 32 sectors, 8 times the memory transactions.

/// The copy thread layout for an operand of the given majorness: Threads / 8 rows of threads by the
/// 8 columns of a K step.
template <Major major, int Threads = kThreads>
MM_HD constexpr auto copy_thread_layout() {
  using ThrMN = Int<Threads / BK::value>;  // 32 for 256 threads, 64 for 512
  if constexpr (major == Major::mn) return make_layout(make_shape(ThrMN{}, BK{}));  // (32,8):(1,32), (64,8):(1,64)
  else return make_layout(make_shape(ThrMN{}, BK{}), LayoutRight{});                 // (32,8):(8,1),  (64,8):(8,1)
}

// ---- Compute threads: 16×16, each an 8×8 block of C ----
//
// local_partition with the 16×16 thread layout gives thread (tm, tn) rows tm + 16·i and columns
// tn + 16·j, i, j = 0..7 (an "outer" partition: each thread's elements are 16 apart). Which of tm, tn
// runs fastest along the warp matters only for the final store of C: along the contiguous mode of C.
//  Row-major C:    (16,16):(16,1), lane % 16 = tn: a warp stores 2 rows × 16 consecutive floats.
//  Column-major C: (16,16):(1,16), lane % 16 = tm: a warp stores 2 columns × 16 consecutive floats.
// Both are conflict-free when reading shared memory: one operand is read at 16 consecutive addresses,
// the other at 2 (a broadcast).

/// The compute thread layout for a C of the given storage order.
template <Order c>
MM_HD constexpr auto compute_thread_layout() {
  if constexpr (c == Order::row) return make_layout(make_shape(_16{}, _16{}), LayoutRight{});  // (16,16):(16,1)
  else return make_layout(make_shape(_16{}, _16{}));                                           // (16,16):(1,16)
}

// ---- Shared memory: (128,8) with MN contiguous, unpadded or padded by one element per column ----

/// (BM,BK):(1,BM) or, padded, (BM,BK):(1,BM+1). The same layout for A (BM = 128) and B (BN = 128);
/// the 1-D step's tiles have 64 rows (Rows = _64).
template <bool padded, class Rows = BM>
MM_HD constexpr auto smem_layout() {
  if constexpr (padded) return make_layout(make_shape(Rows{}, BK{}), make_stride(_1{}, Int<Rows::value + 1>{}));
  else return make_layout(make_shape(Rows{}, BK{}));  // (128,8):(1,128)
}

// ---- Predicated copy for the tiles that overhang the matrix ----

/// dst(i) = src(i) where the coordinate crd(i) lies inside `bound`, 0 elsewhere. Zeros (not
/// "leave it") because the partial tile's shared memory is read by the FMAs: a zero adds nothing.
template <class Src, class Dst, class Crd, class Bound>
MM_HD void copy_or_zero(Src const& src, Dst&& dst, Crd const& crd, Bound const& bound) {
#pragma unroll
  for (int i = 0; i < int(size(dst)); ++i) dst(i) = elem_less(crd(i), bound) ? src(i) : 0.0f;
}

// ---- The kernel ----

/// C = A·B for any storage orders and any register tiling: every such choice arrives as a layout,
/// a stride or the tiler; the block has as many threads as each thread layout.
///   shape_MNK: (M,N,K)                    cta_tiler: (BM,BN,BK)
///   dA: strides of A as (M,K)             sA_layout: (BM,BK) shared   tA: copy threads over (BM,BK)
///   dB: strides of B as (N,K)             sB_layout: (BN,BK) shared   tB: copy threads over (BN,BK)
///   dC: strides of C as (M,N)             tC: compute threads over (BM,BN)
/// Any M, N, K ≥ 1: out-of-range elements of a tile are zeros in shared memory, and only elements
/// inside C are stored.
template <class ProblemShape, class Tiler, class AStride, class ASmemLayout, class AThreadLayout, class BStride,
          class BSmemLayout, class BThreadLayout, class CStride, class CThreadLayout>
__global__ void __launch_bounds__(size_v<CThreadLayout>)
    layout_gemm_kernel(ProblemShape shape_MNK, Tiler cta_tiler,                          //
                       float const* A, AStride dA, ASmemLayout sA_layout, AThreadLayout tA,  //
                       float const* B, BStride dB, BSmemLayout sB_layout, BThreadLayout tB,  //
                       float* C, CStride dC, CThreadLayout tC) {
  // Preconditions, all on compile-time layouts.
  static_assert(is_static_v<Tiler> && is_static_v<ASmemLayout> && is_static_v<BSmemLayout>,
                "tile and shared layouts are compile-time: register and shared indices must be constants");
  static_assert(is_static_v<AThreadLayout> && is_static_v<BThreadLayout> && is_static_v<CThreadLayout>,
                "thread layouts are compile-time");
  static_assert(size_v<AThreadLayout> == size_v<CThreadLayout> && size_v<BThreadLayout> == size_v<CThreadLayout>,
                "one element of each thread layout per thread of the block");
  static_assert(size<0>(ASmemLayout{}) == size<0>(Tiler{}) && size<1>(ASmemLayout{}) == size<2>(Tiler{}),
                "sA is (BM,BK)");
  static_assert(size<0>(BSmemLayout{}) == size<1>(Tiler{}) && size<1>(BSmemLayout{}) == size<2>(Tiler{}),
                "sB is (BN,BK)");
  static_assert(size<0>(Tiler{}) % size<0>(AThreadLayout{}) == 0, "BM / THR_M (A copy)");
  static_assert(size<2>(Tiler{}) % size<1>(AThreadLayout{}) == 0, "BK / THR_K (A copy)");
  static_assert(size<1>(Tiler{}) % size<0>(BThreadLayout{}) == 0, "BN / THR_N (B copy)");
  static_assert(size<2>(Tiler{}) % size<1>(BThreadLayout{}) == 0, "BK / THR_K (B copy)");
  static_assert(size<0>(Tiler{}) % size<0>(CThreadLayout{}) == 0, "BM / THR_M (compute)");
  static_assert(size<1>(Tiler{}) % size<1>(CThreadLayout{}) == 0, "BN / THR_N (compute)");

  // The whole matrices, and their coordinates (an identity tensor maps (m,k) to (m,k)).
  auto mA = make_tensor(make_gmem_ptr(A), select<0, 2>(shape_MNK), dA);  // (M,K)
  auto mB = make_tensor(make_gmem_ptr(B), select<1, 2>(shape_MNK), dB);  // (N,K)
  auto mC = make_tensor(make_gmem_ptr(C), select<0, 1>(shape_MNK), dC);  // (M,N)
  auto cA = make_identity_tensor(shape(mA));                             // (M,K) -> (m,k)
  auto cB = make_identity_tensor(shape(mB));                             // (N,K) -> (n,k)
  auto cC = make_identity_tensor(shape(mC));                             // (M,N) -> (m,n)

  // This block's tiles: block (x, y) owns the (x, y) tile of C, row panel x of A, column panel y of B.
  // The projections pick the tiler modes each matrix has: A has (M,K), B (N,K), C (M,N).
  auto cta_coord = make_coord(int(blockIdx.x), int(blockIdx.y), _);
  auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
  auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
  auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
  auto cgA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k) -> (m,k)
  auto cgB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k) -> (n,k)
  auto cgC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)   -> (m,n)

  // Shared memory: cosize, not size, because a padded layout has holes.
  __shared__ float smemA[cosize_v<ASmemLayout>];
  __shared__ float smemB[cosize_v<BSmemLayout>];
  auto sA = make_tensor(make_smem_ptr(smemA), sA_layout);  // (BM,BK)
  auto sB = make_tensor(make_smem_ptr(smemB), sB_layout);  // (BN,BK)

  // Copy partitions: thread t's elements of each tile, by the copy thread layouts.
  const int t = int(threadIdx.x);
  auto tAgA = local_partition(gA, tA, t);   // (THR_M,THR_K,k)  = (4,1,k); 1-D step (1,1,k)
  auto tAcA = local_partition(cgA, tA, t);  // (THR_M,THR_K,k) -> (m,k)
  auto tAsA = local_partition(sA, tA, t);   // (THR_M,THR_K)    = (4,1);   1-D step (1,1)
  auto tBgB = local_partition(gB, tB, t);   // (THR_N,THR_K,k)  = (4,1,k); 1-D step (1,1,k)
  auto tBcB = local_partition(cgB, tB, t);  // (THR_N,THR_K,k) -> (n,k)
  auto tBsB = local_partition(sB, tB, t);   // (THR_N,THR_K)    = (4,1);   1-D step (1,1)

  // Compute partitions: thread (tm, tn) of tC needs rows tm + 16i of sA and columns tn + 16j of sB,
  // for every k. The projection Step<_1,X> partitions sA's M by tC's first mode and keeps all of K
  // (MoYe's (1, :)); Step<X,_1> partitions sB's N by tC's second mode (MoYe's (:, 1)). In the 1-D step
  // (row-major C) tC is (8,64): 8 rows tm + 8i, 1 column tn.
  auto tCsA = local_partition(sA, tC, t, Step<_1, X>{});   // (THR_M,BK) = (8,8); 1-D step (8,8)
  auto tCsB = local_partition(sB, tC, t, Step<X, _1>{});   // (THR_N,BK) = (8,8); 1-D step (1,8)
  auto tCgC = local_partition(gC, tC, t, Step<_1, _1>{});  // (THR_M,THR_N) = (8,8); 1-D step (8,1)
  auto tCcC = local_partition(cgC, tC, t, Step<_1, _1>{}); // (THR_M,THR_N) -> (m,n)

  // The accumulators: 64 floats in registers (8 in the 1-D step; a static layout, fully unrolled loops).
  auto tCrC = make_tensor_like(tCgC);  // (THR_M,THR_N)
  clear(tCrC);

  // A tile that lies entirely inside its matrix copies without predicates: the common case. Only the
  // blocks on the bottom and right edges and the last K step (when BK does not divide K) take the
  // predicated path, which checks every element's coordinate against the matrix shape.
  constexpr int kBM = size<0>(Tiler{}), kBN = size<1>(Tiler{}), kBK = size<2>(Tiler{});
  const int M = int(size<0>(shape_MNK)), N = int(size<1>(shape_MNK)), K = int(size<2>(shape_MNK));
  const bool a_rows_inside = (int(blockIdx.x) + 1) * kBM <= M;
  const bool b_rows_inside = (int(blockIdx.y) + 1) * kBN <= N;

  const int k_tiles = int(size<2>(gA));
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    // Global -> shared (through registers). Elements outside A or B become zeros: they add nothing.
    const bool k_inside = (k_tile + 1) * kBK <= K;
    if (a_rows_inside && k_inside) copy(tAgA(_, _, k_tile), tAsA);
    else copy_or_zero(tAgA(_, _, k_tile), tAsA, tAcA(_, _, k_tile), shape(mA));
    if (b_rows_inside && k_inside) copy(tBgB(_, _, k_tile), tBsB);
    else copy_or_zero(tBgB(_, _, k_tile), tBsB, tBcB(_, _, k_tile), shape(mB));
    __syncthreads();  // the tiles are complete before anyone reads another thread's elements

    // tCrC(m,n) += Σ_k tCsA(m,k) · tCsB(n,k). Per k: 8 + 8 shared loads feed 64 FMAs (1-D: 8 + 1 feed 8).
    gemm(tCsA, tCsB, tCrC);

    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

  // Registers -> global: every element when the tile of C is inside, else only those inside C.
  if (a_rows_inside && b_rows_inside) copy(tCrC, tCgC);
  else copy_if([&](int i) { return bool(elem_less(tCcC(i), shape(mC))); }, tCrC, tCgC);
}

// ---- Host side: the layouts for each storage order, and the launch ----

/// What the storage orders (OA, OB, OC) alone decide: which index of each operand is contiguous, and
/// the global strides. Both steps' configurations start from it.
template <Order OA, Order OB, Order OC>
struct StorageOrders {
  static constexpr Major a_major = major_of_a(OA);  ///< which index of A (M,K) is contiguous
  static constexpr Major b_major = major_of_b(OB);  ///< which index of B (N,K) is contiguous
  /// Strides of A as (M,K): row-major A has M×K with leading dimension K.
  static constexpr auto stride_a(const GemmProblem& p) {
    return operand_stride<a_major>(int(OA == Order::row ? p.k : p.m));
  }
  /// Strides of B as (N,K): row-major B (K×N) has leading dimension N, column-major K.
  static constexpr auto stride_b(const GemmProblem& p) {
    return operand_stride<b_major>(int(OB == Order::row ? p.n : p.k));
  }
  /// Strides of C as (M,N).
  static constexpr auto stride_c(const GemmProblem& p) { return c_stride<OC>(int(p.m), int(p.n)); }
};

/// Every layout the kernel takes for storage orders (OA, OB, OC), shared memory padded or not: the
/// 8×8 step. The tests check these same functions (coverage, coalescing, bank conflicts).
template <Order OA, Order OB, Order OC, bool Padded>
struct LayoutGemmConfig : StorageOrders<OA, OB, OC> {
  using Orders = StorageOrders<OA, OB, OC>;
  using Tiler = CtaTiler;                   ///< (BM,BN,BK) = (128,128,8)
  static constexpr int threads = kThreads;  ///< 256
  /// Copy threads for A over (BM,BK).
  static constexpr auto thread_a() { return copy_thread_layout<Orders::a_major>(); }
  /// Copy threads for B over (BN,BK).
  static constexpr auto thread_b() { return copy_thread_layout<Orders::b_major>(); }
  /// Compute threads over (BM,BN).
  static constexpr auto thread_c() { return compute_thread_layout<OC>(); }
  /// Shared layout of A's tile, (BM,BK).
  static constexpr auto smem_a() { return smem_layout<Padded>(); }
  /// Shared layout of B's tile, (BN,BK).
  static constexpr auto smem_b() { return smem_layout<Padded>(); }
};

/// One block per (BM,BN) tile of C: x counts tiles along M, y tiles along N.
template <class Tiler>
dim3 tile_grid(const GemmProblem& p) {
  return dim3(unsigned(ceil_div(p.m, size<0>(Tiler{}))), unsigned(ceil_div(p.n, size<1>(Tiler{}))));
}

/// Empty when the kernel with block tile Tiler takes `p`; otherwise the constraint it breaks.
template <class Tiler>
std::string tile_rejects(const GemmProblem& p) {
  constexpr int bm = size<0>(Tiler{}), bn = size<1>(Tiler{}), bk = size<2>(Tiler{});
  if (ceil_div(p.n, bn) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * bn) + " (65535 tiles of " + std::to_string(bn) +
           " columns along grid y)";
  // Offsets are 32-bit ints, also those of the out-of-range elements of a partial tile (computed,
  // never read): gemm/launch.hpp's 32-bit rule, with the block tile.
  return launch::int32_offset_rejects(p, bm, bn, bk);
}

/// One block per 128×128 tile of C: x counts tiles along M, y tiles along N.
inline dim3 layout_gemm_grid(const GemmProblem& p) { return tile_grid<CtaTiler>(p); }

/// Empty when the kernel takes `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
inline std::string layout_gemm_rejects(const GemmProblem& p) { return tile_rejects<CtaTiler>(p); }

// ---- The first step, 1-D block tiling: each thread a column of TM outputs ----
//
// Chapter 03's threads computed one element of C each and loaded a value of A and one of B from shared
// memory for every FMA. Here a thread computes TM = 8 elements of one column of C: per k it loads the
// column's value of B once and 8 values of A, 9 loads for 8 FMAs. The kernel is the one above; the
// host passes a (64,64,8) block tile, 512 threads and these layouts. The 8 values of A are the same
// for every lane of a warp (a broadcast): B's value is reused in registers, A's is not, which is what
// the 8×8 step changes.
namespace blocktile_1d {

using BM = _64;  ///< rows of C per block
using BN = _64;  ///< columns of C per block
using TM = _8;   ///< outputs per thread: a column of TM (a row of TM when C is column-major)
inline constexpr int kThreads = BM::value / TM::value * BN::value;  ///< 8 × 64 = 512
using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));           ///< (BM,BN,BK) = (64,64,8)

/// The compute thread layout over the (64,64) tile of C (local_partition: each thread takes its
/// element of every (8,64) or (64,8) tile of threads):
///  Row-major C:    (8,64):(64,1), lane = tn % 32. Thread (tm, tn) owns rows tm + 8i, i = 0..7, of
///                  column tn. A warp stores 32 consecutive floats of one row; its 8 values of A per k
///                  are one address for all lanes (a broadcast), its value of B 32 consecutive words.
///  Column-major C: (64,8):(1,64), lane = tm % 32. Thread (tm, tn) owns columns tn + 8j of row tm: the
///                  same tiling of Cᵀ = Bᵀ·Aᵀ, so that a warp stores 32 consecutive floats of a column.
template <Order c>
MM_HD constexpr auto compute_thread_layout() {
  using ThrM = Int<BM::value / TM::value>;  // 8 threads along M, each TM rows
  using ThrN = Int<BN::value / TM::value>;  // 8 threads along N, each TM columns (column-major C)
  if constexpr (c == Order::row) return make_layout(make_shape(ThrM{}, BN{}), LayoutRight{});  // (8,64):(64,1)
  else return make_layout(make_shape(BM{}, ThrN{}));                                           // (64,8):(1,64)
}

/// Shared tiles (64,8):(1,64), unpadded, for A and B: 2 KB each.
MM_HD constexpr auto smem_layout() { return ch05::smem_layout<false, BM>(); }

/// Every layout the kernel takes for the 1-D step with storage orders (OA, OB, OC).
template <Order OA, Order OB, Order OC>
struct Config : StorageOrders<OA, OB, OC> {
  using Orders = StorageOrders<OA, OB, OC>;
  using Tiler = CtaTiler;                   ///< (BM,BN,BK) = (64,64,8)
  static constexpr int threads = kThreads;  ///< 512
  /// Copy threads for A over (BM,BK): (64,8), one element each.
  static constexpr auto thread_a() { return copy_thread_layout<Orders::a_major, kThreads>(); }
  /// Copy threads for B over (BN,BK).
  static constexpr auto thread_b() { return copy_thread_layout<Orders::b_major, kThreads>(); }
  /// Compute threads over (BM,BN): (8,64) or (64,8).
  static constexpr auto thread_c() { return compute_thread_layout<OC>(); }
  /// Shared layout of A's tile, (BM,BK).
  static constexpr auto smem_a() { return smem_layout(); }
  /// Shared layout of B's tile, (BN,BK).
  static constexpr auto smem_b() { return smem_layout(); }
};

/// One block per 64×64 tile of C.
inline dim3 grid(const GemmProblem& p) { return tile_grid<CtaTiler>(p); }

/// Empty when the 1-D step takes `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
inline std::string rejects(const GemmProblem& p) { return tile_rejects<CtaTiler>(p); }

}  // namespace blocktile_1d

// ---- The launch ----

/// Launches the kernel with a step's layouts for one set of storage orders (Cfg: LayoutGemmConfig or
/// blocktile_1d::Config).
template <class Cfg>
void launch_layout_gemm_as(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using Tiler = typename Cfg::Tiler;
  const auto shape_MNK = make_shape(int(p.m), int(p.n), int(p.k));  // (M,N,K)
  layout_gemm_kernel<<<tile_grid<Tiler>(p), Cfg::threads, 0, stream>>>(
      shape_MNK, Tiler{},                                                //
      A, Cfg::stride_a(p), Cfg::smem_a(), Cfg::thread_a(),               //
      B, Cfg::stride_b(p), Cfg::smem_b(), Cfg::thread_b(),               //
      C, Cfg::stride_c(p), Cfg::thread_c());
}

/// Picks the instantiation for the problem's storage orders: the only run-time switch on them.
/// Config<OA, OB, OC> is a step's layouts for those orders.
template <template <Order, Order, Order> class Config>
void launch_for_storage_orders(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  constexpr Order R = Order::row, Cm = Order::col;
  const int code = (p.a == Cm) * 4 + (p.b == Cm) * 2 + (p.c == Cm);
  switch (code) {
    case 0: return launch_layout_gemm_as<Config<R, R, R>>(p, A, B, C, stream);
    case 1: return launch_layout_gemm_as<Config<R, R, Cm>>(p, A, B, C, stream);
    case 2: return launch_layout_gemm_as<Config<R, Cm, R>>(p, A, B, C, stream);
    case 3: return launch_layout_gemm_as<Config<R, Cm, Cm>>(p, A, B, C, stream);
    case 4: return launch_layout_gemm_as<Config<Cm, R, R>>(p, A, B, C, stream);
    case 5: return launch_layout_gemm_as<Config<Cm, R, Cm>>(p, A, B, C, stream);
    case 6: return launch_layout_gemm_as<Config<Cm, Cm, R>>(p, A, B, C, stream);
    default: return launch_layout_gemm_as<Config<Cm, Cm, Cm>>(p, A, B, C, stream);
  }
}

/// The 8×8 step's layouts, padded or not, as a template of the storage orders alone.
template <bool Padded>
struct Register8x8 {
  template <Order OA, Order OB, Order OC>
  using Config = LayoutGemmConfig<OA, OB, OC, Padded>;
};

/// The 8×8 step for the problem's storage orders; rejects what the grid or the indices cannot hold.
template <bool Padded>
void launch_layout_gemm(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = layout_gemm_rejects(p); !why.empty()) throw std::invalid_argument("layout_gemm: " + why);
  launch_for_storage_orders<Register8x8<Padded>::template Config>(p, A, B, C, stream);
}

/// Step 1: 64×64 tiles, 512 threads, each a column of 8 outputs; shared tiles (64,8):(1,64).
inline void launch_blocktile_1d(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  if (std::string why = blocktile_1d::rejects(p); !why.empty()) throw std::invalid_argument("blocktile_1d: " + why);
  launch_for_storage_orders<blocktile_1d::Config>(p, A, B, C, s);
}
/// Shared tiles (128,8):(1,128): a K-major operand's copy writes 8-way bank conflicts.
inline void launch_layout_unpadded(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_layout_gemm<false>(p, A, B, C, s);
}
/// Shared tiles (128,8):(1,129): the tutorial's padding, 4-way conflicts left for a K-major copy.
inline void launch_layout_padded(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_layout_gemm<true>(p, A, B, C, s);
}

}  // namespace mm::ch05

// ---- Where the chapter's kernels are compiled ----
//
// The three launches (all eight storage orders each) are instantiated once, in kernels.cu, and linked
// into the chapter binary, its tests and chapter 06, instead of being compiled again in each (the
// inline launchers above would otherwise instantiate every kernel in every file that includes this).
namespace mm::ch05 {
extern template void launch_layout_gemm<false>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_layout_gemm<true>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_for_storage_orders<blocktile_1d::Config>(const GemmProblem&, const float*, const float*,
                                                                     float*, cudaStream_t);
}  // namespace mm::ch05
