// Chapter 08, step mma_fragments: chapter 07's tiled, cp.async-pipelined GEMM with each warp's
// arithmetic done by mma.sync (bf16 m16n8k16; tf32 m16n8k8 for tf32_fragments). What it adds over
// chapter 07: the warps' fragments are described by the atom's thread-value layouts (TiledMMA,
// layout/mma_sm80.hpp), and this step copies them from shared memory element by element, at the place
// the TV layout says: the point is which lane holds what, not speed.
//
// C = A·B with A (M×K) row-major, B row-major (RRR) or column-major (RCR, C = A·Bᵀ for a B stored N×K),
// C row-major, by layouts alone; any M, N, K: partial or misaligned tiles take an element-wise,
// zero-filling copy.
//
// Build: cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores --kernel mma_fragments
#pragma once

#include "08_tensor_cores/tensor_core_pieces.cuh"

namespace mm::ch08 {

/// mma_fragments: 128×128×32 tiles, 3 stages, 2×2 warps of 64×64, plain shared tiles.
struct MmaFragmentsCfg {
  using Op = Bf16Atom;
  using BM = Int<128>;
  using BN = Int<128>;
  using BK = Int<32>;
  static constexpr int kStages = 3;
  static constexpr int kWarpsM = 2;
  static constexpr int kWarpsN = 2;
  static constexpr int kMinBlocks = 1;
  static constexpr bool kSwizzle = false;
  static constexpr int kMnSwizzleUnitBytes = 16;
};
/// tf32_fragments: mma_fragments with the tf32 atom, K steps of 16 fp32 (64-byte rows, as bf16's 32).
struct Tf32FragmentsCfg : MmaFragmentsCfg {
  using Op = Tf32Atom;
  using BK = Int<16>;
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(KernelTraits<Cfg>::kThreads, Cfg::kMinBlocks) mma_fragments_gemm_kernel(Args args) {
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
    auto stage_of = [](auto const& ring, int s) { return ring(_, _, s); };  // (MN,BK): one stage of a ring
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

    // Shared -> registers, k-block kk (the atom's K) of a stage into register slot kk % 2: element by
    // element, each value from where the MMA's TV layout puts it (tf32: rounded on the way, cvt.rna).
    auto load_a = [&](auto const& sA_stage, int kk) {  // sA_stage: (BM,BK)
      load_fragment<Tr::kTf32>(thr_mma.partition_A(sA_stage)(_, _, kk), tCrA(_, _, kk % 2));  // (MMA,MMA_M)
    };
    auto load_b = [&](auto const& sB_stage, int kk) {  // sB_stage: (BN,BK)
      load_fragment<Tr::kTf32>(thr_mma.partition_B(sB_stage)(_, _, kk), tCrB(_, _, kk % 2));  // (MMA,MMA_N)
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

/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed.
template <class Cfg, class TOut>
void launch_mma_fragments(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C,
                          cudaStream_t stream) {
  if (std::string why = tensor_core_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("mma_fragments: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    launch_block_tiles<Cfg>(mma_fragments_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>, args, p, stream);
  });
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
