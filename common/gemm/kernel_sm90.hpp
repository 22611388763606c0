// The Hopper GEMM kernels composed from blocks (CUTLASS's sm90 `GemmUniversal` kernels): a collective
// main loop (gemm/collective_mma_sm90.hpp), a collective epilogue (gemm/collective_epilogue_sm90.hpp)
// and a tile scheduler that owns the loop (gemm/tile_scheduler_sm90.hpp), joined by one of two
// warp-specialized schedules:
//
//   GemmKernelCooperative  (CUTLASS's KernelTmaWarpSpecializedCooperative) a producer warpgroup and
//                          kConsumers consumer warpgroups that share each tile, 64 rows each: chapter
//                          10's tma_store kernel, the base of chapters 11 and 12
//   GemmKernelPingpong     (KernelTmaWarpSpecializedPingpong) two consumer warpgroups, each with its
//                          own tile, taking turns on the tensor cores: one's epilogue runs under the
//                          other's main loop (chapter 11's appendix)
//
//   block (kThreads = 128 · (1 + kConsumers))
//   ├── warpgroup 0, producer (40 registers): thread 0 walks the scheduler's work and calls
//   │                                         Mainloop::load for each unit
//   └── warpgroups 1.., consumers (232):      walk the same work; Mainloop::mma into the accumulators,
//                                             Scheduler::fixup, Epilogue::store when
//                                             Scheduler::compute_epilogue
//
// In clusters (Cfg::kClusterM × kClusterN blocks; 1 × 1 unless a step says) the blocks meet
// (cluster_sync) after initializing their barriers and before leaving, the scheduler hands a cluster
// its units, and each block takes its own tile of the cluster tile (block_work); the main loop
// multicasts the operand the cluster shares (CollectiveMma::copy_operands). The cooperative kernel only.
//
// Shared memory is one SharedStorage struct: the collectives' tensors, then the pipeline's barriers
// (CUTLASS's TensorStorage and PipelineStorage), so the compiler sums the bytes. The watchdog
// (layout/mbarrier.hpp) has one trap, at the end, after every wgmma has drained.
//
// The kernel is a functor of the kernel's Params; gemm_device_kernel<Kernel> is the __global__ entry
// the adapter (gemm/kernel_adapter.hpp) launches.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gemm/smem.hpp"  // shared_storage
#include "layout/integer.hpp"  // Int
#include "gemm/tile_scheduler_sm90.hpp"
#include "gemm/warp_specialization.hpp"
#include "layout/arch.hpp"
#include "layout/cluster.hpp"
#include "layout/mbarrier.hpp"

namespace mm {

/// The configuration of a composed kernel, as a step spells it: a BM×BN tile of C in K steps of BK, a
/// ring of `Stages` stages, BM / 64 consumer warpgroups (each multiplies 64 rows: wgmma's M) and one
/// producer warpgroup, the registers setmaxnreg gives each role, and the epilogue's pieces of C. A
/// step's configuration derives from it and changes what its lesson changes (`using BN = _192;`).
template <int BM_, int BN_, int BK_, int Stages, int PieceN = 64>
struct KernelConfig {
  using BM = Int<BM_>;  ///< rows of C per tile: 64 per consumer warpgroup
  using BN = Int<BN_>;  ///< columns of C per tile: the wgmma's N
  using BK = Int<BK_>;  ///< K step: one 128-byte swizzle row of the element type
  static constexpr int kWgmmaM = 64;                       ///< rows one wgmma (one consumer warpgroup) multiplies
  static constexpr int kStages = Stages;                   ///< stages in the ring
  static constexpr int kConsumers = BM_ / kWgmmaM;         ///< consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);  ///< a producer warpgroup and the consumers
  static constexpr int kGroupM = 16;        ///< rows of tiles the scheduler walks down before moving right
  /// Blocks of a cluster along M: they share a column of tiles, B's boxes multicast among them (1: none).
  static constexpr int kClusterM = 1;
  /// Blocks of a cluster along N: they share a row of tiles, A's boxes multicast among them (1: none).
  static constexpr int kClusterN = 1;
  static constexpr int kProducerRegs = 40;  ///< the producer only issues TMA (setmaxnreg.dec)
  static constexpr int kConsumerRegs = 232; ///< the consumers hold the accumulators (setmaxnreg.inc)
  static constexpr int kPieceM = 64;        ///< rows of one piece of C in the epilogue
  static constexpr int kPieceN = PieceN;    ///< columns of one piece: one 128-byte swizzle row of C
  static constexpr int kCBuffers = 2;       ///< pieces in flight per consumer warpgroup
  /// A consumer warpgroup whose 64 rows of a tile are all past the tile's problem (a grouped tile's
  /// padding: the work's `row_end`) skips the tile's wgmma and its store (chapter 13's appendix: a dead end).
  static constexpr bool kSkipIdleConsumers = false;
};

/// A configuration `Cfg` in clusters of ClusterM × ClusterN blocks (CUTLASS's ClusterShape): the one
/// line a step that runs in clusters changes, `using Cfg = Clustered<Fp8Block128x128Cfg, 1, 2>;`.
template <class Cfg, int ClusterM, int ClusterN>
struct Clustered : Cfg {
  static constexpr int kClusterM = ClusterM;  ///< blocks along M: they share B
  static constexpr int kClusterN = ClusterN;  ///< blocks along N: they share A
};

/// A composed kernel's shared memory: the collectives' tensors, then the pipeline's barriers.
/// `epilogue()` is the epilogue's part. An epilogue without shared memory (the register epilogue)
/// gets no member at all: an empty member would take a byte, rounded up to the rings' 1024-byte
/// alignment, and [[no_unique_address]], which would drop it, is not honoured alike by the host and
/// the device compilers (the host's sizeof, the launch's byte count, then misses the device's
/// offsets).
template <class Mainloop, class Epilogue, bool = std::is_empty_v<typename Epilogue::TensorStorage>>
struct KernelSharedStorage {
  /// The collectives' tensors.
  struct TensorStorage {
    typename Mainloop::TensorStorage mainloop;  ///< the rings
    typename Epilogue::TensorStorage epilogue;  ///< the C buffers
  } tensors;                                    ///< the collectives' tensors
  typename Mainloop::Pipeline::SharedStorage pipeline;  ///< the ring's barriers and the watchdog word
  /// The epilogue's part.
  MM_HD typename Epilogue::TensorStorage& epilogue() { return tensors.epilogue; }
};
/// @cond SPECIALIZATIONS
template <class Mainloop, class Epilogue>
struct KernelSharedStorage<Mainloop, Epilogue, true> {
  struct TensorStorage {
    typename Mainloop::TensorStorage mainloop;
  } tensors;
  typename Mainloop::Pipeline::SharedStorage pipeline;
  /// An empty epilogue's storage: any address of the right type, never read or written.
  MM_HD typename Epilogue::TensorStorage& epilogue() { return *reinterpret_cast<typename Epilogue::TensorStorage*>(&tensors); }
};
/// @endcond

/// A composed kernel's parameters: each block's, and the watchdog's (gemm/watchdog.hpp).
template <class Mainloop, class Epilogue, class Scheduler>
struct KernelParams {
  typename Mainloop::Params mainloop;    ///< the main loop's
  typename Epilogue::Params epilogue;    ///< the epilogue's
  typename Scheduler::Params scheduler;  ///< the scheduler's
  Watchdog watchdog;                     ///< the waits' bound and record (gemm/watchdog.hpp)
};

/// The cooperative warp-specialized kernel (see the file comment). Cfg: the tile (BM, BN, BK,
/// kWgmmaM, kConsumers, kThreads, kProducerRegs, kConsumerRegs); Mainloop, Epilogue, Scheduler: the
/// three blocks.
template <class Cfg_, class Mainloop_, class Epilogue_, class Scheduler_>
struct GemmKernelCooperative {
  using Cfg = Cfg_;              ///< the configuration (tile, stages, warpgroups, registers)
  using Mainloop = Mainloop_;    ///< the collective main loop
  using Epilogue = Epilogue_;    ///< the collective epilogue
  using Scheduler = Scheduler_;  ///< the tile scheduler
  using Pipeline = typename Mainloop::Pipeline;  ///< the ring's barriers
  static constexpr int kThreads = Cfg::kThreads;  ///< threads of a block
  static constexpr int kClusterSize = Cfg::kClusterM * Cfg::kClusterN;  ///< blocks of a cluster (1: no cluster)
  static_assert(Cfg::BM::value == Cfg::kWgmmaM * Cfg::kConsumers, "the consumers share the tile's rows, 64 each");

  using SharedStorage = KernelSharedStorage<Mainloop, Epilogue>;  ///< the block's shared memory
  static constexpr std::size_t kSharedStorageBytes = shared_storage_bytes<SharedStorage>();  ///< its bytes
  static_assert(kSharedStorageBytes <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  using Params = KernelParams<Mainloop, Epilogue, Scheduler>;  ///< the kernel's parameters

#if defined(__CUDACC__)  // a C++ compiler sees the kernel's types, not its device code
  /// The kernel, in every thread of a block: `smem` is its dynamic shared memory (1024-byte aligned).
  __device__ void operator()(const Params& params, std::uint8_t* smem) const {
    SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem);
    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = Mainloop::kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kConsumers;
    pipe_params.is_leader = threadIdx.x == 0;
    pipe_params.watchdog = params.watchdog;
    const int rank = block_rank_in_cluster<kClusterSize>();  // this block's place in its cluster
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x), rank);
    if (threadIdx.x == 0) {
      Mainloop::prefetch(params.mainloop);
      Epilogue::prefetch(params.epilogue);
    }
    // The barriers are initialized before anyone uses them: in a cluster, before a peer's multicast
    // signals them or its consumers release our stages.
    if constexpr (kClusterSize > 1) {
      cluster_sync();
    } else {
      __syncthreads();
    }

    // The scheduler hands a cluster its units (a block alone is a cluster of one); block_work says which
    // tile of the cluster's is this block's.
    Scheduler scheduler(params.scheduler, int(blockIdx.x) / kClusterSize, int(gridDim.x) / kClusterSize);
    if (wg == 0) {
      // ---- Producer: one thread issues every load; the warpgroup's registers go to the consumers.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (auto work = scheduler.get_current_work(); work.is_valid(); work = scheduler.advance_to_next_work()) {
          if constexpr (kClusterSize > 1) work = block_work<Cfg>(work, rank);  // the cluster's unit, this block's tile
          const TileOrigin o = tile_origin<Cfg>(work);
          Mainloop::load(params.mainloop, pipeline, write, shared.tensors.mainloop, o.m0, o.b0, work.k_begin, work.k_end);
        }
      }
    } else {
      // ---- Consumers: warpgroup 1 multiplies rows 0-63 of each tile, warpgroup 2 rows 64-127.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Mainloop::State read;     // the stage to multiply next
      typename Mainloop::State release;  // the oldest stage not yet released
      auto accum = Mainloop::template partition_fragment_C<1>();  // (MMA,1,1): this thread's values of the warpgroup's 64×BN tile
      typename Epilogue::Consumer epilogue(params.epilogue, shared.epilogue(), cw, t);
      for (auto work = scheduler.get_current_work(); work.is_valid(); work = scheduler.advance_to_next_work()) {
        if constexpr (kClusterSize > 1) work = block_work<Cfg>(work, rank);  // the cluster's unit, this block's tile
        if constexpr (Cfg::kSkipIdleConsumers) {
          if (work.row_begin + Cfg::kWgmmaM * cw >= work.row_end) {  // this warpgroup's rows: all padding
            Mainloop::skip(pipeline, read, release, work);
            continue;
          }
        }
        Mainloop::mma(params.mainloop, pipeline, read, release, shared.tensors.mainloop, accum, cw, work);
        scheduler.fixup(work, accum, cw, t, pipeline.watchdog());
        if (!scheduler.compute_epilogue(work)) continue;
        const TileOrigin o = tile_origin<Cfg>(work);
        epilogue.store(accum, o.m0 + Cfg::kWgmmaM * cw, o.n0);
      }
      epilogue.store_tail();
    }
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);
    // No block leaves while a peer may still multicast into it or release its stages.
    if constexpr (kClusterSize > 1) cluster_sync();
  }
#endif
};

/// The ping-pong kernel (see the file comment): two consumer warpgroups, consumer c on the block's
/// work c, c + 2, ... (the scheduler's units two by two), each multiplying all BM rows of its tile
/// (BM / 64 wgmma a K step); a pair of named barriers passes the turn on the tensor cores. The
/// producer loads the block's units in order, so the ring's stages alternate owners unit by unit:
/// a stage is released by one warpgroup, and each consumer skips the other's stages.
template <class Cfg_, class Mainloop_, class Epilogue_, class Scheduler_>
struct GemmKernelPingpong {
  using Cfg = Cfg_;              ///< the configuration (tile, stages, warpgroups, registers)
  using Mainloop = Mainloop_;    ///< the collective main loop
  using Epilogue = Epilogue_;    ///< the collective epilogue
  using Scheduler = Scheduler_;  ///< the tile scheduler
  using Pipeline = typename Mainloop::Pipeline;  ///< the ring's barriers
  static constexpr int kThreads = Cfg::kThreads;  ///< threads of a block
  static constexpr int kClusterSize = 1;                        ///< no clusters (the adapter asks)
  static constexpr int kRows = Cfg::BM::value / Cfg::kWgmmaM;  ///< 64-row wgmma a K step, all by one warpgroup
  static_assert(Cfg::kConsumers == 2, "two consumers take turns");
  static_assert(Cfg::kClusterM * Cfg::kClusterN == 1, "the ping-pong kernel runs without clusters");
  /// The turn barriers' ids: consumer c waits on kTurnBarrier + c (ids 1 and 2 are the epilogues').
  static constexpr int kTurnBarrier = 3;

  using SharedStorage = KernelSharedStorage<Mainloop, Epilogue>;  ///< the block's shared memory
  static constexpr std::size_t kSharedStorageBytes = shared_storage_bytes<SharedStorage>();  ///< its bytes
  static_assert(kSharedStorageBytes <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  using Params = KernelParams<Mainloop, Epilogue, Scheduler>;  ///< the kernel's parameters

#if defined(__CUDACC__)  // a C++ compiler sees the kernel's types, not its device code
  /// The kernel, in every thread of a block: `smem` is its dynamic shared memory (1024-byte aligned).
  __device__ void operator()(const Params& params, std::uint8_t* smem) const {
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem);
    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = Mainloop::kTransactionBytes;
    pipe_params.consumer_warpgroups = 1;  // a stage belongs to one consumer's tile: it alone releases it
    pipe_params.is_leader = threadIdx.x == 0;
    pipe_params.watchdog = params.watchdog;
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x));
    if (threadIdx.x == 0) {
      Mainloop::prefetch(params.mainloop);
      Epilogue::prefetch(params.epilogue);
    }
    __syncthreads();

    Scheduler scheduler(params.scheduler, int(blockIdx.x), int(gridDim.x));
    if (wg == 0) {
      // ---- Producer: the block's units in order, as the cooperative kernel's.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (auto work = scheduler.get_current_work(); work.is_valid(); work = scheduler.advance_to_next_work()) {
          const TileOrigin o = tile_origin<Cfg>(work);
          Mainloop::load(params.mainloop, pipeline, write, shared.tensors.mainloop, o.m0, o.b0, work.k_begin, work.k_end);
        }
      }
    } else {
      // ---- Consumers: consumer c takes the block's units c, c + 2, c + 4, ...
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Mainloop::State read;
      typename Mainloop::State release;
      auto work = scheduler.get_current_work();
      if (cw == 1) {  // the block's first unit, hence its first stages, are consumer 0's
        const auto skipped = std::uint32_t(work.k_end - work.k_begin);
        read.advance(skipped);
        release.advance(skipped);
        work = scheduler.advance_to_next_work();
      }
      auto accum = Mainloop::template partition_fragment_C<kRows>();  // (MMA,kRows,1): this thread's values of the consumer's BM×BN tile
      typename Epilogue::Consumer epilogue(params.epilogue, shared.epilogue(), cw, t);
      bool my_turn = cw == 0;  // consumer 0 starts; consumer 1 waits for its first turn
      while (work.is_valid()) {
        // Our turn on the tensor cores: the other consumer has issued its unit's wgmma.
        if (!my_turn) named_barrier_sync(kTurnBarrier + cw, 256);
        my_turn = false;
        Mainloop::mma(params.mainloop, pipeline, read, release, shared.tensors.mainloop, accum, 0, work);
        // The other consumer's unit, whose stages are not ours; its turn when it has one.
        const auto other = scheduler.advance_to_next_work();
        if (other.is_valid()) {
          named_barrier_arrive(kTurnBarrier + (1 - cw), 256);
          const auto skipped = std::uint32_t(other.k_end - other.k_begin);
          read.advance(skipped);
          release.advance(skipped);
        }
        scheduler.fixup(work, accum, cw, t, pipeline.watchdog());
        if (scheduler.compute_epilogue(work)) {
          const TileOrigin o = tile_origin<Cfg>(work);
          epilogue.store(accum, o.m0, o.n0);  // row block h at rows o.m0 + 64·h
        }
        work = scheduler.advance_to_next_work();
      }
      epilogue.store_tail();
    }
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);
  }
#endif
};

#if defined(__CUDACC__)
/// The entry point of a composed kernel: its dynamic shared memory, 1024-byte aligned (gemm/smem.hpp),
/// and the functor. wgmma and setmaxnreg need sm_90a: any other device pass compiles a stub which the
/// adapter never launches.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreads, 1) gemm_device_kernel(const __grid_constant__ typename Kernel::Params params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];
    Kernel{}(params, smem_raw);
  }
}
#else
/// A C++ compiler (a chapter's kernel-free main, chapters/CMakeLists.txt) sees the entry point declared, never
/// defined: naming it compiles, launching it from such a file does not (GemmAdapter::run) and linking a
/// pointer to it fails.
template <class Kernel>
void gemm_device_kernel(const typename Kernel::Params params);
#endif

}  // namespace mm
