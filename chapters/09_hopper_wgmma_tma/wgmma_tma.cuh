// Chapter 09, step 2: tma (and its configurations two_consumers and big_tile). wgmma_cp_async with
// its tiles loaded by the copy engine: instead of every thread copying 16-byte chunks, one thread
// issues one TMA per operand and stage (a box of the global matrix, described by a tensor map built
// on the host from the shared layout: layout/copy_traits_sm90_tma.hpp), and mbarriers track the ring
// (gemm/pipeline.hpp, CUTLASS's PipelineTmaAsync):
//
//   thread 0 (producer)                  stage s                   every warpgroup (consumer)
//   producer_acquire(write): empty[s]?  <-- released by all --      consumer_wait(read): full[s]?
//     and arm full[s] with the bytes                                 wgmma on stage s, wait for them
//   tma_a.copy / tma_b.copy  ---------> bytes land on full[s] -->   consumer_release(read)
//
// Thread 0 is producer and consumer at once (no warp specialization yet: chapter 10): after each K
// step it refills the stage every warpgroup has just released, S steps ahead.
//
// Configurations (the steps after this one change only numbers):
//   tma            64×128 tiles of C, one warpgroup, 4 stages
//   two_consumers  128×128 tiles, two warpgroups (64 rows each) sharing each B tile
//   big_tile       128×256 tiles (wgmma m64n256k16), 4 stages of 48 KB
//
// C = A·B, A (M×K) row-major, B row-major (RRR) or stored N×K (RCR), C row-major; bf16 in, fp32
// accumulators, bf16 out. Any M and N (TMA reads zeros outside the matrix, the epilogue stores only
// inside C); K, and N in RRR, multiples of 8: a tensor map's row pitch is a multiple of 16 bytes.
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma
// Run:   build/bin/ch09_hopper_wgmma_tma --kernel tma,two_consumers,big_tile
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "gemm/epilogue_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "gemm/watchdog.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/mma_sm90.hpp"

namespace mm::ch09 {

using bf16 = __nv_bfloat16;

/// tma: one warpgroup, 64×128 tiles, 4 stages filled by TMA.
struct TmaCfg {
  using BM = _64;                   ///< rows of C per block: 64 per consumer warpgroup
  using BN = _128;                  ///< columns of C per block: the wgmma's N
  using BK = _64;                   ///< K step: one 128-byte swizzle row of bf16
  static constexpr int kStages = 4;
  static constexpr int kWarpgroups = BM::value / 64;  ///< wgmma M is 64: one warpgroup per 64 rows
  static constexpr int kThreads = 128 * kWarpgroups;
};
/// two_consumers: tma with 128×128 tiles: two warpgroups share each B tile.
struct TwoConsumersCfg : TmaCfg {
  using BM = _128;
  static constexpr int kWarpgroups = 2;
  static constexpr int kThreads = 256;
};
/// big_tile: two_consumers with 128×256 tiles (wgmma m64n256k16): each B byte feeds twice the math.
struct BigTileCfg : TwoConsumersCfg {
  using BN = _256;
};

/// The block's shared memory: the rings (1024-byte aligned: the swizzle pattern's start) and the
/// pipeline's barriers. The compiler sums it.
template <class Cfg, GmmaMajor MajorB>
struct TmaSharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<bf16, MajorB, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;       ///< (BN,BK,S)
  using StageA = GmmaStage<RingA>;  ///< one stage, (BM,BK): what a TMA copy of A fills
  using StageB = GmmaStage<RingB>;  ///< one stage, (BN,BK)
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs. The TMA copies hold their tensor maps, which must live in the kernel's
/// parameter block (`__grid_constant__`): TMA takes their address there.
template <class Cfg, GmmaMajor MajorB>
struct TmaParams {
  using Storage = TmaSharedStorage<Cfg, MajorB>;
  TmaCopy<SM90_TMA_LOAD_2D, bf16, typename Storage::StageA> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, bf16, typename Storage::StageB> tma_b;  ///< B's boxes into a stage
  bf16* c;       ///< C, M×N row-major
  int m, n, k;   ///< C is M×N, K the inner dimension
  Watchdog watchdog;  ///< the mbarrier waits' bound and record (gemm/watchdog.hpp)
  bool c_pairs;  ///< two neighbouring elements of a row of C are one aligned 32-bit word
};

/// One block: C tile (blockIdx.x, blockIdx.y) = A·B. wgmma needs sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1) wgmma_tma_kernel(const __grid_constant__ TmaParams<Cfg, MajorB> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = TmaSharedStorage<Cfg, MajorB>;
    using Pipeline = typename Storage::Pipeline;
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
    const int wg = tid / 128;  // this thread's warpgroup: rows 64·wg .. 64·wg+63 of the block
    const int m0 = int(blockIdx.x) * BM::value, n0 = int(blockIdx.y) * BN::value;
    const int k_tiles = int(launch::ceil_div(params.k, BK::value));
    const bool producer = tid == 0;

    // The ring: each stage expects A's and B's bytes; every warpgroup releases it.
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kWarpgroups;
    pipe_params.is_leader = producer;
    pipe_params.watchdog = params.watchdog;  // the waits' bound and record (gemm/watchdog.hpp)
    Pipeline pipeline(shared.pipeline, pipe_params, tid);
    if (producer) {
      params.tma_a.prefetch();
      params.tma_b.prefetch();
    }
    __syncthreads();  // the barriers are initialized before anyone uses them

    // K step kt into the stage at `write` (producer only; `write` was acquired).
    auto load = [&](typename Pipeline::State write, int kt) {
      std::uint64_t* bar = pipeline.producer_get_barrier(write);
      params.tma_a.copy(bar, sA(_, _, write.index()), m0, kt * BK::value);
      params.tma_b.copy(bar, sB(_, _, write.index()), n0, kt * BK::value);
    };

    auto write = make_producer_start_state<Pipeline>();
    if (producer)
      for (int kt = 0; kt < S && kt < k_tiles; ++kt) {  // the first S stages are free: no wait, only the arm
        pipeline.producer_acquire(write, /*skip_wait=*/true);
        load(write, kt);
        ++write;
      }

    float acc[BN::value / 2];  // this warpgroup's 64×BN tile (the atom's C layout); overwritten at kt = 0
    typename Pipeline::State read;
    for (int kt = 0; kt < k_tiles; ++kt) {
      pipeline.consumer_wait(read);  // step kt has landed
      auto a_tile = local_tile(sA(_, _, read.index()), make_shape(_64{}, BK{}), make_coord(wg, 0));  // (64,BK)
      gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, read.index()), acc, kt > 0);         // B: (BN,BK)
      warpgroup_wait<0>();  // this warpgroup's wgmma of the stage have completed
      warpgroup_fence_operand(acc);
      pipeline.consumer_release(read);
      ++read;
      // The producer refills the stage just released (once every warpgroup has released it).
      if (producer && kt + S < k_tiles) {
        pipeline.producer_acquire(write);
        load(write, kt + S);
        ++write;
      }
      __syncwarp();
    }
    warpgroup_wait<0>();
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);

    // Epilogue: each accumulator to its place in C, as the atom's C layout says.
    store_accumulators_bf16<Atom>(acc, params.c, params.n, m0 + 64 * wg, n0, params.m, params.n, params.c_pairs,
                                  tid % 128);
  }
}

/// Empty when the kernel takes `p`; otherwise the constraint it breaks.
template <class Cfg>
std::string wgmma_tma_rejects(const GemmProblem& p) {
  if (std::string why = launch::tma_operand_rejects(p); !why.empty()) return why;
  if (launch::ceil_div(p.n, Cfg::BN::value) > launch::max_grid_y)
    return "needs N <= " + std::to_string(launch::max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  return {};
}

/// The TMA copies of A and B for a problem: the maps are built from each stage's shared layout (box,
/// swizzle, bytes) and the global matrices seen as (MN,K): A (M,K) row-major, B (N,K) with K
/// contiguous (RCR) or N contiguous (RRR). Throws std::invalid_argument when TMA cannot describe them.
template <class Params>
void make_operand_copies(Params& params, const GemmProblem& p, const bf16* A, const bf16* B) {
  using Storage = typename Params::Storage;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  params.tma_a = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(A, make_layout(make_shape(m, k), make_stride(k, _1{}))),
                               typename Storage::StageA{});
  if (p.b == Order::col)
    params.tma_b = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(k, _1{}))),
                                 typename Storage::StageB{});
  else
    params.tma_b = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(_1{}, n))),
                                 typename Storage::StageB{});
}

/// The one-time preparation of a launch (outside any timed region): the TMA copies of A and B, the
/// shared-memory opt-in; returns what runs the kernel on a stream. Throws std::invalid_argument for
/// a problem the kernel rejects or operands TMA cannot describe (a misaligned pointer, say).
template <class Cfg>
std::function<void(cudaStream_t)> prepare_wgmma_tma(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = wgmma_tma_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("wgmma_tma: " + why);
  const dim3 grid(unsigned(launch::ceil_div(p.m, Cfg::BM::value)), unsigned(launch::ceil_div(p.n, Cfg::BN::value)));
  auto prepare = [&](auto major_b) -> std::function<void(cudaStream_t)> {
    constexpr GmmaMajor MajorB = decltype(major_b)::value;
    TmaParams<Cfg, MajorB> params{};
    make_operand_copies(params, p, A, B);
    params.watchdog = host_watchdog();
    params.c = C;
    params.m = int(p.m);
    params.n = int(p.n);
    params.k = int(p.k);
    params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0;
    auto kernel = wgmma_tma_kernel<Cfg, MajorB>;
    constexpr std::size_t smem = shared_storage_bytes<TmaSharedStorage<Cfg, MajorB>>();
    opt_in_dynamic_smem(kernel, smem);
    return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
  };
  if (p.b == Order::col) return prepare(std::integral_constant<GmmaMajor, GmmaMajor::K>{});
  return prepare(std::integral_constant<GmmaMajor, GmmaMajor::MN>{});
}

}  // namespace mm::ch09
