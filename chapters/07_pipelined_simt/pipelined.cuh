// Chapter 07's first kernel, pipelined: chapter 06's tile (128×128×8, 16×16 threads of 8×8, 128-bit
// shared loads) with its tiles arriving by cp.async in a ring of S shared-memory stages: no register
// staging, S-1 K steps in flight, one barrier per K step instead of two. Its steps, each a
// configuration (pipelined_simt.hpp, Traits, derives the layouts from it):
//   pipelined_s2  a ring of 2 stages
//   pipelined_s3  (appendix) 3 stages: within the run-to-run spread of both s2 and s4
//   pipelined_s4  4 stages: the copies get one more K step of slack
//   warp_tiled    pipelined_s3 with the threads numbered by warps (a warp owns 64×32 of C)
//   swizzled      warp_tiled with a Swizzle in place of the padding of the shared tiles
// cp.async needs sm_80: a device pass for an older target compiles a stub (layout/arch.hpp), which the
// harness never launches.
//
// Build: cmake --build build --target ch07_pipelined_simt
// Run:   build/bin/ch07_pipelined_simt --kernel pipelined_s2 [--layout all]
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "07_pipelined_simt/pipelined_simt.hpp"
#include "gemm/block_barrier.hpp"
#include "gemm/predicated_copy.hpp"
#include "gemm/smem.hpp"
#include "layout/all.hpp"

namespace mm::ch07 {

// ---- The steps' configurations: each the one before plus its change ----

/// pipelined_s2: chapter 06's tile, 16×16 threads of 8×8 numbered as there, padded shared tiles,
/// and a ring of 2 stages filled by cp.async.
struct PipelinedS2Cfg {
  using BM = _128;                         ///< rows of C per block
  using BN = _128;                         ///< columns of C per block
  using BK = _8;                           ///< depth of one K step
  static constexpr int kStages = 2;        ///< shared-memory tiles in flight
  using ThrLayout = Plain16x16;            ///< chapter 06's thread numbering: lane pairs share B
  static constexpr Smem kSmem = Smem::padded;  ///< (MN,BK):(1,MN+4)
  static constexpr int kMinBlocks = 2;     ///< two blocks per SM: at most 128 registers per thread
  using FragVec = float4;                  ///< the vector type of the 128-bit shared loads
  static constexpr bool kL2Prefetch = false;  ///< no .L2::128B hint on the copies
};
/// pipelined_s3 (appendix): a third stage.
struct PipelinedS3Cfg : PipelinedS2Cfg {
  static constexpr int kStages = 3;
};
/// pipelined_s4: a fourth stage.
struct PipelinedS4Cfg : PipelinedS3Cfg {
  static constexpr int kStages = 4;
};
/// warp_tiled: pipelined_s3 with the threads numbered by warps of 8×4 lanes.
struct WarpTiledCfg : PipelinedS3Cfg {
  using ThrLayout = Warp16x16;
};
/// swizzled: warp_tiled with swizzled shared tiles in place of padded ones.
struct SwizzledCfg : WarpTiledCfg {
  static constexpr Smem kSmem = Smem::swizzled;
};

// A ring of S stages of (MN,BK) with k-rows of MN+4 floats ends at the last row's MN-th float: the
// pad after it is never used.
static_assert(Traits<PipelinedS2Cfg>::kSmemBytes == 2 * (2 * 8 * 132 - 4) * 4, "16.5 KB");
static_assert(Traits<PipelinedS4Cfg>::kSmemBytes == 2 * (4 * 8 * 132 - 4) * 4, "33 KB");

// ---- The kernel ----

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders. A is seen as
/// an (M,K) tensor, B as (N,K), C as (M,N). `smem` holds both rings (Traits<Cfg>::kSmemBytes). The
/// host pass keeps the body for the CPU tests (a cp.async is a plain copy there).
template <class Cfg, class Args, class Barrier>
MM_HD void pipelined_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem,
                           Barrier const& sync_threads) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    using T = Traits<Cfg>;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    constexpr int S = Cfg::kStages;
    using TiledMma = typename T::TiledMma;
    static_assert(TiledMma::size() == T::kThreads, "one compute thread per thread of the block");
    const int M = args.m, N = args.n, K = args.k;
    TiledMma mma;
    typename T::CtaTiler cta_tiler;

    // Whole matrices, and their coordinates (for predication) with the same shapes.
    auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
    auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
    auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
    auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
    auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
    auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

    // This block's tiles, and the shared rings.
    auto cta_coord = make_coord(block_m, block_n, _);
    auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
    auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
    auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
    auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k) -> (m,k)
    auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k) -> (n,k)
    auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)   -> (m,n)
    auto sA = make_tensor(make_smem_ptr(smem), typename T::SmemLayoutA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(smem + cosize_v<typename T::SmemLayoutA>),
                          typename T::SmemLayoutB{});                       // (BN,BK,S)

    // Copy partitions: what this thread moves from global to shared memory.
    auto thr_copy_a = args.copy_a.get_slice(tid);
    auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
    auto thr_copy_b = args.copy_b.get_slice(tid);
    auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)

    // MMA partitions: what this thread accumulates (and, per stage below, reads from shared memory).
    auto thr_mma = mma.get_slice(tid);
    auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCcC = thr_mma.partition_C(kC);  // (MMA,MMA_M,MMA_N) -> (m,n)
    auto tCrC = thr_mma.make_fragment_C(tCgC);  // (MMA,MMA_M,MMA_N): the accumulators
    clear(tCrC);

    // The unpredicated path needs the whole tile inside the matrix (block-uniform: no divergence) and,
    // for 16-byte copies, aligned rows; along K it is decided per K step (only the last can be partial).
    const bool a_rows = args.a_vec && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      auto tAsA = thr_copy_a.partition_D(sA(_, _, stage));  // (CPY,CPY_M,CPY_K)
      auto tBsB = thr_copy_b.partition_D(sB(_, _, stage));  // (CPY,CPY_N,CPY_K)
      detail::issue_k_tile(args.copy_a, tAgA, tAcA, tAsA, shape(mA), a_rows && k_inside, kt);
      detail::issue_k_tile(args.copy_b, tBgB, tBcB, tBsB, shape(mB), b_rows && k_inside, kt);
    };

    // Prologue: S-1 K steps in flight before the first multiply. Every K step commits one group
    // (empty past the last one), so "S-2 groups may still be pending" always means "the oldest landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) issue(s);
      cp_async_fence();
    }

    // Registers for one k of A and of B: partitions of a (BM,1) and a (BN,1) slice of a stage.
    auto tCrA = thr_mma.partition_fragment_A(local_tile(sA(_, _, 0), make_shape(BM{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_M,1)
    auto tCrB = thr_mma.partition_fragment_B(local_tile(sB(_, _, 0), make_shape(BN{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_N,1)
    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<S - 2>();  // this thread's copies of step kt have landed
      sync_threads();          // everyone's have; and everyone has finished reading step kt-1's stage
      // Refill the stage that step kt-1 used (the barrier above makes that safe) with step kt+S-1.
      if (kt + S - 1 < k_tiles) issue(kt + S - 1);
      cp_async_fence();
      const int stage = kt % S;
      auto tCsA = thr_mma.partition_A(sA(_, _, stage));  // (MMA,MMA_M,BK)
      auto tCsB = thr_mma.partition_B(sB(_, _, stage));  // (MMA,MMA_N,BK)
#pragma unroll
      for (int kk = 0; kk < BK{}; ++kk) {
        detail::copy_fragment<typename T::SmemToRegs>(tCsA(_, _, kk), tCrA(_, _, 0));  // RunsM LDS.128
        detail::copy_fragment<typename T::SmemToRegs>(tCsB(_, _, kk), tCrB(_, _, 0));  // RunsN LDS.128
        gemm(mma, tCrA, tCrB, tCrC);                            // (MMA,MMA_M,MMA_N) += outer product
      }
    }
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits

    // Epilogue: each thread writes its accumulators, the ones inside C.
    copy_inside(tCrC, tCgC, tCcC, shape(mC));
  }
}

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// The kernel: one block per BM×BN tile of C, blockIdx.x along M, blockIdx.y along N; shared memory
/// is dynamic (Traits<Cfg>::kSmemBytes, which may exceed 48 KB).
template <class Cfg, class Args>
__global__ void __launch_bounds__(Traits<Cfg>::kThreads, Cfg::kMinBlocks) pipelined_gemm_kernel(Args args) {
  extern __shared__ float4 smem_f4[];  // float4: the rings' 16-byte alignment
  pipelined_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x), reinterpret_cast<float*>(smem_f4),
                       BlockBarrier{});
}

/// Host launch for any storage order (Orders::row_major_a: RRR and RCR only): the kernel instantiation
/// of p's layouts, its shared memory raised past 48 KB where the configuration needs it (once per
/// instantiation).
template <class Cfg, Orders kOrders = Orders::all>
void launch_pipelined(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using T = Traits<Cfg>;
  if (std::string why = pipelined_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("pipelined_simt: " + why);
  if (kOrders == Orders::row_major_a && p.a != Order::row)
    throw std::invalid_argument("pipelined_simt: this build takes a row-major A only");
  with_gemm_args<Cfg, kOrders>(p, A, B, C, [&](auto const& args) {
    auto kernel = pipelined_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>;
    opt_in_dynamic_smem(kernel, T::kSmemBytes);  // beyond 48 KB a kernel must ask (once)
    kernel<<<gemm_grid<Cfg>(p), T::kThreads, T::kSmemBytes, stream>>>(args);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch07
