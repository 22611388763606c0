// Chapter 08, step no_copy_branch: one_copy_path with the copy issued on every K step, past the last tile
// too (its predicates are then all false: zeros into a stage nobody reads again), so no branch cuts the K
// step into separate blocks and the compiler interleaves the copy's instructions with the mma.sync. The
// copy's destinations are swizzled once, before the loop, and moved to a stage by the pointer. The best
// bf16 kernel of the chapter (59–61% of cuBLAS), and chapter 09's baseline (steps.hpp, best()).
//
// On the main path this step follows hoisted_swizzle and takes one_copy_path (every K step the one
// predicated copy: one_copy_path.cuh) with it. Its configurations:
//   four_stages           a fourth stage: each copy issued three K steps ahead (appendix: no faster)
//   sixteen_warps         (appendix) 16 warps of 32×64: four warps per scheduler
//   tf32_no_copy_branch   the tf32 atom at 128×256×16, 4 stages
//   tf32_conflict_free_b  tf32_no_copy_branch with RRR's N-major B tile swizzled in 32-byte units
//
// The copies issued on the last S−1 K steps address the S−1 K tiles past the end (predicated off,
// never read): their offsets are computed in 32 bits, so the size rule counts them
// (no_copy_branch_rejects).
//
// Build: cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores --kernel no_copy_branch
#pragma once

#include "08_tensor_cores/one_copy_path.cuh"

namespace mm::ch08 {

/// no_copy_branch: one_copy_path's tiles (128×256×64, 3 stages, 8 warps; misaligned problems to
/// stage_in_pointer), the copy issued on every K step (the kernel below is the change).
struct NoCopyBranchCfg : OneCopyPathCfg {};
/// four_stages: no_copy_branch with a fourth stage (192 KB): the copy of a K step is issued three K steps
/// before its use instead of two.
struct FourStagesCfg : NoCopyBranchCfg {
  static constexpr int kStages = 4;
};
/// sixteen_warps (appendix, issue 26): no_copy_branch with 16 warps of 32×64 (4×4) instead of 8 of 64×64:
/// four warps per scheduler instead of two, within the register file (512 threads × 128 registers; 64
/// accumulators each instead of 128). The price: a warp's ldmatrix per mma.sync rise from 1/4 to 3/8
/// (two A atoms and four B pairs for 16 mma.sync per k-block, against four and four for 32).
struct SixteenWarpsCfg : NoCopyBranchCfg {
  static constexpr int kWarpsM = 4;
};
/// tf32_no_copy_branch: tf32_hoisted_swizzle with bf16's last two copy steps (one predicated copy path, its
/// destinations hoisted; the copy issued on every K step, no branch).
struct Tf32NoCopyBranchCfg : Tf32HoistedSwizzleCfg {};
/// tf32_conflict_free_b: tf32_no_copy_branch whose MN-major B tile (RRR) is swizzled in 32-byte units.
/// tf32's MN-major B fragments are read element by element (ldmatrix cannot transpose 32-bit elements); a
/// warp's read takes 8 consecutive n at 4 values of k, which the 16-byte-unit swizzle leaves 2-way
/// conflicted (k and k^1 XOR neighbouring units into each other); XORing k into 32-byte units instead
/// puts the 4 rows on 4 different 32-byte bank groups: one wavefront. (RCR: the same kernel as before.)
struct Tf32ConflictFreeBCfg : Tf32NoCopyBranchCfg {
  static constexpr int kMnSwizzleUnitBytes = 32;
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(KernelTraits<Cfg>::kThreads, Cfg::kMinBlocks) no_copy_branch_gemm_kernel(Args args) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    using Tr = KernelTraits<Cfg>;
    using T = typename Tr::T;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    constexpr int S = Cfg::kStages;
    extern __shared__ uint128_t smem_u128[];  // 16-byte aligned: the rings take 16-byte copies
    T* smem = reinterpret_cast<T*>(smem_u128);
    const int tid = int(threadIdx.x), block_m = int(blockIdx.x), block_n = int(blockIdx.y);
    const int M = args.m, N = args.n, K = args.k;
    typename Tr::TiledMma mma;
    typename Tr::CtaTiler cta_tiler;

    auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
    auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
    auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
    auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
    auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
    auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

    auto cta_coord = make_coord(block_m, block_n, _);
    auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
    auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
    auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
    auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k) -> (m,k)
    auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k) -> (n,k)
    auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)   -> (m,n)
    // One stage of a ring, (MN,BK): its start in the pointer, the layout of stage 0. Stages are a whole
    // number of the swizzle's period apart (2^(B+M+S) elements: the smem atoms' size), and adding such a
    // multiple commutes with the swizzle, so the compiler can keep the swizzled part out of the loop.
    auto stage_of = [](auto const& ring, int s) {
      const int stage_elems = int(size<0>(ring)) * int(size<1>(ring));  // MN·BK: the stages are compact
      return make_tensor(ring.data() + s * stage_elems, ring(_, _, 0).layout());
    };
    using SmemLayoutA = typename Args::SmemLayoutA;
    auto sA = make_tensor(make_smem_ptr(smem), SmemLayoutA{});                                       // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(smem + cosize_v<SmemLayoutA>), typename Args::SmemLayoutB{});  // (BN,BK,S)

    // Global -> shared: what this thread copies.
    auto thr_copy_a = args.copy_a.get_slice(tid);
    auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
    auto thr_copy_b = args.copy_b.get_slice(tid);
    auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)

    // The MMA: this thread's accumulators and its fragments of one K step.
    auto thr_mma = mma.get_slice(tid);
    auto tCgC = thr_mma.partition_C(gC);                    // (MMA,MMA_M,MMA_N)
    auto tCcC = thr_mma.partition_C(kC);                    // (MMA,MMA_M,MMA_N) -> (m,n)
    auto tCrC = thr_mma.make_fragment_C(tCgC);              // (MMA,MMA_M,MMA_N): fp32 accumulators
    // Registers for two k-blocks (the atom's K each) of A and B: one multiplies while the other loads.
    using TwoKBlocks = Int<2 * Tr::kAtomK>;
    auto tCrA = thr_mma.partition_fragment_A(make_identity_tensor(make_shape(BM{}, TwoKBlocks{})));  // (MMA,MMA_M,2)
    auto tCrB = thr_mma.partition_fragment_B(make_identity_tensor(make_shape(BN{}, TwoKBlocks{})));  // (MMA,MMA_N,2)
    clear(tCrC);

    // Shared -> registers, k-block kk (the atom's K) of a stage into register slot kk % 2. The tiled
    // copy built from the MMA hands each lane its fragment, and retile_D regroups the fragment's values
    // as the copy delivers them (for B, one ldmatrix.x4 fills two atoms along N). tf32 values are
    // rounded in the registers (cvt.rna). A tf32 operand stored MN-major cannot use ldmatrix (the
    // transposing ldmatrix moves 16-bit elements): element by element.
    // A lane's ldmatrix sources in a stage, (CPY,CPY_MN,KB), hoisted: the swizzle of the lane's offset
    // is computed once. The stage is in the pointer, so that offset does not change in the loop and the
    // compiler keeps Sw(t) (and hoist_swizzle's check) out of it.
    constexpr bool b_ldsm = Args::kBKMajor || !Tr::kTf32;
    auto load_a = [&](auto const& sA_stage, int kk) {  // sA_stage: (BM,BK)
      auto s2r = make_tiled_copy_A(Copy_Atom<typename Tr::template LdsmFor<true>, T>{}, mma);
      auto thr = s2r.get_slice(tid);
      copy(s2r, hoist_swizzle(thr.partition_S(sA_stage))(_, _, kk), thr.retile_D(tCrA)(_, _, kk % 2));  // (CPY,CPY_M)
      if constexpr (Tr::kTf32) round_to_tf32(tCrA(_, _, kk % 2));
    };
    auto load_b = [&](auto const& sB_stage, int kk) {  // sB_stage: (BN,BK)
      if constexpr (b_ldsm) {
        auto s2r = make_tiled_copy_B(Copy_Atom<typename Tr::template LdsmFor<Args::kBKMajor>, T>{}, mma);
        auto thr = s2r.get_slice(tid);
        copy(s2r, hoist_swizzle(thr.partition_S(sB_stage))(_, _, kk), thr.retile_D(tCrB)(_, _, kk % 2));  // (CPY,CPY_N)
        if constexpr (Tr::kTf32) round_to_tf32(tCrB(_, _, kk % 2));
      } else {
        load_fragment<true>(thr_mma.partition_B(sB_stage)(_, _, kk), tCrB(_, _, kk % 2));  // (MMA,MMA_N)
      }
    };

    const int k_tiles = size<3>(tAgA);
    // This thread's cp.async destinations in stage 0, swizzled once before the loop, and moved to a
    // stage by the pointer: stages are a whole number of swizzle periods apart (checked below).
    const auto tAsA0 = hoist_swizzle(thr_copy_a.partition_D(stage_of(sA, 0)));  // (CPY,CPY_M,CPY_K)
    const auto tBsB0 = hoist_swizzle(thr_copy_b.partition_D(stage_of(sB, 0)));  // (CPY,CPY_N,CPY_K)
    auto copy_dst = [&](auto const& ring, auto const& stage0, int stage) {
      using Sw = typename std::remove_cvref_t<decltype(ring.layout())>::fn_type;
      constexpr int stage_elems = size_v<decltype(ring(_, _, 0).layout().layout())>;
      static_assert(stage_elems % Sw::block_size() == 0, "stages a whole number of swizzle periods apart");
      return make_tensor(stage0.data().shifted(stage * stage_elems), stage0.layout());
    };
    // One copy for every K step: 16-byte cp.async, each vector predicated on its first element lying
    // inside the matrix (zero-filled outside). Past the last K tile every predicate is false.
    auto issue = [&](int kt) {
      const int stage = kt % S;
      auto tAsA = copy_dst(sA, tAsA0, stage);  // (CPY,CPY_M,CPY_K)
      copy_if(args.copy_a, make_predicate(tAcA(_, _, _, kt), shape(mA)), tAgA(_, _, _, kt), tAsA);
      auto tBsB = copy_dst(sB, tBsB0, stage);  // (CPY,CPY_N,CPY_K)
      copy_if(args.copy_b, make_predicate(tBcB(_, _, _, kt), shape(mB)), tBgB(_, _, _, kt), tBsB);
    };

    // Prologue: S-1 K steps in flight. Every K step commits one group (empty past the last), so
    // "S-2 groups may still be pending" always means "the oldest has landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) issue(s);
      cp_async_fence();
    }
    constexpr int KB = BK::value / Tr::kAtomK;  // k-blocks (the atom's K) per K step
    // Registers one k-block ahead: k-block kk+1's fragments load while kk multiplies, across the
    // K-step boundary too (the next step's first k-block loads right after the barrier that makes
    // its stage readable, before this step's last k-block multiplies).
    static_assert(KB % 2 == 0, "the register pipeline: an even number of k-blocks per K step (slot kk % 2)");
    cp_async_wait<S - 2>();
    __syncthreads();
    int read_stage = 0;
    load_a(stage_of(sA, read_stage), 0);
    load_b(stage_of(sB, read_stage), 0);
    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
      for (int kk = 0; kk < KB; ++kk) {
        if (kk == KB - 1) {
          // Step kt+1 must have landed, and every thread must be done with step kt's stage (its
          // last k-block was loaded one k-block ago) before step kt+S refills it below.
          cp_async_wait<S - 2>();
          __syncthreads();
          read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
        }
        const int kk_next = kk + 1 == KB ? 0 : kk + 1;
        load_a(stage_of(sA, read_stage), kk_next);
        load_b(stage_of(sB, read_stage), kk_next);
        if (kk == 0) {
          // Refill the stage step kt-1 used: every thread passed the barrier of step kt-1's last k-block.
          // No branch: past the last K tile, the copy writes zeros into a stage nobody reads again.
          issue(kt + S - 1);
          cp_async_fence();
        }
        gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
      }
    }
    cp_async_wait<0>();

    store_c(tCrC, tCgC, tCcC, shape(mC), args.c_pairs);
  }
}
#endif  // defined(__CUDACC__)

/// Empty when the kernel takes `p`: the chapter's rule, with the S−1 K tiles past the last that the
/// copies of the last S−1 K steps address counted too (their offsets are formed, in 32 bits).
template <class Cfg>
std::string no_copy_branch_rejects(const GemmProblem& p) {
  return tensor_core_rejects<Cfg, Cfg::kStages - 1>(p);
}

#if defined(__CUDACC__)  // the launch: nvcc's
/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed; A or
/// B with vectors that are not whole goes to the fallback.
template <class Cfg, class TOut>
void launch_no_copy_branch(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C,
                           cudaStream_t stream) {
  if (std::string why = no_copy_branch_rejects<Cfg>(p); !why.empty())
    throw std::invalid_argument("no_copy_branch: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    // A or B not 16-byte aligned (a pointer or a leading dimension off 16 bytes): the 16-byte copies
    // cannot take it. Run stage_in_pointer (Cfg::Fallback), whose edge copy goes element by element, instead.
    if (!args.a_vec || !args.b_vec) return launch_stage_in_pointer<typename Cfg::Fallback, TOut>(p, A, B, C, stream);
    launch_block_tiles<Cfg>(no_copy_branch_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>, args, p, stream);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
