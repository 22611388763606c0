// Chapter 06's first kernel, tiled: chapter 05's 128×128×8 register-tiled matmul written with a
// TiledCopy and a TiledMMA (tiled_copy_mma.hpp). Each K step: load the tile from global memory into
// registers (one 128-bit load per thread and operand), store it to shared memory, barrier, 8 × 64 FFMA
// from 128-bit shared loads, barrier. The chapter's steps from chapter 05 are configurations of it:
//   tiled_ldg128              chapter 05's computation with coalesced 128-bit global loads (TiledCopy);
//                             its pad of 1 and its unpermuted threads, so scalar STS and LDS remain
//   tiled_ldg128_pad4         + a pad of 4: 16-byte aligned columns, conflict-free copy stores
//   tiled_vec128              + the permuted TiledMMA: 4 LDS.128 per k instead of 16 LDS
//   tiled_vec128_uncoalesced  the counter-example: the same vectors, each lane alone in its 32-byte sector
// Any M, N, K and storage order: a tile that overhangs the matrix, or a matrix whose rows are not
// 16-byte aligned, is loaded float by float with zeros outside (tiled_copy_mma.hpp, load_k_tile).
//
// Build: cmake --build build --target ch06_tiled_copy_mma
// Run:   build/bin/ch06_tiled_copy_mma --kernel tiled_vec128 [--layout all]
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

// ---- The steps' configurations: each the one before plus its change ----

/// tiled_ldg128: coalesced 128-bit global loads; chapter 05's pad of 1 and unpermuted threads, so
/// shared memory is still written and read with scalar STS and LDS.
struct TiledLdg128Cfg {
  static constexpr int kPad = 1;             ///< floats after each column of sA and sB
  using TiledMma = TiledMmaUnpermuted;       ///< 16×16 threads, 8×8 of C each, rows 16 apart
  using CopyThreads = CoalescedCopyThreads;  ///< a warp's 32 vectors side by side
};
/// tiled_ldg128_pad4: a pad of 4. Columns 16-byte aligned (an MN-major copy stores one STS.128) and
/// the K-major copy's stores conflict-free; the inner loop still reads scalars.
struct TiledLdg128Pad4Cfg : TiledLdg128Cfg {
  static constexpr int kPad = 4;
};
/// tiled_vec128, the chapter's kernel: + the permuted TiledMMA, runs of 4 rows: 4 LDS.128 per k.
struct TiledVec128Cfg : TiledLdg128Pad4Cfg {
  using TiledMma = TiledMmaT;
};
/// tiled_vec128_uncoalesced, the counter-example: the same 128-bit vectors, assigned to lanes so that
/// a warp's request is strided (every lane alone in its 32-byte sector).
struct TiledVec128UncoalescedCfg : TiledVec128Cfg {
  using CopyThreads = StridedCopyThreads;
};

// ---- The kernel ----

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders, A seen as an
/// (M,K) tensor, B as (N,K), C as (M,N). Cfg: the shared padding and the TiledMMA (the copies are in
/// args). smem_a, smem_b: the block's shared tiles, Cfg's layouts' cosizes; sync_threads: the block's
/// barrier.
template <class Cfg, class Args, class Barrier>
MM_HD void tiled_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem_a, float* smem_b,
                       Barrier const& sync_threads) {
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

  for (int kt = 0; kt < k_tiles; ++kt) {
    // The warps wait for global memory here, with nothing else to do.
    detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, kt, K);
    detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, kt, K);
    sync_threads();  // every warp has finished reading the previous tile from shared memory
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    sync_threads();  // the whole tile is in shared memory
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
__global__ void __launch_bounds__(kThreads, 2) tiled_gemm_kernel(Args args) {
  __shared__ alignas(16) float smem_a[cosize_v<SmemLayoutAOf<Cfg>>];  // (BM,BK)
  __shared__ alignas(16) float smem_b[cosize_v<SmemLayoutBOf<Cfg>>];  // (BN,BK)
  tiled_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x), smem_a, smem_b, BlockBarrier{});
}

/// Host launch for any storage order: only the strides (and with them the tiled copies) change.
template <class Cfg>
void launch_tiled(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = tiled_rejects(p); !why.empty()) throw std::invalid_argument("tiled_copy_mma: " + why);
  with_tiled_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    tiled_gemm_kernel<Cfg><<<tiled_grid(p), kThreads, 0, stream>>>(args);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch06
