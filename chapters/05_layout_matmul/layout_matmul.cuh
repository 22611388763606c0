// Chapter 05: a register-tiled matmul written with layouts (MoYe's MatMul, CuTe's sgemm_1).
//
// One generic kernel. A block of 256 threads computes a 128×128 tile of C; per step along K it copies
// a (128,8) tile of A and one of B into shared memory, and each thread accumulates an 8×8 block of C in
// registers. Everything that depends on how the matrices are stored is a layout that the host passes:
// the global strides, the copy thread layouts (chosen so that a warp reads contiguous memory), the
// compute thread layout (chosen so that a warp writes contiguous C) and the shared-memory layouts
// (unpadded or padded). The storage orders RRR, RCR, CRR, CCR (and the four with a column-major C)
// are eight sets of layouts for the same kernel.
//
// Build: cmake --build build --target ch05_layout_matmul      Run: build/bin/ch05_layout_matmul
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/launch.hpp"
#include "harness/problem.hpp"
#include "layout/all.hpp"

namespace mm::ch05 {

// ---- The block tile and the thread count (compile-time: every register index is a constant) ----

using BM = _128;  ///< rows of C per block
using BN = _128;  ///< columns of C per block
using BK = _8;    ///< depth of one K step
inline constexpr int kThreads = 256;  ///< threads per block: 16×16 compute threads, each 8×8 of C

/// The block tile (BM, BN, BK) that local_tile cuts the matrices into.
using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));

using launch::ceil_div;    // harness/launch.hpp: blocks that cover an extent
using launch::max_grid_y;  // harness/launch.hpp: 65535 blocks along grid y

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
// (i + 32·v, j), v = 0..3. What matters is where the 32 lanes of one warp land:
//  MN-major operand: (32,8):(1,32), lane = mn. A warp reads 32 consecutive floats of one k column:
//                    128 contiguous bytes, 4 sectors.
//  K-major operand:  (32,8):(8,1), lane % 8 = k. A tile row is only 8 floats (32 bytes), so the best a
//                    warp can do is 4 rows × 8 consecutive floats: 4 full 32-byte sectors, again 4
//                    sectors for 32 floats. The MN-major thread layout would put the 32 lanes in 32
//                    different rows: 32 sectors, 8 times the memory transactions.

/// The copy thread layout for an operand of the given majorness.
template <Major major>
MM_HD constexpr auto copy_thread_layout() {
  if constexpr (major == Major::mn) return make_layout(make_shape(_32{}, _8{}));            // (32,8):(1,32)
  else return make_layout(make_shape(_32{}, _8{}), LayoutRight{});                           // (32,8):(8,1)
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

/// (BM,BK):(1,BM) or, padded, (BM,BK):(1,BM+1). The same layout for A (BM = 128) and B (BN = 128).
template <bool padded>
MM_HD constexpr auto smem_layout() {
  if constexpr (padded) return make_layout(make_shape(BM{}, BK{}), make_stride(_1{}, Int<BM::value + 1>{}));
  else return make_layout(make_shape(BM{}, BK{}));  // (128,8):(1,128)
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

/// C = A·B for any storage orders: every order-dependent choice arrives as a layout or stride.
///   shape_MNK: (M,N,K)                    cta_tiler: (BM,BN,BK)
///   dA: strides of A as (M,K)             sA_layout: (BM,BK) shared   tA: copy threads over (BM,BK)
///   dB: strides of B as (N,K)             sB_layout: (BN,BK) shared   tB: copy threads over (BN,BK)
///   dC: strides of C as (M,N)             tC: compute threads over (BM,BN)
/// Any M, N, K ≥ 1: out-of-range elements of a tile are zeros in shared memory, and only elements
/// inside C are stored.
template <class ProblemShape, class Tiler, class AStride, class ASmemLayout, class AThreadLayout, class BStride,
          class BSmemLayout, class BThreadLayout, class CStride, class CThreadLayout>
__global__ void __launch_bounds__(kThreads)
    layout_gemm_kernel(ProblemShape shape_MNK, Tiler cta_tiler,                          //
                       float const* A, AStride dA, ASmemLayout sA_layout, AThreadLayout tA,  //
                       float const* B, BStride dB, BSmemLayout sB_layout, BThreadLayout tB,  //
                       float* C, CStride dC, CThreadLayout tC) {
  // Preconditions, all on compile-time layouts.
  static_assert(is_static_v<Tiler> && is_static_v<ASmemLayout> && is_static_v<BSmemLayout>,
                "tile and shared layouts are compile-time: register and shared indices must be constants");
  static_assert(is_static_v<AThreadLayout> && is_static_v<BThreadLayout> && is_static_v<CThreadLayout>,
                "thread layouts are compile-time");
  static_assert(size_v<AThreadLayout> == kThreads && size_v<BThreadLayout> == kThreads &&
                    size_v<CThreadLayout> == kThreads,
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
  auto tAgA = local_partition(gA, tA, t);   // (THR_M,THR_K,k)  = (4,1,k)
  auto tAcA = local_partition(cgA, tA, t);  // (THR_M,THR_K,k) -> (m,k)
  auto tAsA = local_partition(sA, tA, t);   // (THR_M,THR_K)    = (4,1)
  auto tBgB = local_partition(gB, tB, t);   // (THR_N,THR_K,k)  = (4,1,k)
  auto tBcB = local_partition(cgB, tB, t);  // (THR_N,THR_K,k) -> (n,k)
  auto tBsB = local_partition(sB, tB, t);   // (THR_N,THR_K)    = (4,1)

  // Compute partitions: thread (tm, tn) of tC needs rows tm + 16i of sA and columns tn + 16j of sB,
  // for every k. The projection Step<_1,X> partitions sA's M by tC's first mode and keeps all of K
  // (MoYe's (1, :)); Step<X,_1> partitions sB's N by tC's second mode (MoYe's (:, 1)).
  auto tCsA = local_partition(sA, tC, t, Step<_1, X>{});   // (THR_M,BK) = (8,8)
  auto tCsB = local_partition(sB, tC, t, Step<X, _1>{});   // (THR_N,BK) = (8,8)
  auto tCgC = local_partition(gC, tC, t, Step<_1, _1>{});  // (THR_M,THR_N) = (8,8)
  auto tCcC = local_partition(cgC, tC, t, Step<_1, _1>{}); // (THR_M,THR_N) -> (m,n)

  // The accumulators: 64 floats in registers (a static layout, fully unrolled loops).
  auto tCrC = make_tensor_like(tCgC);  // (THR_M,THR_N)
  clear(tCrC);

  // A tile that lies entirely inside its matrix copies without predicates: the common case. Only the
  // blocks on the bottom and right edges and the last K step (when BK does not divide K) take the
  // predicated path, which checks every element's coordinate against the matrix shape.
  const int M = int(size<0>(shape_MNK)), N = int(size<1>(shape_MNK)), K = int(size<2>(shape_MNK));
  const bool a_rows_inside = (int(blockIdx.x) + 1) * BM::value <= M;
  const bool b_rows_inside = (int(blockIdx.y) + 1) * BN::value <= N;

  const int k_tiles = int(size<2>(gA));
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    // Global -> shared (through registers). Elements outside A or B become zeros: they add nothing.
    const bool k_inside = (k_tile + 1) * BK::value <= K;
    if (a_rows_inside && k_inside) copy(tAgA(_, _, k_tile), tAsA);
    else copy_or_zero(tAgA(_, _, k_tile), tAsA, tAcA(_, _, k_tile), shape(mA));
    if (b_rows_inside && k_inside) copy(tBgB(_, _, k_tile), tBsB);
    else copy_or_zero(tBgB(_, _, k_tile), tBsB, tBcB(_, _, k_tile), shape(mB));
    __syncthreads();  // the tiles are complete before anyone reads another thread's elements

    // tCrC(m,n) += Σ_k tCsA(m,k) · tCsB(n,k). Per k: 8 + 8 shared loads feed 64 FMAs.
    gemm(tCsA, tCsB, tCrC);

    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

  // Registers -> global: every element when the tile of C is inside, else only those inside C.
  if (a_rows_inside && b_rows_inside) copy(tCrC, tCgC);
  else copy_if([&](int i) { return bool(elem_less(tCcC(i), shape(mC))); }, tCrC, tCgC);
}

// ---- Host side: the layouts for each storage order, and the launch ----

/// Every layout the kernel takes for storage orders (OA, OB, OC), shared memory padded or not.
/// The tests check these same functions (coverage, coalescing, bank conflicts).
template <Order OA, Order OB, Order OC, bool Padded>
struct LayoutGemmConfig {
  static constexpr Major a_major = major_of_a(OA);  ///< which index of A (M,K) is contiguous
  static constexpr Major b_major = major_of_b(OB);  ///< which index of B (N,K) is contiguous
  /// Copy threads for A over (BM,BK).
  static constexpr auto thread_a() { return copy_thread_layout<a_major>(); }
  /// Copy threads for B over (BN,BK).
  static constexpr auto thread_b() { return copy_thread_layout<b_major>(); }
  /// Compute threads over (BM,BN).
  static constexpr auto thread_c() { return compute_thread_layout<OC>(); }
  /// Shared layout of A's tile, (BM,BK).
  static constexpr auto smem_a() { return smem_layout<Padded>(); }
  /// Shared layout of B's tile, (BN,BK).
  static constexpr auto smem_b() { return smem_layout<Padded>(); }
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

/// One block per 128×128 tile of C: x counts tiles along M, y tiles along N.
inline dim3 layout_gemm_grid(const GemmProblem& p) {
  return dim3(unsigned(ceil_div(p.m, BM::value)), unsigned(ceil_div(p.n, BN::value)));
}

/// Empty when the kernel takes `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
inline std::string layout_gemm_rejects(const GemmProblem& p) {
  if (ceil_div(p.n, BN::value) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * BN::value) + " (65535 tiles of 128 columns along grid y)";
  // Offsets are 32-bit ints, also those of the out-of-range elements of a partial tile (computed,
  // never read): harness/launch.hpp's 32-bit rule, with the block tile.
  return launch::int32_offset_rejects(p, BM::value, BN::value, BK::value);
}

/// Launches the kernel with the layouts of storage orders (OA, OB, OC).
template <Order OA, Order OB, Order OC, bool Padded>
void launch_layout_gemm_as(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using Cfg = LayoutGemmConfig<OA, OB, OC, Padded>;
  const auto shape_MNK = make_shape(int(p.m), int(p.n), int(p.k));  // (M,N,K)
  layout_gemm_kernel<<<layout_gemm_grid(p), kThreads, 0, stream>>>(
      shape_MNK, CtaTiler{},                                             //
      A, Cfg::stride_a(p), Cfg::smem_a(), Cfg::thread_a(),               //
      B, Cfg::stride_b(p), Cfg::smem_b(), Cfg::thread_b(),               //
      C, Cfg::stride_c(p), Cfg::thread_c());
}

/// Picks the instantiation for the problem's storage orders: the only run-time switch on them.
template <bool Padded>
void launch_layout_gemm(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = layout_gemm_rejects(p); !why.empty()) throw std::invalid_argument("layout_gemm: " + why);
  constexpr Order R = Order::row, Cm = Order::col;
  const int code = (p.a == Cm) * 4 + (p.b == Cm) * 2 + (p.c == Cm);
  switch (code) {
    case 0: return launch_layout_gemm_as<R, R, R, Padded>(p, A, B, C, stream);
    case 1: return launch_layout_gemm_as<R, R, Cm, Padded>(p, A, B, C, stream);
    case 2: return launch_layout_gemm_as<R, Cm, R, Padded>(p, A, B, C, stream);
    case 3: return launch_layout_gemm_as<R, Cm, Cm, Padded>(p, A, B, C, stream);
    case 4: return launch_layout_gemm_as<Cm, R, R, Padded>(p, A, B, C, stream);
    case 5: return launch_layout_gemm_as<Cm, R, Cm, Padded>(p, A, B, C, stream);
    case 6: return launch_layout_gemm_as<Cm, Cm, R, Padded>(p, A, B, C, stream);
    default: return launch_layout_gemm_as<Cm, Cm, Cm, Padded>(p, A, B, C, stream);
  }
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
// The two launches (all eight storage orders each) are instantiated once, in kernels.cu, and linked
// into the chapter binary, its tests and chapter 06, instead of being compiled again in each (the
// inline launchers above would otherwise instantiate every kernel in every file that includes this).
namespace mm::ch05 {
extern template void launch_layout_gemm<false>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_layout_gemm<true>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
}  // namespace mm::ch05
