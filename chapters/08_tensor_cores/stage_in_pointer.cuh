// Chapter 08, step stage_in_pointer: register_pipelined (deep_k's 128×256×64 tiles) with each stage's
// start added to the pointer, outside the swizzle. Sliced as ring(_, _, s), a swizzled stage carries its
// start as a run-time offset *inside* the swizzle, so every ldmatrix and cp.async address is
// XOR-swizzled anew for each stage; with the start in the pointer, the swizzled part of an address
// (thread and k-block only) no longer depends on the stage. Measured: instructions −23%, time +0.1%.
// Also the kernel the zero-fill steps (zfill_edges on) fall back to for a misaligned A or B: its
// edge copy goes element by element and takes any alignment. Its configuration:
//   tf32_stage_in_pointer  the tf32 atom at 128×256×16, 4 stages (appendix)
//
// Build: cmake -B build -DMM_APPENDIX_STEPS=ON && cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores --kernel stage_in_pointer
#pragma once

#include "08_tensor_cores/register_pipelined.cuh"

namespace mm::ch08 {

/// stage_in_pointer: deep_k's tiles (128×256×64, 3 stages), each stage's start in the pointer (the
/// kernel below is the change).
struct StageInPointerCfg : DeepKCfg {};
/// tf32_stage_in_pointer: tf32_big_tile's tiles, each stage's start in the pointer.
struct Tf32StageInPointerCfg : Tf32BigTileCfg {};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(KernelTraits<Cfg>::kThreads, Cfg::kMinBlocks) stage_in_pointer_gemm_kernel(Args args) {
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
    constexpr bool b_ldsm = Args::kBKMajor || !Tr::kTf32;
    auto load_a = [&](auto const& sA_stage, int kk) {  // sA_stage: (BM,BK)
      auto s2r = make_tiled_copy_A(Copy_Atom<typename Tr::template LdsmFor<true>, T>{}, mma);
      auto thr = s2r.get_slice(tid);
      copy(s2r, thr.partition_S(sA_stage)(_, _, kk), thr.retile_D(tCrA)(_, _, kk % 2));  // (CPY,CPY_M)
      if constexpr (Tr::kTf32) round_to_tf32(tCrA(_, _, kk % 2));
    };
    auto load_b = [&](auto const& sB_stage, int kk) {  // sB_stage: (BN,BK)
      if constexpr (b_ldsm) {
        auto s2r = make_tiled_copy_B(Copy_Atom<typename Tr::template LdsmFor<Args::kBKMajor>, T>{}, mma);
        auto thr = s2r.get_slice(tid);
        copy(s2r, thr.partition_S(sB_stage)(_, _, kk), thr.retile_D(tCrB)(_, _, kk % 2));  // (CPY,CPY_N)
        if constexpr (Tr::kTf32) round_to_tf32(tCrB(_, _, kk % 2));
      } else {
        load_fragment<true>(thr_mma.partition_B(sB_stage)(_, _, kk), tCrB(_, _, kk % 2));  // (MMA,MMA_N)
      }
    };

    const bool a_rows = args.a_vec && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      issue_k_tile(args.copy_a, tAgA, tAcA, thr_copy_a.partition_D(stage_of(sA, stage)), shape(mA), a_rows && k_inside, kt);
      issue_k_tile(args.copy_b, tBgB, tBcB, thr_copy_b.partition_D(stage_of(sB, stage)), shape(mB), b_rows && k_inside, kt);
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
          if (kt + S - 1 < k_tiles) issue(kt + S - 1);
          cp_async_fence();
        }
        gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
      }
    }
    cp_async_wait<0>();

    store_c(tCrC, tCgC, tCcC, shape(mC), args.c_pairs);
  }
}

/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed.
template <class Cfg, class TOut>
void launch_stage_in_pointer(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C,
                             cudaStream_t stream) {
  if (std::string why = tensor_core_rejects<Cfg>(p); !why.empty())
    throw std::invalid_argument("stage_in_pointer: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    launch_block_tiles<Cfg>(stage_in_pointer_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>, args, p, stream);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
