// Chapter 05's kernel, layout_gemm_kernel: a register-tiled matmul written with layouts (MoYe's
// MatMul, CuTe's sgemm_1), and the chapter's three steps as configurations of it.
//
// Over chapter 03 (one output per thread, two shared loads per FMA), each thread accumulates a
// TM×TN block of C in registers, so that every value it loads from shared memory feeds several
// FMAs. A block computes a BM×BN tile of C; per K step of 8 it copies a (BM,8) tile of A and a
// (BN,8) tile of B into shared memory. Everything that depends on the tiling or on how the matrices
// are stored is a layout that the host passes: the block tile, the global strides, the copy thread
// layouts (a warp reads contiguous memory), the compute thread layout (which outputs a thread owns,
// and a warp writing contiguous C) and the shared layouts. The storage orders RRR, RCR, CRR, CCR
// (and the four with a column-major C) are eight sets of layouts for the same kernel; so are the
// steps:
//   blocktile_1d     64×64 tiles, 512 threads, each a column of 8 outputs (TM×TN = 8×1)
//   layout_unpadded  128×128 tiles, 256 threads, each an 8×8 block (TN = 8; the tile grows with it)
//   layout_padded    layout_unpadded with one float of padding per column of the shared tiles
//
// Build: cmake --build build --target ch05_layout_matmul
// Run:   build/bin/ch05_layout_matmul [--kernel layout_padded] [--layout all]
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "gemm/predicated_copy.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_grid.hpp"
#include "layout/all.hpp"

namespace mm::ch05 {

// ---- The steps: what each chooses (the layouts below follow from it) ----
//
// A configuration names the block tile, the thread tile and the shared padding; the thread count,
// the thread layouts and the shared layouts follow (Layouts below). Each step is the one before
// plus its change.

/// Step 1, blocktile_1d (siboehm's 1-D block tiling): each thread a column of TM = 8 outputs.
/// Per k it loads the column's value of B once and 8 values of A (a broadcast: the same for every
/// lane of a warp), 9 loads for 8 FMAs. 64×64 tiles: 512 threads.
struct Blocktile1dCfg {
  using BM = _64;  ///< rows of C per block
  using BN = _64;  ///< columns of C per block
  using BK = _8;   ///< depth of one K step
  using TM = _8;   ///< outputs per thread along M (along N when C is column-major)
  using TN = _1;   ///< outputs per thread along N (along M when C is column-major)
  static constexpr bool kPadded = false;  ///< shared tiles (MN,BK):(1,MN), or padded (1,MN+1)
};

/// Step 2, layout_unpadded: an 8×8 block of outputs per thread, 8 + 8 loads for 64 FMAs. The block
/// tile grows to 128×128 with it: 256 threads of 64 outputs each.
struct LayoutUnpaddedCfg : Blocktile1dCfg {
  using TN = _8;
  using BM = _128;
  using BN = _128;
};

/// Step 3, layout_padded: the tutorial's padding, one float after each column of the shared tiles:
/// a K-major operand's copy writes 4-way bank conflicts instead of 8-way.
struct LayoutPaddedCfg : LayoutUnpaddedCfg {
  static constexpr bool kPadded = true;
};

/// Threads per block: one per TM×TN block of the BM×BN tile of C (512, 256).
template <class Cfg>
inline constexpr int kThreadsOf = Cfg::BM::value * Cfg::BN::value / (Cfg::TM::value * Cfg::TN::value);

/// The block tile (BM, BN, BK) that local_tile cuts the matrices into.
template <class Cfg>
using CtaTilerOf = decltype(make_shape(typename Cfg::BM{}, typename Cfg::BN{}, typename Cfg::BK{}));

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
// The block's threads copy a (BM,8) tile, BM·8 / Threads elements each. The thread layout maps
// thread index -> its (mn, k) position in a (Threads/8, 8) grid of threads; local_partition gives
// thread (i, j) the elements (i + Threads/8 · v, j). For the 8×8 steps: 256 threads, a (32,8) grid,
// 4 elements each; for blocktile_1d 512 threads, (64,8), one element each, whose warps land exactly
// as below. What matters is where the 32 lanes of one warp land:
//  MN-major operand: (32,8):(1,32), lane = mn. A warp reads 32 consecutive floats of one k column:
//                    128 contiguous bytes, 4 sectors.
//  K-major operand:  (32,8):(8,1), lane % 8 = k. A tile row is only 8 floats (32 bytes), so the best a
//                    warp can do is 4 rows × 8 consecutive floats: 4 full 32-byte sectors, again 4
//                    sectors for 32 floats. The MN-major thread layout would put the 32 lanes in 32
//                    different rows: 32 sectors, 8 times the memory transactions.

/// The copy thread layout for an operand of the given majorness: Threads / 8 rows of threads by the
/// 8 columns of a K step.
template <Major major, int Threads>
MM_HD constexpr auto copy_thread_layout() {
  using ThrMN = Int<Threads / 8>;  // 32 for 256 threads, 64 for 512
  if constexpr (major == Major::mn) return make_layout(make_shape(ThrMN{}, _8{}));  // (32,8):(1,32), (64,8):(1,64)
  else return make_layout(make_shape(ThrMN{}, _8{}), LayoutRight{});                 // (32,8):(8,1),  (64,8):(8,1)
}

// ---- Compute threads: each a TM×TN block of C ----
//
// local_partition with a (ThrM,ThrN) thread layout gives thread (tm, tn) rows tm + ThrM·i and columns
// tn + ThrN·j (an "outer" partition: each thread's elements are ThrM and ThrN apart). Which of tm, tn
// runs fastest along the warp matters for the final store of C: along the contiguous mode of C.
//  8×8 steps, (16,16) threads:
//   Row-major C:    (16,16):(16,1), lane % 16 = tn: a warp stores 2 rows × 16 consecutive floats.
//   Column-major C: (16,16):(1,16), lane % 16 = tm: a warp stores 2 columns × 16 consecutive floats.
//   Both are conflict-free when reading shared memory: one operand is read at 16 consecutive
//   addresses, the other at 2 (a broadcast).
//  blocktile_1d, over its (64,64) tile:
//   Row-major C:    (8,64):(64,1), lane = tn % 32. Thread (tm, tn) owns rows tm + 8i, i = 0..7, of
//                   column tn. A warp stores 32 consecutive floats of one row; its 8 values of A per k
//                   are one address for all lanes (a broadcast), its value of B 32 consecutive words.
//   Column-major C: (64,8):(1,64), lane = tm % 32. Thread (tm, tn) owns columns tn + 8j of row tm: the
//                   same tiling of Cᵀ = Bᵀ·Aᵀ (a TN×TM block), so that a warp stores 32 consecutive
//                   floats of a column.

/// The compute thread layout of configuration Cfg for a C of the given storage order.
template <class Cfg, Order c>
MM_HD constexpr auto compute_thread_layout() {
  constexpr int bm = Cfg::BM::value, bn = Cfg::BN::value, tm = Cfg::TM::value, tn = Cfg::TN::value;
  if constexpr (c == Order::row) return make_layout(make_shape(Int<bm / tm>{}, Int<bn / tn>{}), LayoutRight{});
  else return make_layout(make_shape(Int<bm / tn>{}, Int<bn / tm>{}));  // the transposed thread tile
}

// ---- Shared memory: (Rows,8) with MN contiguous, unpadded or padded by one element per column ----

/// (Rows,BK):(1,Rows) or, padded, (Rows,BK):(1,Rows+1). The same layout for A (Rows = BM) and B (BN).
template <bool padded, class Rows>
MM_HD constexpr auto smem_layout() {
  if constexpr (padded) return make_layout(make_shape(Rows{}, _8{}), make_stride(_1{}, Int<Rows::value + 1>{}));
  else return make_layout(make_shape(Rows{}, _8{}));  // (128,8):(1,128)
}

// ---- The kernel ----

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
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
#endif  // defined(__CUDACC__)

// ---- Host side: the layouts for each storage order, and the launch ----

/// What the storage orders (OA, OB, OC) alone decide: which index of each operand is contiguous, and
/// the global strides.
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

/// Every layout the kernel takes for configuration Cfg and storage orders (OA, OB, OC). The tests
/// check these same functions (coverage, coalescing, bank conflicts).
template <class Cfg, Order OA, Order OB, Order OC>
struct Layouts : StorageOrders<OA, OB, OC> {
  using Orders = StorageOrders<OA, OB, OC>;
  using Tiler = CtaTilerOf<Cfg>;                   ///< (BM,BN,BK)
  static constexpr int threads = kThreadsOf<Cfg>;  ///< 512 or 256
  /// Copy threads for A over (BM,BK).
  static constexpr auto thread_a() { return copy_thread_layout<Orders::a_major, threads>(); }
  /// Copy threads for B over (BN,BK).
  static constexpr auto thread_b() { return copy_thread_layout<Orders::b_major, threads>(); }
  /// Compute threads over (BM,BN).
  static constexpr auto thread_c() { return compute_thread_layout<Cfg, OC>(); }
  /// Shared layout of A's tile, (BM,BK).
  static constexpr auto smem_a() { return smem_layout<Cfg::kPadded, typename Cfg::BM>(); }
  /// Shared layout of B's tile, (BN,BK).
  static constexpr auto smem_b() { return smem_layout<Cfg::kPadded, typename Cfg::BN>(); }
};

/// One block per BM×BN tile of C: x counts tiles along M, y tiles along N.
template <class Cfg>
dim3 layout_gemm_grid(const GemmProblem& p) {
  return tile_grid(p, Cfg::BM::value, Cfg::BN::value);
}

/// Empty when the kernel with configuration Cfg takes `p`; otherwise the constraint it breaks: N on
/// grid y, and 32-bit offsets (gemm/tile_grid.hpp).
template <class Cfg>
std::string layout_gemm_rejects(const GemmProblem& p) {
  return tile_grid_rejects(p, Cfg::BM::value, Cfg::BN::value, Cfg::BK::value);
}

#if defined(__CUDACC__)  // the launch: nvcc's
/// Launches the kernel with the layouts L (a Layouts<Cfg, OA, OB, OC>).
template <class L>
void launch_layout_gemm_as(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using Tiler = typename L::Tiler;
  const auto shape_MNK = make_shape(int(p.m), int(p.n), int(p.k));  // (M,N,K)
  layout_gemm_kernel<<<tile_grid(p, size<0>(Tiler{}), size<1>(Tiler{})), L::threads, 0, stream>>>(
      shape_MNK, Tiler{},                                            //
      A, L::stride_a(p), L::smem_a(), L::thread_a(),                 //
      B, L::stride_b(p), L::smem_b(), L::thread_b(),                 //
      C, L::stride_c(p), L::thread_c());
}

/// Step Cfg for the problem's storage orders: the only run-time switch on them. Rejects what the grid
/// or the 32-bit offsets cannot hold.
template <class Cfg>
void launch_layout_gemm(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = layout_gemm_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("layout_gemm: " + why);
  constexpr Order R = Order::row, Cm = Order::col;
  const int code = (p.a == Cm) * 4 + (p.b == Cm) * 2 + (p.c == Cm);
  switch (code) {
    case 0: return launch_layout_gemm_as<Layouts<Cfg, R, R, R>>(p, A, B, C, stream);
    case 1: return launch_layout_gemm_as<Layouts<Cfg, R, R, Cm>>(p, A, B, C, stream);
    case 2: return launch_layout_gemm_as<Layouts<Cfg, R, Cm, R>>(p, A, B, C, stream);
    case 3: return launch_layout_gemm_as<Layouts<Cfg, R, Cm, Cm>>(p, A, B, C, stream);
    case 4: return launch_layout_gemm_as<Layouts<Cfg, Cm, R, R>>(p, A, B, C, stream);
    case 5: return launch_layout_gemm_as<Layouts<Cfg, Cm, R, Cm>>(p, A, B, C, stream);
    case 6: return launch_layout_gemm_as<Layouts<Cfg, Cm, Cm, R>>(p, A, B, C, stream);
    default: return launch_layout_gemm_as<Layouts<Cfg, Cm, Cm, Cm>>(p, A, B, C, stream);
  }
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch05
