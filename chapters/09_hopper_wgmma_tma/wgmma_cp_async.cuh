// Chapter 09, step 1: wgmma_cp_async. Hopper's asynchronous warpgroup MMA, fed by chapter 08's
// cp.async ring: the only new idea is the instruction itself. A warpgroup (four warps, 128 threads)
// multiplies a 64×N tile of C with wgmma m64nNk16, reading A and B straight from shared memory
// through 64-bit matrix descriptors (layout/mma_sm90.hpp), instead of each warp loading fragments
// into registers for mma.sync. The shared tiles must be laid out exactly as wgmma reads them: the
// 128-byte-swizzled GMMA layouts (one 128-byte row of 64 k per M or N index, K-major; or of 64 n per
// k, MN-major).
//
// One block of 128 threads per 64×128 tile of C; K steps of 64 (one swizzle row of bf16); 3 stages.
// The protocol per K step (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
// the stage's cp.async copies land, fence.proxy.async makes them visible to wgmma (which reads shared
// memory through the async proxy), a barrier, then warpgroup_arrive, four wgmma (k = 0, 16, 32, 48),
// commit, and wait for them before the stage is refilled.
//
// C = A·B, A (M×K) row-major, B row-major (RRR: wgmma reads it MN-major) or stored N×K (RCR: K-major
// like A), C row-major; bf16 in, fp32 accumulators, bf16 out. K, and N in RRR, multiples of 8 (the
// rule of the chapter's TMA steps, kept here so the chapter takes one set of problems); A and B
// 16-byte aligned (cp.async moves 16 bytes).
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma
// Run:   build/bin/ch09_hopper_wgmma_tma --kernel wgmma_cp_async
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/epilogue_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "layout/all.hpp"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared
#include "layout/mma_sm90.hpp"

namespace mm::ch09 {

using bf16 = __nv_bfloat16;

/// wgmma_cp_async: one warpgroup, 64×128 tiles of C, K steps of 64, a ring of 3 stages.
struct WgmmaCpAsyncCfg {
  using BM = _64;                                  ///< rows of C per block: one warpgroup's wgmma M
  using BN = _128;                                 ///< columns of C per block: the wgmma's N
  using BK = _64;                                  ///< K step: 64 bf16 = one 128-byte swizzle row
  static constexpr int kStages = 3;                ///< shared tiles in the ring
  static constexpr int kThreads = 128;             ///< one warpgroup
};

/// The block's shared memory: the two rings, each starting at a 1024-byte boundary (where the
/// 128-byte swizzle pattern starts: wgmma's descriptors assume it).
template <class Cfg, GmmaMajor MajorB>
struct CpAsyncSharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<bf16, MajorB, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;       ///< (BN,BK,S)
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
};

/// What one launch needs.
struct CpAsyncParams {
  bf16 const* a;  ///< A, M×K row-major
  bf16 const* b;  ///< B, K×N row-major (RRR) or N×K row-major (RCR)
  bf16* c;        ///< C, M×N row-major
  int m, n, k;    ///< C is M×N, K the inner dimension
  bool c_pairs;   ///< two neighbouring elements of a row of C are one aligned 32-bit word
};

/// The (MN,BK) tile at (mn0, k0) of an operand into one stage, in 16-byte cp.async chunks along its
/// contiguous dimension (K for a K-major operand, MN for an MN-major one); a chunk outside the matrix
/// is zero-filled (K, and an MN-major operand's MN, are multiples of 8: a chunk is wholly inside or
/// wholly outside). `ld`: the global row pitch in elements.
template <GmmaMajor Major, int kThreads, class Stage>
__device__ void cp_async_tile(Stage const& stage, bf16 const* g, int ld, int mn_extent, int k_extent, int mn0, int k0,
                              int tid) {
  using L = std::remove_cvref_t<decltype(stage.layout())>;
  constexpr int MN = size_v<std::remove_cvref_t<decltype(get<0>(typename L::shape_type{}))>>;
  constexpr int chunks = MN * 64 / 8;
  static_assert(chunks % kThreads == 0, "whole passes of the block over the tile");
#pragma unroll
  for (int i = 0; i < chunks / kThreads; ++i) {
    const int c = tid + i * kThreads;
    // K-major: chunk c is row c/8 (an MN index), k = 8·(c%8). MN-major: row c/(MN/8) is a k.
    const int mn = Major == GmmaMajor::K ? c / 8 : 8 * (c % (MN / 8));
    const int k = Major == GmmaMajor::K ? 8 * (c % 8) : c / (MN / 8);
    const int gmn = mn0 + mn, gk = k0 + k;
    const bool inside = gmn < mn_extent && gk < k_extent;
    const std::int64_t offset = Major == GmmaMajor::K ? std::int64_t(gmn) * ld + gk : std::int64_t(gk) * ld + gmn;
    auto const& src = *reinterpret_cast<uint128_t const*>(inside ? g + offset : g);  // not read when outside
    auto& dst = *reinterpret_cast<uint128_t*>(&stage(mn, k));  // where the swizzled layout puts (mn, k)
    SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>::copy(src, dst, inside);
  }
}

/// One block: C tile (blockIdx.x, blockIdx.y) = A·B. wgmma needs sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1) wgmma_cp_async_kernel(CpAsyncParams const params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = CpAsyncSharedStorage<Cfg, MajorB>;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, MajorB>;  // B K-major (RCR) or MN-major (RRR)
    constexpr int S = Cfg::kStages;
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];  // 1024-byte aligned: gemm/smem.hpp
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int tid = int(threadIdx.x);
    const int m0 = int(blockIdx.x) * BM::value, n0 = int(blockIdx.y) * BN::value;
    const int M = params.m, N = params.n, K = params.k;
    const int k_tiles = int(launch::ceil_div(K, BK::value));
    const int ld_b = MajorB == GmmaMajor::K ? K : N;

    // This thread's BN/2 accumulators of the warpgroup's 64×BN tile, in the order of the atom's C
    // layout (MMA_Traits<Atom>::CLayout). The first K step overwrites them (no zeroing loop).
    float acc[BN::value / 2];

    auto issue = [&](int kt) {  // K step kt into stage kt % S: every thread copies its chunks
      const int s = kt % S;
      cp_async_tile<GmmaMajor::K, Cfg::kThreads>(sA(_, _, s), params.a, K, M, K, m0, kt * BK::value, tid);
      cp_async_tile<MajorB, Cfg::kThreads>(sB(_, _, s), params.b, ld_b, N, K, n0, kt * BK::value, tid);
    };
    // Prologue: S-1 K steps in flight; every step commits one group (empty past the last), so
    // "S-2 groups may still be pending" always means "the oldest has landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) issue(s);
      cp_async_fence();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<S - 2>();      // this thread's chunks of step kt have landed
      fence_proxy_async_shared();  // ...and are visible to wgmma, which reads through the async proxy
      __syncthreads();             // everyone's are; everyone's wgmma of step kt-1 has completed
      if (kt + S - 1 < k_tiles) issue(kt + S - 1);  // into the stage step kt-1 used
      cp_async_fence();
      // Four wgmma (k = 0, 16, 32, 48) of the stage, one group; then wait for it: the stage is
      // refilled at the next step, and the accumulators are read by nobody else meanwhile.
      gmma_k_block<Atom, GmmaMajor::K, MajorB>(sA(_, _, kt % S), sB(_, _, kt % S), acc, kt > 0);
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc);
    }

    // Epilogue: each accumulator to its place in C, as the atom's C layout says (two neighbours
    // along N as one 32-bit store where C's rows allow it).
    store_accumulators_bf16<Atom>(acc, params.c, N, m0, n0, M, N, params.c_pairs, tid % 128);
  }
}

/// Empty when the kernel takes `p`; otherwise the constraint it breaks.
template <class Cfg>
std::string wgmma_cp_async_rejects(const GemmProblem& p) {
  if (std::string why = launch::tma_operand_rejects(p); !why.empty()) return why;
  if (launch::ceil_div(p.n, Cfg::BN::value) > launch::max_grid_y)
    return "needs N <= " + std::to_string(launch::max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  return {};
}

/// Runs the kernel once. Throws std::invalid_argument for a problem it rejects, or for an A or B
/// that does not start at a 16-byte boundary (cp.async moves aligned 16-byte chunks: a misaligned
/// one would fault).
template <class Cfg>
void launch_wgmma_cp_async(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, cudaStream_t stream) {
  if (std::string why = wgmma_cp_async_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("wgmma_cp_async: " + why);
  if (reinterpret_cast<std::uintptr_t>(A) % 16 != 0 || reinterpret_cast<std::uintptr_t>(B) % 16 != 0)
    throw std::invalid_argument("wgmma_cp_async: needs A and B at 16-byte aligned addresses (cp.async copies 16-byte chunks)");
  const CpAsyncParams params{A, B, C, int(p.m), int(p.n), int(p.k),
                             reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0};
  const dim3 grid(unsigned(launch::ceil_div(p.m, Cfg::BM::value)), unsigned(launch::ceil_div(p.n, Cfg::BN::value)));
  auto run = [&](auto kernel, std::size_t smem) {
    opt_in_dynamic_smem(kernel, smem);
    kernel<<<grid, Cfg::kThreads, smem, stream>>>(params);
  };
  if (p.b == Order::col)
    run(wgmma_cp_async_kernel<Cfg, GmmaMajor::K>, shared_storage_bytes<CpAsyncSharedStorage<Cfg, GmmaMajor::K>>());
  else
    run(wgmma_cp_async_kernel<Cfg, GmmaMajor::MN>, shared_storage_bytes<CpAsyncSharedStorage<Cfg, GmmaMajor::MN>>());
}

}  // namespace mm::ch09
