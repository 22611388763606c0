// Chapter 07's second kernel, fragment_pipelined: pipelined.cuh with registers for two k. While the
// FMAs of k run, the fragments of k+1 load from shared memory, and at the end of a K step the loads of
// the next step's first k are issued right after the barrier that makes its stage readable, so the
// barrier's wait overlaps the multiply of the current step's last k. (pipelined waits for each k's
// shared loads before its FMAs: the "short scoreboard" stall.) Its steps:
//   fragment_pipelined  pipelined_s3's configuration with the register pipeline
//   deep_k              K steps of 16: half the barriers per FMA; shared memory past 48 KB. The best.
//   big_tile            deep_k in cuBLAS's shape: 128×256 tiles, 8×16 outputs per thread, 4 stages,
//                       one block per SM
// cp.async needs sm_80: a device pass for an older target compiles a stub (layout/arch.hpp), which the
// harness never launches.
//
// Build: cmake --build build --target ch07_pipelined_simt
// Run:   build/bin/ch07_pipelined_simt --kernel deep_k [--layout all]
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

/// fragment_pipelined: pipelined_s3's configuration (pipelined.cuh: the numbering and padding that
/// measured best); what changes is the kernel below.
struct FragmentPipelinedCfg {
  using BM = _128;                         ///< rows of C per block
  using BN = _128;                         ///< columns of C per block
  using BK = _8;                           ///< depth of one K step
  static constexpr int kStages = 3;        ///< shared-memory tiles in flight
  using ThrLayout = Plain16x16;            ///< chapter 06's thread numbering: lane pairs share B
  static constexpr Smem kSmem = Smem::padded;  ///< (MN,BK):(1,MN+4)
  static constexpr int kMinBlocks = 2;     ///< two blocks per SM: at most 128 registers per thread
  using FragVec = float4;                  ///< the vector type of the 128-bit shared loads
  static constexpr bool kL2Prefetch = false;  ///< no .L2::128B hint on the copies
};
/// deep_k: K steps of 16: half the barriers per FMA; 3 stages of 25 KB take shared memory past the
/// 48 KB a kernel gets without asking. The chapter's best.
struct DeepKCfg : FragmentPipelinedCfg {
  using BK = _16;
};
/// big_tile: deep_k with cuBLAS's shape: 128×256 block tiles, 8×16 outputs per thread (fewer shared
/// loads per FMA), 4 stages (98 KB), one block per SM and up to 255 registers per thread.
struct BigTileCfg : DeepKCfg {
  using BN = _256;
  static constexpr int kStages = 4;
  static constexpr int kMinBlocks = 1;
};

// A ring of S stages of (MN,BK) with k-rows of MN+4 floats ends at the last row's MN-th float: the
// pad after it is never used. The B ring starts right after the A ring, still 16-byte aligned.
static_assert(Traits<DeepKCfg>::kSmemBytes == 2 * (3 * 16 * 132 - 4) * 4, "50.7 KB: past 48 KB");
static_assert(Traits<BigTileCfg>::kSmemBytes == ((4 * 16 * 132 - 4) + (4 * 16 * 260 - 4)) * 4, "98 KB");
static_assert(cosize_v<Traits<BigTileCfg>::SmemLayoutA> % 4 == 0, "the B ring starts 16-byte aligned");

namespace detail {

/// Slot `s` of a two-k register fragment (MMA,MMA_MN,2), as the one-k fragment (MMA,MMA_MN,1) that
/// gemm() multiplies.
template <class Frag>
MM_HD auto k_slot(Frag& frag, int s) {
  auto slot = frag(_, _, s);  // (MMA,MMA_MN)
  return make_tensor(slot.data(), append(slot.layout(), Layout<_1, _0>{}));
}

}  // namespace detail

// ---- The kernel ----

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders. A is seen as
/// an (M,K) tensor, B as (N,K), C as (M,N). `smem` holds both rings (Traits<Cfg>::kSmemBytes). The
/// host pass keeps the body for the CPU tests (a cp.async is a plain copy there).
template <class Cfg, class Args, class Barrier>
MM_HD void fragment_pipelined_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem,
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

    // Registers for two k: slot kk % 2 is multiplied while slot (kk+1) % 2 loads. The loads of the
    // next K step's first k are issued right after the barrier that makes its stage readable, so
    // the barrier's wait overlaps the multiply of the current step's last k.
    auto tCrA = thr_mma.partition_fragment_A(local_tile(sA(_, _, 0), make_shape(BM{}, _2{}), make_coord(0, 0)));  // (MMA,MMA_M,2)
    auto tCrB = thr_mma.partition_fragment_B(local_tile(sB(_, _, 0), make_shape(BN{}, _2{}), make_coord(0, 0)));  // (MMA,MMA_N,2)
    cp_async_wait<S - 2>();
    sync_threads();
    int read_stage = 0;
    auto tCsA = thr_mma.partition_A(sA(_, _, read_stage));  // (MMA,MMA_M,BK)
    auto tCsB = thr_mma.partition_B(sB(_, _, read_stage));  // (MMA,MMA_N,BK)
    detail::copy_fragment<typename T::SmemToRegs>(tCsA(_, _, 0), tCrA(_, _, 0));
    detail::copy_fragment<typename T::SmemToRegs>(tCsB(_, _, 0), tCrB(_, _, 0));
    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
      for (int kk = 0; kk < BK{}; ++kk) {
        if (kk == BK{} - 1) {
          // Step kt+1 must have landed, and every thread must be done with step kt's stage
          // (its last fragment was loaded one k ago) before step kt+S reuses it below.
          cp_async_wait<S - 2>();
          sync_threads();
          read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
          tCsA = thr_mma.partition_A(sA(_, _, read_stage));
          tCsB = thr_mma.partition_B(sB(_, _, read_stage));
        }
        const int kk_next = kk + 1 == BK{} ? 0 : kk + 1;
        detail::copy_fragment<typename T::SmemToRegs>(tCsA(_, _, kk_next), tCrA(_, _, (kk + 1) % 2));
        detail::copy_fragment<typename T::SmemToRegs>(tCsB(_, _, kk_next), tCrB(_, _, (kk + 1) % 2));
        if (kk == 0) {
          // Refill the stage step kt-1 used: everyone passed the barrier of step kt-1's last k.
          if (kt + S - 1 < k_tiles) issue(kt + S - 1);
          cp_async_fence();
        }
        gemm(mma, detail::k_slot(tCrA, kk % 2), detail::k_slot(tCrB, kk % 2), tCrC);
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
__global__ void __launch_bounds__(Traits<Cfg>::kThreads, Cfg::kMinBlocks) fragment_pipelined_gemm_kernel(Args args) {
  extern __shared__ float4 smem_f4[];  // float4: the rings' 16-byte alignment
  fragment_pipelined_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x),
                                reinterpret_cast<float*>(smem_f4), BlockBarrier{});
}

/// Host launch for any storage order (Orders::row_major_a: RRR and RCR only): the kernel instantiation
/// of p's layouts, its shared memory raised past 48 KB where the configuration needs it (once per
/// instantiation).
template <class Cfg, Orders kOrders = Orders::all>
void launch_fragment_pipelined(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using T = Traits<Cfg>;
  if (std::string why = pipelined_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("pipelined_simt: " + why);
  if (kOrders == Orders::row_major_a && p.a != Order::row)
    throw std::invalid_argument("pipelined_simt: this build takes a row-major A only");
  with_gemm_args<Cfg, kOrders>(p, A, B, C, [&](auto const& args) {
    auto kernel = fragment_pipelined_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>;
    opt_in_dynamic_smem(kernel, T::kSmemBytes);  // beyond 48 KB a kernel must ask (once)
    kernel<<<gemm_grid<Cfg>(p), T::kThreads, T::kSmemBytes, stream>>>(args);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch07
