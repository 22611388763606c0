// Chapter 08, step precomputed_addresses: no_copy_branch with the address arithmetic of its K loop
// computed before the loop. no_copy_branch's K step of 128 mma.sync spends about 60 instructions
// forming addresses and 14 forming predicates: each copy's 64-bit global address rebuilt from (row, k),
// each copy's zero-fill predicate from its coordinates, the stage's shared offsets from its index
// (kt % S, a division). Here:
//   - global: one pointer per operand, moved by one precomputed 64-bit increment (a K tile's stride)
//     each K step; the copies' offsets from it are loop invariants;
//   - shared: the two rings interleaved by stage (stage s: A's tile, then B's), so one 32-bit offset,
//     rotated once per K step, moves every ldmatrix source and every cp.async destination; the copy
//     refills the stage the K step has just finished reading;
//   - predicates: a block whose tiles are whole (M, N and K inside) copies with one predicate for all
//     copies (false past the last K tile); a block at an edge runs the same K loop with no_copy_branch's
//     per-copy predicates (the loop below, instantiated twice).
// SASS (sm_90a): the whole-tile loop is 242 instructions per K step in RCR (no_copy_branch: 260) and 241
// in RRR (266), 1.89 per mma.sync instead of 2.03-2.08; 252 registers, no spill. Each copy still needs
// its own 64-bit address (rows a run-time leading dimension apart: 2 instructions), and nvcc moves the
// global memory descriptor into uniform registers before each cp.async (R2UR), as in no_copy_branch.
//
// Appendix step (issue 26, direction (a)), a measured dead end: on the H200 (2026-11-27) it executes 6.8%
// fewer instructions than no_copy_branch (ncu, 4096³ RCR), its tensor pipe is 77.5% busy against 76.8%,
// and it is about 1% faster (59.3-60.2% of cuBLAS against 58.7-59.4% at 4096³), less than the two
// kernels' run-to-run spread at 8192³ (up to 4 points): the issue slots it frees were not what bound the
// kernel (chapter README, A3). `diff no_copy_branch.cuh precomputed_addresses.cuh` shows the change.
//
// Build: cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores --kernel precomputed_addresses
#pragma once

#include <type_traits>

#include "08_tensor_cores/no_copy_branch.cuh"

namespace mm::ch08 {

/// precomputed_addresses: no_copy_branch's tiles (128×256×64, 3 stages, 8 warps; misaligned problems to
/// stage_in_pointer), its K loop's addresses computed before the loop (the kernel below is the change).
struct PrecomputedAddressesCfg : NoCopyBranchCfg {};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(KernelTraits<Cfg>::kThreads, Cfg::kMinBlocks) precomputed_addresses_gemm_kernel(Args args) {
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
    // The two rings interleaved by stage: stage s holds A's (BM,BK) tile, then B's (BN,BK) tile, kStage
    // elements after stage s-1's, so one offset moves both operands to a stage. Each tile keeps the
    // layout of its ring's stage 0 (the same bytes in all: shared memory is as large as before).
    constexpr int kStageA = BM::value * BK::value, kStage = kStageA + BN::value * BK::value;
    auto sA0 = make_tensor(make_smem_ptr(smem), typename Args::SmemLayoutA{})(_, _, 0);            // (BM,BK)
    auto sB0 = make_tensor(make_smem_ptr(smem + kStageA), typename Args::SmemLayoutB{})(_, _, 0);  // (BN,BK)
    auto at_offset = [](auto const& stage0, int offset) { return make_tensor(stage0.data() + offset, stage0.layout()); };

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
    const auto tAsA0 = hoist_swizzle(thr_copy_a.partition_D(sA0));  // (CPY,CPY_M,CPY_K)
    const auto tBsB0 = hoist_swizzle(thr_copy_b.partition_D(sB0));  // (CPY,CPY_N,CPY_K)
    auto copy_dst = [&](auto const& stage0, int offset) {
      using Sw = typename std::remove_cvref_t<decltype(stage0.layout())>::fn_type;
      static_assert(kStage % Sw::block_size() == 0 && kStageA % Sw::block_size() == 0,
                    "stages, and B's tile in a stage, a whole number of swizzle periods apart");
      return make_tensor(stage0.data().shifted(offset), stage0.layout());
    };
    // This thread's sources of a K tile, (CPY,CPY_MN,CPY_K): K tile 0's layout (the copies' offsets
    // from the first one, rows a leading dimension apart: loop invariants) from one pointer per operand,
    // which each copy moves on by one K tile (BK elements; B of RRR: BK rows of N), one 64-bit add.
    const auto tAgA_layout = tAgA(_, _, _, 0).layout();  // (CPY,CPY_M,CPY_K)
    const auto tBgB_layout = tBgB(_, _, _, 0).layout();  // (CPY,CPY_N,CPY_K)
    T const* a_src = tAgA(_, _, _, 0).data();
    T const* b_src = tBgB(_, _, _, 0).data();
    const auto a_k_step = stride<3>(tAgA);  // elements from one K tile to the next
    const auto b_k_step = stride<3>(tBgB);
    // Copies K tile kt into the stage at `offset`: 16-byte cp.async, zero-filled where the predicate is
    // false. Whole tiles: one predicate for all copies, false past the last K tile. Edge tiles: each
    // vector predicated on its first element lying inside the matrix (past the last K tile: all false).
    auto issue = [&]<bool kWhole>(std::bool_constant<kWhole>, int kt, int offset) {
      auto tAsA = copy_dst(tAsA0, offset);  // (CPY,CPY_M,CPY_K)
      auto tBsB = copy_dst(tBsB0, offset);  // (CPY,CPY_N,CPY_K)
      auto tAgA_k = make_tensor(a_src, tAgA_layout);  // (CPY,CPY_M,CPY_K)
      auto tBgB_k = make_tensor(b_src, tBgB_layout);  // (CPY,CPY_N,CPY_K)
      if constexpr (kWhole) {
        auto a_on = make_tensor<bool>(make_layout(shape(tAgA_k)));
        auto b_on = make_tensor<bool>(make_layout(shape(tBgB_k)));
        fill(a_on, kt < k_tiles);
        fill(b_on, kt < k_tiles);
        copy_if(args.copy_a, a_on, tAgA_k, tAsA);
        copy_if(args.copy_b, b_on, tBgB_k, tBsB);
      } else {
        copy_if(args.copy_a, make_predicate(tAcA(_, _, _, kt), shape(mA)), tAgA_k, tAsA);
        copy_if(args.copy_b, make_predicate(tBcB(_, _, _, kt), shape(mB)), tBgB_k, tBsB);
      }
      a_src += a_k_step;
      b_src += b_k_step;
    };

    constexpr int KB = BK::value / Tr::kAtomK;  // k-blocks (the atom's K) per K step
    // Registers one k-block ahead: k-block kk+1's fragments load while kk multiplies, across the
    // K-step boundary too (the next step's first k-block loads right after the barrier that makes
    // its stage readable, before this step's last k-block multiplies).
    static_assert(KB % 2 == 0, "the register pipeline: an even number of k-blocks per K step (slot kk % 2)");
    // The whole K loop, for whole tiles or for an edge block (two instantiations of the same code).
    auto k_loop = [&]<bool kWhole>(std::bool_constant<kWhole> whole) {
      // Prologue: S-1 K steps in flight. Every K step commits one group (empty past the last), so
      // "S-2 groups may still be pending" always means "the oldest has landed".
      for (int s = 0; s < S - 1; ++s) {
        if (s < k_tiles) issue(whole, s, s * kStage);
        cp_async_fence();
      }
      cp_async_wait<S - 2>();
      __syncthreads();
      // The stage this K step reads, and the one its copy refills: the stage the previous K step
      // read (every thread passed the barrier after its last k-block was loaded).
      int read_offset = 0, write_offset = (S - 1) * kStage;
      load_a(at_offset(sA0, read_offset), 0);
      load_b(at_offset(sB0, read_offset), 0);
      for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
        for (int kk = 0; kk < KB; ++kk) {
          if (kk == KB - 1) {
            // Step kt+1 must have landed, and every thread must be done with step kt's stage (its
            // last k-block was loaded one k-block ago) before step kt+S refills it.
            cp_async_wait<S - 2>();
            __syncthreads();
            write_offset = read_offset;
            read_offset = read_offset + kStage == S * kStage ? 0 : read_offset + kStage;
          }
          const int kk_next = kk + 1 == KB ? 0 : kk + 1;
          load_a(at_offset(sA0, read_offset), kk_next);
          load_b(at_offset(sB0, read_offset), kk_next);
          if (kk == 0) {
            // No branch: past the last K tile, the copy writes zeros into a stage nobody reads again.
            issue(whole, kt + S - 1, write_offset);
            cp_async_fence();
          }
          gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
        }
      }
    };
    // Whole tiles: the block's rows of A and B inside the matrices, and K a whole number of K tiles.
    if ((block_m + 1) * BM::value <= M && (block_n + 1) * BN::value <= N && K % BK::value == 0)
      k_loop(std::true_type{});
    else
      k_loop(std::false_type{});
    cp_async_wait<0>();

    store_c(tCrC, tCgC, tCcC, shape(mC), args.c_pairs);
  }
}

/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed; A or
/// B with vectors that are not whole goes to the fallback. The size rule is no_copy_branch's (the copies
/// of the last S−1 K steps address S−1 K tiles past the end).
template <class Cfg, class TOut>
void launch_precomputed_addresses(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C,
                                  cudaStream_t stream) {
  if (std::string why = no_copy_branch_rejects<Cfg>(p); !why.empty())
    throw std::invalid_argument("precomputed_addresses: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    // A or B not 16-byte aligned (a pointer or a leading dimension off 16 bytes): the 16-byte copies
    // cannot take it. Run stage_in_pointer (Cfg::Fallback), whose edge copy goes element by element, instead.
    if (!args.a_vec || !args.b_vec) return launch_stage_in_pointer<typename Cfg::Fallback, TOut>(p, A, B, C, stream);
    launch_block_tiles<Cfg>(precomputed_addresses_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>, args, p,
                            stream);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
