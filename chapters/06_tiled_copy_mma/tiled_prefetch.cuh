// Chapter 06's second kernel, tiled_prefetch: tiled.cuh with register prefetch. The loads of K step
// k+1 are issued right after step k's tile is in shared memory, before its 512 FFMA, so that the FMAs
// run while the loads are in flight; tiled waits for them at the top of every K step. The price is the
// 8 registers the next tile waits in; the shared tile is still single-buffered, so both barriers
// remain. Its steps:
//   tiled_prefetch                tiled_vec128's layouts with the register prefetch
//   tiled_prefetch_pairs_share_a  (appendix) the threads numbered N fastest: lane pairs share their
//                                 vector of A instead of B, the same 12 wavefronts per k
//
// Build: cmake --build build --target ch06_tiled_copy_mma
// Run:   build/bin/ch06_tiled_copy_mma --kernel tiled_prefetch [--layout all]
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "06_tiled_copy_mma/tiled_copy_mma.hpp"
#include "gemm/block_barrier.hpp"
#include "gemm/predicated_copy.hpp"
#include "layout/all.hpp"

namespace mm::ch06 {

// ---- The steps' configurations ----

/// tiled_prefetch: tiled_vec128's layouts (tiled.cuh); what changes is the kernel below.
struct TiledPrefetchCfg {
  static constexpr int kPad = 4;             ///< floats after each column of sA and sB: 16-byte aligned columns
  using TiledMma = TiledMmaT;                ///< permuted, M fastest: runs of 4 rows, 4 LDS.128 per k
  using CopyThreads = CoalescedCopyThreads;  ///< a warp's 32 vectors side by side
};
/// tiled_prefetch_pairs_share_a: the threads numbered N fastest, so the two lanes of a pair share
/// their vector of A, not of B. Still 12 wavefronts per k (A 2 + B 4 per load pair instead of
/// A 4 + B 2): the rule's minimum of 8 is out of reach for any numbering.
struct TiledPrefetchPairsShareACfg : TiledPrefetchCfg {
  using TiledMma = TiledMmaPairsShareA;
};

// ---- The kernel ----

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders, A seen as an
/// (M,K) tensor, B as (N,K), C as (M,N). Cfg: the shared padding and the TiledMMA (the copies are in
/// args). smem_a, smem_b: the block's shared tiles, Cfg's layouts' cosizes; sync_threads: the block's
/// barrier.
template <class Cfg, class Args, class Barrier>
MM_HD void tiled_prefetch_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem_a,
                                float* smem_b, Barrier const& sync_threads) {
  using CopyA = std::remove_cvref_t<decltype(args.copy_a)>;
  using CopyB = std::remove_cvref_t<decltype(args.copy_b)>;
  using TiledMma = typename Cfg::TiledMma;
  using SmemLayoutA = SmemLayoutAOf<Cfg>;
  using SmemLayoutB = SmemLayoutBOf<Cfg>;
  using TileMK = decltype(make_shape(BM{}, BK{}));
  static_assert(TiledMma::size() == kThreads, "one MMA thread per thread of the block (16×16)");
  static_assert(CopyA::size() == kThreads && CopyB::size() == kThreads, "one copy thread per thread of the block");
  static_assert(std::is_same_v<decltype(CopyA::tiler()), TileMK> && std::is_same_v<decltype(CopyB::tiler()), TileMK>,
                "one pass of a tiled copy moves one (128,8) tile: THR × VAL = (BM,BK)");
  static_assert(BM::value % 64 == 0 && BN::value % 64 == 0, "BM / 64: whole blocks of the MMA permutation");
  static_assert(std::is_same_v<TiledMma, TiledMmaUnpermuted> || Cfg::kPad % 4 == 0,
                "(BM + pad) % 4: the permuted TiledMMA's 128-bit shared loads need 16-byte aligned columns");
  const int M = args.m, N = args.n, K = args.k;
  auto const& copy_a = args.copy_a;
  auto const& copy_b = args.copy_b;
  TiledMma mma;
  CtaTiler cta_tiler;

  // Whole matrices, and their coordinates (for predication) with the same shapes.
  auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
  auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
  auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
  auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
  auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
  auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

  // This block's tiles.
  auto cta_coord = make_coord(block_m, block_n, _);
  auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});   // (BM,BK,k)
  auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});   // (BN,BK,k)
  auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});   // (BM,BN)
  auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});   // (BM,BK,k) -> (m,k)
  auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});   // (BN,BK,k) -> (n,k)
  auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});   // (BM,BN)   -> (m,n)
  auto sA = make_tensor(make_smem_ptr(smem_a), SmemLayoutA{});          // (BM,BK)
  auto sB = make_tensor(make_smem_ptr(smem_b), SmemLayoutB{});          // (BN,BK)

  // Copy partitions: what this thread moves, global -> registers -> shared.
  auto thr_copy_a = copy_a.get_slice(tid);
  auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
  auto tAsA = thr_copy_a.partition_D(sA);  // (CPY,CPY_M,CPY_K)
  auto tArA = make_fragment_like(tAsA);    // (CPY,CPY_M,CPY_K)
  auto thr_copy_b = copy_b.get_slice(tid);
  auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
  auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)
  auto tBsB = thr_copy_b.partition_D(sB);  // (CPY,CPY_N,CPY_K)
  auto tBrB = make_fragment_like(tBsB);    // (CPY,CPY_N,CPY_K)

  // MMA partitions: what this thread reads from shared memory and accumulates.
  auto thr_mma = mma.get_slice(tid);
  auto tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K)
  auto tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
  auto tCcC = thr_mma.partition_C(kC);  // (MMA,MMA_M,MMA_N) -> (m,n)
  // Registers for one k of A and of B: the partitions of a (BM,1) and a (BN,1) slice of the tiles.
  auto tCrA = thr_mma.partition_fragment_A(local_tile(sA, make_shape(BM{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_M,1)
  auto tCrB = thr_mma.partition_fragment_B(local_tile(sB, make_shape(BN{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_N,1)
  auto tCrC = thr_mma.make_fragment_C(tCgC);  // (MMA,MMA_M,MMA_N): the 8×8 accumulators
  clear(tCrC);

  // The 128-bit path needs the whole tile inside the matrix (block-uniform: no divergence) and
  // 16-byte aligned rows; along K it is decided per K step (only the last one can be partial).
  const bool a_vec_rows = args.a_vec && (block_m + 1) * BM{} <= M;
  const bool b_vec_rows = args.b_vec && (block_n + 1) * BN{} <= N;
  const int k_tiles = size<3>(tAgA);

  detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, 0, K);
  detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, 0, K);
  for (int kt = 0; kt < k_tiles; ++kt) {
    sync_threads();  // every warp has finished reading the previous tile from shared memory
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    sync_threads();  // the whole tile is in shared memory
    // Issue the next tile's loads now; nothing reads tArA/tBrB until the next iteration's
    // stores, so the 512 FMAs below run while the loads are in flight.
    if (kt + 1 < k_tiles) {
      detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, kt + 1, K);
      detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, kt + 1, K);
    }
#pragma unroll
    for (int kk = 0; kk < BK{}; ++kk) {
      copy(tCsA(_, _, kk), tCrA(_, _, 0));  // (MMA,MMA_M): 8 floats, two runs of 4 -> 2 LDS.128 (unpermuted: 8 LDS)
      copy(tCsB(_, _, kk), tCrB(_, _, 0));  // (MMA,MMA_N): 2 LDS.128 (unpermuted: 8 LDS)
      gemm(mma, tCrA, tCrB, tCrC);          // (MMA,MMA_M,MMA_N) += outer product: 64 FFMA
    }
  }

  // Epilogue: each thread writes its 8×8 accumulators, the ones inside C.
  copy_inside(tCrC, tCgC, tCcC, shape(mC));
}

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// The kernel: one block per 128×128 tile of C, blockIdx.x along M, blockIdx.y along N.
/// __launch_bounds__(256, 2): two blocks per SM, so at most 128 registers per thread.
template <class Cfg, class Args>
__global__ void __launch_bounds__(kThreads, 2) tiled_prefetch_gemm_kernel(Args args) {
  __shared__ alignas(16) float smem_a[cosize_v<SmemLayoutAOf<Cfg>>];  // (BM,BK)
  __shared__ alignas(16) float smem_b[cosize_v<SmemLayoutBOf<Cfg>>];  // (BN,BK)
  tiled_prefetch_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x), smem_a, smem_b, BlockBarrier{});
}

/// Host launch for any storage order: only the strides (and with them the tiled copies) change.
template <class Cfg>
void launch_tiled_prefetch(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = tiled_rejects(p); !why.empty()) throw std::invalid_argument("tiled_copy_mma: " + why);
  with_tiled_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    tiled_prefetch_gemm_kernel<Cfg><<<tiled_grid(p), kThreads, 0, stream>>>(args);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch06
