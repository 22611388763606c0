// Chapter 08, step two_blocks_per_sm (appendix): hoisted_swizzle at 128×128 block tiles of 8 warps of
// 64×32, with the fragments loaded just before their multiply (no register pipeline: the K loop of
// ldmatrix.cuh), 3 stages (96 KB): under 128 registers, so two blocks fit an SM and four warps share each
// scheduler instead of two. Measured: −16% against hoisted_swizzle: the shared-memory waits of the
// smaller warp tiles (1.5× the ldmatrix wavefronts per mma.sync) grew more than the warps hid.
// Misaligned problems go to stage_in_pointer (its 128×256 tiles), as hoisted_swizzle's do.
//
// Build: cmake -B build -DMM_APPENDIX_STEPS=ON && cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores --kernel two_blocks_per_sm
#pragma once

#include "08_tensor_cores/hoisted_swizzle.cuh"

namespace mm::ch08 {

/// two_blocks_per_sm: hoisted_swizzle with 128×128 block tiles (8 warps of 64×32) and registers for two
/// blocks per SM; the fragments loaded just before their multiply (the kernel below).
struct TwoBlocksPerSmCfg : HoistedSwizzleCfg {
  using BN = Int<128>;
  static constexpr int kMinBlocks = 2;
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(KernelTraits<Cfg>::kThreads, Cfg::kMinBlocks) two_blocks_per_sm_gemm_kernel(Args args) {
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

    const bool a_rows = args.a_vec && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      issue_k_tile_zfill(args.copy_a, tAgA, tAcA, thr_copy_a.partition_D(stage_of(sA, stage)), shape(mA),
                         a_rows && k_inside, kt);
      issue_k_tile_zfill(args.copy_b, tBgB, tBcB, thr_copy_b.partition_D(stage_of(sB, stage)), shape(mB),
                         b_rows && k_inside, kt);
    };

    // Prologue: S-1 K steps in flight. Every K step commits one group (empty past the last), so
    // "S-2 groups may still be pending" always means "the oldest has landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) issue(s);
      cp_async_fence();
    }
    constexpr int KB = BK::value / Tr::kAtomK;  // k-blocks (the atom's K) per K step
    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<S - 2>();  // this thread's copies of step kt have landed
      __syncthreads();         // everyone's have, and everyone is done reading step kt-1's stage
      if (kt + S - 1 < k_tiles) issue(kt + S - 1);
      cp_async_fence();
      const int stage = kt % S;
#pragma unroll
      for (int kk = 0; kk < KB; ++kk) {
        load_a(stage_of(sA, stage), kk);
        load_b(stage_of(sB, stage), kk);
        gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
      }
    }
    cp_async_wait<0>();

    store_c(tCrC, tCgC, tCcC, shape(mC), args.c_pairs);
  }
}

/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed; A or
/// B with vectors that are not whole goes to the fallback.
template <class Cfg, class TOut>
void launch_two_blocks_per_sm(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C,
                              cudaStream_t stream) {
  if (std::string why = tensor_core_rejects<Cfg>(p); !why.empty())
    throw std::invalid_argument("two_blocks_per_sm: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    // A or B not 16-byte aligned (a pointer or a leading dimension off 16 bytes): the 16-byte copies
    // cannot take it. Run stage_in_pointer (Cfg::Fallback), whose edge copy goes element by element, instead.
    if (!args.a_vec || !args.b_vec) return launch_stage_in_pointer<typename Cfg::Fallback, TOut>(p, A, B, C, stream);
    launch_block_tiles<Cfg>(two_blocks_per_sm_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>, args, p, stream);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
