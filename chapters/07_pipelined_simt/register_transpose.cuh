// Chapter 07, step register_transpose: deep_k (fragment_pipelined.cuh) with a row-major (K-major) A copied
// through registers instead of by 4-byte cp.async. Each thread loads a 4×2
// block of the tile (4 rows of MN, 2 consecutive k) with four 8-byte global loads along K, and stores it
// with two 16-byte shared stores along M: the transpose is a choice of registers, not an instruction.
// Per thread and K step of a (128,16) tile that is 4 LDG.64 + 2 STS.128 in place of 8 LDGSTS.32; the
// lanes of a quarter-warp (4 k-pairs × 2 MN quads) store to 8 different bank groups of the padded tile,
// so the stores are conflict-free (tests/ch07: RegisterTransposeStoresAreConflictFree). A column-major
// A keeps its 16-byte cp.async, and B its copy in either order: a K-major B through registers too costs
// the 8 registers that RCR does not have (ptxas spilled 160 bytes at the 128-register cap), and with a
// column-major A the 4-byte copies of B already reach 95% (CCR). The global loads of K step kt+S-1 are issued at the second k of step
// kt and stored into its stage at the fifteenth (13 k of FMAs later), before the barrier that ends
// step kt; the ring's distance is unchanged.
//   register_transpose  deep_k's configuration with the register path for a row-major A
//
// Lesson: `diff fragment_pipelined.cuh register_transpose.cuh`.
//
// Build: cmake --build build --target ch07_pipelined_simt
// Run:   build/bin/ch07_pipelined_simt --kernel deep_k,register_transpose --layout all
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "07_pipelined_simt/fragment_pipelined.cuh"
#include "07_pipelined_simt/pipelined_simt.hpp"
#include "gemm/block_barrier.hpp"
#include "gemm/predicated_copy.hpp"
#include "gemm/smem.hpp"
#include "layout/all.hpp"

namespace mm::ch07 {

// ---- The step's configuration: deep_k's, the kernel below is the change ----

/// register_transpose: deep_k (128×128×16, 3 stages, padded tiles, 16×16 threads of 8×8), a row-major
/// A copied through registers.
struct RegisterTransposeCfg : DeepKCfg {};

namespace detail {

/// How the block's threads copy a K-major (MN,BK) tile through registers: thread t owns a 4×2 block
/// (4 MN, 2 k). A warp is 4 lanes along K (k-pairs, fastest) × 8 along MN (quads of 4); the warps tile
/// the rest, BK/8 of them along K. The atom is the 16-byte shared store of the 4 MN of one k.
template <class Cfg, int MN>
MM_HD constexpr auto k_major_register_copy() {
  using T = Traits<Cfg>;
  constexpr int warps_k = Cfg::BK::value / 8;  // one warp covers 4 k-pairs = 8 k
  constexpr int warps_mn = T::kThreads / 32 / warps_k;
  static_assert(warps_k * warps_mn * 32 == T::kThreads, "register copy: warps tile (MN, BK/8)");
  static_assert(MN % (32 * warps_mn) == 0, "register copy: MN a whole number of the threads' 4-row quads");
  return make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                         Layout<Shape<Shape<_8, Int<warps_mn>>, Shape<_4, Int<warps_k>>>,
                                Stride<Stride<_4, _32>, Stride<_1, Int<32 * warps_mn>>>>{},  // ((8,Wmn),(4,Wk)) -> thread
                         Layout<Shape<_4, _2>>{});  // (4,2) -> value: 4 MN (contiguous in shared) × 2 k
}

/// Global -> registers, one K step of a K-major operand: `src`, `dst` are (CPY,CPY_MN,CPY_K) with CPY
/// the (4,2) block as values m + 4k. Inside the matrix with 8-byte aligned rows (`pairs`): one 8-byte
/// load per row (the 2 k of row m are adjacent in global memory) into registers m and m + 4, which is
/// the transpose. At an edge or misaligned: each float on its own, zero outside the matrix.
template <class Src, class Crd, class Dst, class Extent>
MM_HD void load_k_major_block(Src const& src, Crd const& crd, Dst& dst, Extent const& extent, bool pairs) {
  if (pairs) {
    auto s = mm::detail::group_rest(src);  // (CPY,REST)
    auto d = mm::detail::group_rest(dst);  // (CPY,REST)
MM_UNROLL
    for (int r = 0; r < int(size<1>(d)); ++r)
MM_UNROLL
      for (int m = 0; m < 4; ++m) {
        const float2 v = *reinterpret_cast<float2 const*>(&s(m, r));  // (m,k), (m,k+1): one LDG.64
        d(m, r) = v.x;
        d(m + 4, r) = v.y;
      }
  } else {
    copy_or_zero(src, dst, crd, extent);  // gemm/predicated_copy.hpp
  }
}

}  // namespace detail

// ---- The kernel ----

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders. A is seen as
/// an (M,K) tensor, B as (N,K), C as (M,N). `smem` holds both rings (Traits<Cfg>::kSmemBytes). The
/// host pass keeps the body for the CPU tests (a cp.async is a plain copy there).
template <class Cfg, class Args, class Barrier>
MM_HD void register_transpose_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem,
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
    static_assert(BK::value >= 4, "A's stores (kk == BK-2) come after its loads (kk == 1)");
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

    // Copy partitions: what this thread moves from global to shared memory. A K-major A (row-major:
    // the stride of K is 1) goes through registers: its 4×2 blocks (detail::k_major_register_copy) and
    // a register fragment for one K step; a column-major A and B keep the host's cp.async copies.
    constexpr bool a_k_major = is_constant_value_v<1, std::remove_cvref_t<decltype(get<1>(args.da))>>;
    auto copy_a = [&] {
      if constexpr (a_k_major) return detail::k_major_register_copy<Cfg, BM::value>();
      else return args.copy_a;
    }();
    auto thr_copy_a = copy_a.get_slice(tid);
    auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
    auto tArA = make_fragment_like(thr_copy_a.partition_D(sA(_, _, 0)));  // (CPY,CPY_M,CPY_K): K-major A only
    auto thr_copy_b = args.copy_b.get_slice(tid);
    auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)

    // MMA partitions: what this thread accumulates (and, per stage below, reads from shared memory).
    auto thr_mma = mma.get_slice(tid);
    auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCcC = thr_mma.partition_C(kC);  // (MMA,MMA_M,MMA_N) -> (m,n)
    auto tCrC = thr_mma.make_fragment_C(tCgC);  // (MMA,MMA_M,MMA_N): the accumulators
    clear(tCrC);

    // The unpredicated path needs the whole tile inside the matrix (block-uniform: no divergence) and
    // aligned rows: 16 bytes for an MN-major operand's cp.async, 8 bytes (an even leading dimension) for
    // a K-major A's pair loads. Along K it is decided per K step (only the last can be partial).
    const bool a_aligned = a_k_major ? reinterpret_cast<std::uintptr_t>(args.a) % 8 == 0 && int(get<0>(args.da)) % 2 == 0
                                     : args.a_vec;
    const bool a_rows = a_aligned && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    // Starts K step kt: the cp.async of a column-major A, and of B, into stage kt % S.
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      if constexpr (!a_k_major) {
        auto tAsA = thr_copy_a.partition_D(sA(_, _, stage));  // (CPY,CPY_M,CPY_K)
        detail::issue_k_tile(copy_a, tAgA, tAcA, tAsA, shape(mA), a_rows && k_inside, kt);
      }
      auto tBsB = thr_copy_b.partition_D(sB(_, _, stage));  // (CPY,CPY_N,CPY_K)
      detail::issue_k_tile(args.copy_b, tBgB, tBcB, tBsB, shape(mB), b_rows && k_inside, kt);
    };
    // A K-major A's part of K step kt: the global loads into its registers, then (store) the registers
    // into stage kt % S, 16 bytes (4 rows of one k) per store.
    auto load = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      if constexpr (a_k_major)
        detail::load_k_major_block(tAgA(_, _, _, kt), tAcA(_, _, _, kt), tArA, shape(mA), a_rows && k_inside);
    };
    auto store = [&](int kt) {
      if constexpr (a_k_major) copy(copy_a, tArA, thr_copy_a.partition_D(sA(_, _, kt % S)));
    };

    // Prologue: S-1 K steps in flight before the first multiply. Every K step commits one group
    // (empty past the last one), so "S-2 groups may still be pending" always means "the oldest landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) {
        issue(s);
        load(s);
        store(s);
      }
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
        if (kk == 1) {
          // A's global loads one k after B's copies (at kk == 0 RCR spilled 64 bytes; here 40, ten
          // 4-byte reloads per K step of its copy offsets, L1-resident; kk == 4 or 8 spill as much or more).
          if (kt + S - 1 < k_tiles) load(kt + S - 1);
        }
        if (kk == BK{} - 2) {
          // A's registers go to their stage before this step's barrier, which makes them readable;
          // the global loads had 13 k of FMAs to arrive.
          if (kt + S - 1 < k_tiles) store(kt + S - 1);
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
__global__ void __launch_bounds__(Traits<Cfg>::kThreads, Cfg::kMinBlocks) register_transpose_gemm_kernel(Args args) {
  extern __shared__ float4 smem_f4[];  // float4: the rings' 16-byte alignment
  register_transpose_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x),
                                reinterpret_cast<float*>(smem_f4), BlockBarrier{});
}

/// Host launch for any storage order (Orders::row_major_a: RRR and RCR only): the kernel instantiation
/// of p's layouts, its shared memory raised past 48 KB where the configuration needs it (once per
/// instantiation).
template <class Cfg, Orders kOrders = Orders::all>
void launch_register_transpose(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  using T = Traits<Cfg>;
  if (std::string why = pipelined_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("pipelined_simt: " + why);
  if (kOrders == Orders::row_major_a && p.a != Order::row)
    throw std::invalid_argument("pipelined_simt: this build takes a row-major A only");
  with_gemm_args<Cfg, kOrders>(p, A, B, C, [&](auto const& args) {
    auto kernel = register_transpose_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>;
    opt_in_dynamic_smem(kernel, T::kSmemBytes);  // beyond 48 KB a kernel must ask (once)
    kernel<<<gemm_grid<Cfg>(p), T::kThreads, T::kSmemBytes, stream>>>(args);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch07
