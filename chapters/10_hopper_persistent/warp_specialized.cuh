// Chapter 10, step 1: warp_specialized. Chapter 09's best kernel (128×256 tiles, K steps of 64, a
// 4-stage TMA pipeline, one wgmma group in flight) reorganized by role: warpgroup 0 only loads,
// warpgroups 1 and 2 only multiply.
//
//   warpgroup 0, producer (one thread)          warpgroups 1, 2, consumers (64 rows of C each)
//   setmaxnreg.dec 40                           setmaxnreg.inc 232
//   for each K step:                            for each K step:
//     producer_acquire(write)  <-- empty[s] --    consumer_wait(read)  <-- full[s] -- TMA bytes
//     tma_a.copy, tma_b.copy   -- full[s] -->     wgmma (4 × k16), wait until one group runs
//     ++write                                     consumer_release(the stage before)
//                                               epilogue: registers -> C
//
// In chapter 09 the thread that issued the TMA loads was also a consumer: it refilled a stage only
// after its own warpgroup's wgmma, so every load waited on the slower of the two roles. Here the
// producer runs ahead on its own, and the 384 threads' registers are split by role (setmaxnreg, in
// gemm/warp_specialization.hpp): the producer gives its registers to the consumers, which hold the
// 128 fp32 accumulators each thread of a 64×256 wgmma needs.
//
// One block per 128×256 tile of C, the tiles in a grouped order (gemm/tile_scheduler.hpp: 16 rows of
// tiles down before moving right, so the blocks running at once share their A and B panels in L2).
// C = A·B with A (M×K) row-major, B row-major (RRR) or stored N×K (RCR), C row-major; bf16 in, fp32
// accumulators, bf16 out. Any M and N; K, and N in RRR, multiples of 8 (TMA's 16-byte row pitch).
//
// Build: cmake --build build --target ch10_hopper_persistent
// Run:   build/bin/ch10_hopper_persistent --kernel warp_specialized
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "gemm/cluster_launch.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "gemm/watchdog.hpp"
#include "gemm/tile_scheduler.hpp"
#include "gemm/warp_specialization.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/mma_sm90.hpp"

namespace mm::ch10 {

using bf16 = __nv_bfloat16;

/// warp_specialized: a producer warpgroup and two consumer warpgroups over a 128×256 tile, K steps
/// of 64, 4 stages; one block per tile.
struct WarpSpecializedCfg {
  using BM = _128;                          ///< rows of C per block: 64 per consumer warpgroup
  using BN = _256;                          ///< columns of C per block: the wgmma's N
  using BK = _64;                           ///< K step: one 128-byte swizzle row of bf16
  static constexpr int kWgmmaM = 64;        ///< rows one wgmma (one consumer warpgroup) multiplies
  static constexpr int kStages = 4;         ///< stages in the ring (4 × 48 KB)
  static constexpr int kConsumers = 2;      ///< consumer warpgroups, kWgmmaM rows each
  static constexpr int kThreads = 128 * (1 + kConsumers);  ///< the producer warpgroup and the consumers
  static constexpr int kGroupM = 16;        ///< rows of tiles the scheduler walks down before moving right
  /// setmaxnreg: the producer keeps 40 registers a thread, each consumer grows to 232.
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 65536, "the SM's register file");
  static_assert(BM::value == kWgmmaM * kConsumers, "one consumer warpgroup per 64 rows of the tile");
};

/// The block's shared memory: the rings (1024-byte aligned: the swizzle pattern's start) and the
/// pipeline's barriers. The compiler sums and aligns it.
template <class Cfg, GmmaMajor MajorB>
struct SharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<bf16, MajorB, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;       ///< (BN,BK,S)
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs. The TMA copies hold their tensor maps, which live in the kernel's parameter
/// block (`__grid_constant__`).
template <class Cfg, GmmaMajor MajorB>
struct Params {
  using Storage = SharedStorage<Cfg, MajorB>;
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  bf16* c;        ///< C, M×N row-major
  int m, n, k;    ///< C is M×N, K the inner dimension
  Watchdog watchdog;  ///< the mbarrier waits' bound and record (gemm/watchdog.hpp)
  bool c_pairs;   ///< two neighbouring elements of a row of C are one aligned 32-bit word
  int tiles_m;    ///< tiles along M
  int tiles_n;    ///< tiles along N
};

/// One block per tile: tile blockIdx.x of the grouped order. wgmma and setmaxnreg need sm_90a: any
/// other device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    warp_specialized_kernel(const __grid_constant__ Params<Cfg, MajorB> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = SharedStorage<Cfg, MajorB>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, MajorB>;  // B K-major (RCR) or MN-major (RRR)
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];  // 1024-byte aligned: gemm/smem.hpp
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kConsumers;
    pipe_params.is_leader = threadIdx.x == 0;
    pipe_params.watchdog = params.watchdog;  // the waits' bound and record (gemm/watchdog.hpp)
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x));
    if (threadIdx.x == 0) {
      params.tma_a.prefetch();
      params.tma_b.prefetch();
    }
    __syncthreads();  // the barriers are initialized before anyone uses them

    const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
    const TileCoord tile = tiles.tile(blockIdx.x);
    const int k_tiles = int(launch::ceil_div(params.k, BK::value));

    if (wg == 0) {
      // ---- Producer: one thread issues every load; the warpgroup's registers go to the consumers.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        const int m0 = tile.m * BM::value, n0 = tile.n * BN::value;
        auto write = make_producer_start_state<Pipeline>();
        for (int kt = 0; kt < k_tiles; ++kt) {
          pipeline.producer_acquire(write);  // every reader of this stage has released it
          std::uint64_t* bar = pipeline.producer_get_barrier(write);
          params.tma_a.copy(bar, sA(_, _, write.index()), m0, kt * BK::value);
          params.tma_b.copy(bar, sB(_, _, write.index()), n0, kt * BK::value);
          ++write;
        }
      }
    } else {
      // ---- Consumers: warpgroup 1 multiplies rows 0-63 of the tile, warpgroup 2 rows 64-127.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      const int m0 = tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = tile.n * BN::value;  // this warpgroup's rows
      typename Pipeline::State read;     // the stage to multiply next
      typename Pipeline::State release;  // the oldest stage not yet released: one behind (a group in flight)
      float acc[BN::value / 2];          // this thread's values of the warpgroup's 64×256 tile (the atom's C layout)
      for (int kt = 0; kt < k_tiles; ++kt) {
        pipeline.consumer_wait(read);
        auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));  // (64,BK)
        gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, read.index()), acc, kt > 0);  // B: (BN,BK)
        warpgroup_wait<1>();  // the previous step's group has completed: its stage is free
        warpgroup_fence_operand(acc);
        if (kt > 0) {
          pipeline.consumer_release(release);
          ++release;
        }
        ++read;
      }
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc);
      pipeline.consumer_release(release);  // the tile's last stage
      // Epilogue: each accumulator to its place in C, as the atom's C layout says.
      store_accumulators_bf16<Atom>(acc, params.c, params.n, m0, n0, params.m, params.n, params.c_pairs, t);
    }
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);
  }
}

/// Empty when the chapter's kernels take `p`; otherwise the constraint it breaks (TMA's rules).
template <class Cfg>
std::string warp_specialized_rejects(const GemmProblem& p) {
  return launch::tma_operand_rejects(p);
}

/// The TMA copies of A and B for a problem (layout/copy_traits_sm90_tma.hpp): the maps are built
/// from each stage's shared layout and the global matrices seen as (MN,K): A (M,K) row-major, B (N,K)
/// with K contiguous (RCR) or N contiguous (RRR). `Multicast` blocks of a cluster share B's tile
/// (SM90_TMA_LOAD_MULTICAST_2D) when it is above 1. Throws std::invalid_argument when TMA cannot
/// describe the operands.
template <class Params, int Multicast = 1>
void make_operand_copies(Params& params, const GemmProblem& p, const bf16* A, const bf16* B, Int<Multicast> = {}) {
  using Storage = typename Params::Storage;
  using OpB = std::conditional_t<Multicast == 1, SM90_TMA_LOAD_2D, SM90_TMA_LOAD_MULTICAST_2D>;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  params.tma_a = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(A, make_layout(make_shape(m, k), make_stride(k, _1{}))),
                               GmmaStage<typename Storage::RingA>{});
  if (p.b == Order::col)
    params.tma_b = make_tma_copy(OpB{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(k, _1{}))),
                                 GmmaStage<typename Storage::RingB>{}, Int<Multicast>{});
  else
    params.tma_b = make_tma_copy(OpB{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(_1{}, n))),
                                 GmmaStage<typename Storage::RingB>{}, Int<Multicast>{});
}

/// The one-time preparation of a launch (outside any timed region): the TMA copies, the
/// shared-memory opt-in, one block per tile; returns what runs the kernel on a stream. Throws
/// std::invalid_argument for a problem the kernel rejects or operands TMA cannot describe.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_warp_specialized(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = warp_specialized_rejects<Cfg>(p); !why.empty())
    throw std::invalid_argument("warp_specialized: " + why);
  auto prepare = [&](auto major_b) -> std::function<void(cudaStream_t)> {
    constexpr GmmaMajor MajorB = decltype(major_b)::value;
    Params<Cfg, MajorB> params{};
    make_operand_copies(params, p, A, B);
    params.watchdog = host_watchdog();
    params.c = C;
    params.m = int(p.m);
    params.n = int(p.n);
    params.k = int(p.k);
    params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0;
    params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
    params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
    const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
    if (tiles > launch::max_grid_x)
      throw std::invalid_argument("warp_specialized: needs at most 2^31 - 1 tiles, this problem has " + std::to_string(tiles));
    auto kernel = warp_specialized_kernel<Cfg, MajorB>;
    constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg, MajorB>>();
    static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
    opt_in_dynamic_smem(kernel, smem);
    const dim3 grid{unsigned(tiles)};
    return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
  };
  if (p.b == Order::col) return prepare(std::integral_constant<GmmaMajor, GmmaMajor::K>{});
  return prepare(std::integral_constant<GmmaMajor, GmmaMajor::MN>{});
}

}  // namespace mm::ch10
