// The tile schedulers that own a persistent kernel's loop (CUTLASS's sm90 tile schedulers:
// PersistentTileSchedulerSm90, and PersistentTileSchedulerSm90StreamK in its split-K and stream-K
// modes). A kernel never writes its tile loop: each role of each block constructs the scheduler and
// walks the work it hands out,
//
//   for (WorkTileInfo work = scheduler.get_current_work(); work.is_valid();
//        work = scheduler.advance_to_next_work()) {
//     ... the main loop over work.k_begin .. work.k_end of tile work.tile ...
//     scheduler.fixup(work, accumulators, ...);             // partial sums in and out (split-K)
//     if (scheduler.compute_epilogue(work)) ... store C ...  // only the unit that finishes the tile
//   }
//
// and the producer and the consumers of a block, walking the same scheduler, meet on the same tiles
// in the same order. The order of the work and its partial sums are gemm/tile_scheduler.hpp's
// (GroupedTileScheduler, SplitKTileScheduler, StreamKTileScheduler, each tested on the CPU there);
// what this file adds is the walk, the fixup (gemm/split_k_fixup.hpp) and the host's side: the grid
// and the workspace.
//
//   PersistentTileScheduler   whole tiles, block b takes tiles b, b + G, b + 2G, ... (no fixup)
//   SplitKScheduler           units of (tile, K slice), slice-major; the last slice of a tile waits
//                             for the others' partial sums and adds them in slice order
//   StreamKScheduler          whole rounds of tiles, and the last round's K steps spread evenly over
//                             every block; the piece with a tile's last K step adds the others
//   SplitKReduceScheduler     split-K whose slices all leave fp32 partial C in a workspace, added by
//                             a second kernel (chapter 11's first, slower, form)
//
// The block index and the grid size are constructor arguments (blockIdx.x and gridDim.x in a
// kernel), so that the host can walk every block's work in a test (tests/gemm/test_gemm_blocks.cpp).
// Where ours differs from CUTLASS: the fixup takes the consumer warpgroup's accumulators and its
// index (CUTLASS's takes the accumulators and a barrier index), and a block's stream-K pieces come
// first, in reverse tile order (gemm/tile_scheduler.hpp says why).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "gemm/epilogue_sm90.hpp"  // store_accumulators_strided
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/split_k_fixup.hpp"
#include "gemm/tile_scheduler.hpp"
#include "gemm/warp_specialization.hpp"  // named_barrier_sync
#include "layout/integer.hpp"

namespace mm {

/// What a scheduler hands out: a unit of work (a tile and a range of its K steps), or nothing.
struct WorkTileInfo : WorkUnit {
  bool valid = false;  ///< false past the block's last unit
  /// True for a unit of work; false past the block's last.
  MM_HD constexpr bool is_valid() const { return valid; }
};

/// Where a unit's tile is, as the main loop and the epilogue take it: its first row of A and C, its
/// first column of C, and its first row of B (N×K as the main loop reads it). One GEMM's are the tile's
/// corner; a grouped GEMM's (gemm/tile_scheduler_group_sm90.hpp) are its group's rows and weight.
struct TileOrigin {
  int m0;  ///< first row of A and C
  int n0;  ///< first column of C
  int b0;  ///< first row of B (N×K): n0 for one GEMM
};

/// One GEMM's tile origin: the tile's corner, B's rows the same as C's columns.
template <class Cfg>
MM_HD TileOrigin tile_origin(const WorkTileInfo& w) {
  return {w.tile.m * Cfg::BM::value, w.tile.n * Cfg::BN::value, w.tile.n * Cfg::BN::value};
}

/// A cluster's unit of work as one of its blocks takes it. With clusters (Cfg::kClusterM × kClusterN
/// blocks) the scheduler's tiles are cluster tiles (tile_order: kClusterM × kClusterN tiles each) and
/// its units go to clusters; block `rank` (cluster_ctarank(), column-major in the cluster shape, as
/// CuTe numbers a cluster's blocks) takes tile (m·kClusterM + rank % kClusterM, n·kClusterN + rank /
/// kClusterM) of cluster tile (m, n), with the same K steps, and its own index in the order, tile_index
/// · blocks + rank, for the split-K fixup's slots (the workspace counts the cluster's blocks:
/// SplitKScheduler::workspace_bytes' `cluster_size`). A cluster's blocks thus walk their units in
/// lock-step, each issuing its share of every stage the cluster shares. A tile past M or N (a cluster
/// tile over C's edge) is loaded as zeros and its store drops it (TMA writes nothing outside C).
/// Without clusters: the unit itself (of any scheduler's: a grouped GEMM's too).
template <class Cfg, class Work>
MM_HD Work block_work(const Work& w, int rank) {
  constexpr int kClusterM = Cfg::kClusterM, kClusterSize = Cfg::kClusterM * Cfg::kClusterN;
  if constexpr (kClusterSize == 1) {
    return w;
  } else {
    static_assert(std::is_same_v<Work, WorkTileInfo>, "clusters take one GEMM's tiles");
    Work b = w;
    b.tile = {w.tile.m * kClusterM + rank % kClusterM, w.tile.n * Cfg::kClusterN + rank / kClusterM};
    b.tile_index = w.tile_index * kClusterSize + rank;
    return b;
  }
}

/// Whole tiles in the grouped order (no fixup): what tile_shapes and chapter 12's kernels run.
struct PersistentTileScheduler {
  /// The tiles and their K steps.
  struct Params {
    GroupedTileScheduler tiles;  ///< the tiles and their order
    int k_steps;                 ///< K steps of every tile
  };
  Params params;          ///< the schedule
  std::int64_t current;  ///< the block's current tile index
  std::int64_t stride;   ///< blocks of the grid

  /// Block `block` of a grid of `blocks` (blockIdx.x and gridDim.x in a kernel).
  MM_HD PersistentTileScheduler(const Params& p, int block, int blocks) : params(p), current(block), stride(blocks) {}
  /// `tiles` in their grouped order, each of `k_steps` K steps.
  static Params to_underlying_arguments(const GroupedTileScheduler& tiles, int k_steps) { return {tiles, k_steps}; }
  /// Units of work the grid can share (one block per unit at most).
  static std::int64_t units(const Params& p) { return p.tiles.size(); }

  /// The block's current unit: a whole tile.
  MM_HD WorkTileInfo get_current_work() const {
    WorkTileInfo w;
    w.valid = current < params.tiles.size();
    if (w.valid) {
      w.tile = params.tiles.tile(current);
      w.tile_index = current;
    }
    w.split = 0;
    w.k_begin = 0;
    w.k_end = params.k_steps;
    return w;
  }
  /// The next unit `count` steps on (a ping-pong consumer skips the other's: count 2).
  MM_HD WorkTileInfo advance_to_next_work(int count = 1) {
    current += stride * count;
    return get_current_work();
  }
  /// Whole tiles leave no partial sums: nothing to fix up.
  template <class Accumulators>
  MM_HD void fixup(const WorkTileInfo&, Accumulators&, int, int, WatchdogState&) const {}
  /// Every unit stores its tile.
  MM_HD constexpr bool compute_epilogue(const WorkTileInfo&) const { return true; }
};

/// The grouped order of the tiles of a kernel configuration `Cfg` (BM × BN, kGroupM) over `p`; with
/// clusters, of its cluster tiles (kClusterM × kClusterN tiles, C's edge rounded up to whole
/// clusters; kGroupM tiles down, hence kGroupM / kClusterM cluster tiles).
template <class Cfg>
GroupedTileScheduler tile_order(const GemmProblem& p) {
  constexpr int kGroupM = Cfg::kGroupM / Cfg::kClusterM > 1 ? Cfg::kGroupM / Cfg::kClusterM : 1;
  return {int(launch::ceil_div(p.m, std::int64_t(Cfg::BM::value) * Cfg::kClusterM)),
          int(launch::ceil_div(p.n, std::int64_t(Cfg::BN::value) * Cfg::kClusterN)), kGroupM};
}

/// The K steps of `Cfg` (BK) over `p`'s K.
template <class Cfg>
int k_steps_of(const GemmProblem& p) {
  return int(launch::ceil_div(p.k, Cfg::BK::value));
}

/// The persistent scheduler's arguments for whole tiles of `Cfg` over `p`.
template <class Cfg>
PersistentTileScheduler::Params whole_tiles(const GemmProblem& p) {
  return PersistentTileScheduler::to_underlying_arguments(tile_order<Cfg>(p), k_steps_of<Cfg>(p));
}

/// Split-K with the fixup in the kernel (chapter 11's split_k and swap_ab): units of (tile, K slice),
/// slice-major; slices 0 .. S-2 leave their fp32 partial sums in the workspace and count themselves
/// in, the last slice waits for them, adds them in slice order (bit-identical run to run) and stores
/// C. NAcc: the accumulators of one consumer thread (a slot's size).
template <int NAcc>
struct SplitKScheduler {
  /// The schedule and its workspace.
  struct Params {
    SplitKTileScheduler units;  ///< the tiles, their slices, the order
    SplitKFixup<NAcc> fixup;    ///< the workspace: partial sums and a counter per (tile, warpgroup)
  };
  Params params;          ///< the schedule
  std::int64_t current;  ///< the block's current unit
  std::int64_t stride;   ///< blocks of the grid

  /// Block `block` of a grid of `blocks`.
  MM_HD SplitKScheduler(const Params& p, int block, int blocks) : params(p), current(block), stride(blocks) {}
  /// `units` (SplitKTileScheduler::make); the workspace is given later (workspace_bytes, then
  /// initialize_workspace) when the tiles are split.
  static Params to_underlying_arguments(const SplitKTileScheduler& units) { return {units, {}}; }
  /// Units of work the grid can share.
  static std::int64_t units(const Params& p) { return p.units.size(); }
  /// Bytes of workspace: slots for slices 0 .. S-2 of every tile, then a counter per (tile, warpgroup).
  /// `cluster_size`: blocks per cluster, when the units are cluster tiles (block_work: each block's
  /// tile its own slots).
  static std::size_t workspace_bytes(const Params& p, int consumers, int cluster_size = 1) {
    if (p.units.splits <= 1) return 0;
    const std::int64_t tiles = p.units.tiles.size() * cluster_size;
    return std::size_t(SplitKFixup<NAcc>::partial_bytes(p.units.splits, tiles, consumers)) +
           std::size_t(tiles) * consumers * sizeof(int);
  }
  /// Points the fixup at `workspace` (workspace_bytes of it, the counters' part zeroed by the caller:
  /// counter_offset says where it starts).
  static void initialize_workspace(Params& p, void* workspace, int consumers, int cluster_size = 1) {
    if (p.units.splits <= 1) return;
    p.fixup.partials = static_cast<float*>(workspace);
    p.fixup.counters = reinterpret_cast<int*>(static_cast<char*>(workspace) + counter_offset(p, consumers, cluster_size));
    p.fixup.tiles = p.units.tiles.size() * cluster_size;
    p.fixup.consumers = consumers;
  }
  /// Where the counters start in the workspace (they must be zero before the first launch; each
  /// launch leaves them at zero).
  static std::size_t counter_offset(const Params& p, int consumers, int cluster_size = 1) {
    return std::size_t(SplitKFixup<NAcc>::partial_bytes(p.units.splits, p.units.tiles.size() * cluster_size, consumers));
  }

  /// The block's current unit: a tile's K slice.
  MM_HD WorkTileInfo get_current_work() const {
    WorkTileInfo w;
    w.valid = current < params.units.size();
    if (w.valid) static_cast<WorkUnit&>(w) = params.units.unit(current);
    return w;
  }
  /// The next unit `count` steps on.
  MM_HD WorkTileInfo advance_to_next_work(int count = 1) {
    current += stride * count;
    return get_current_work();
  }
  /// Consumer warpgroup `cw` (thread `t`), after the main loop of `work`: a slice before the last
  /// leaves its partial sum and signals; the last slice waits for the others and adds them.
  template <class Accumulators>
  MM_HD void fixup(const WorkTileInfo& work, Accumulators& acc, int cw, int t, WatchdogState& watchdog) const {
    static_assert(decltype(acc.size())::value == NAcc, "a slot holds one consumer thread's accumulators");
    if (params.units.splits == 1) return;
    const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
    if (work.split < params.units.splits - 1) {
      store_partial(acc, params.fixup.slot(work.split, work.tile_index, cw), t);
#if defined(__CUDA_ARCH__)
      __threadfence();  // this thread's partial, visible to the GPU ...
#endif
      named_barrier_sync(bar_id, 128);  // ... and the whole warpgroup's, before it is counted in
      if (t == 0) signal_partial(params.fixup.counter(work.tile_index, cw));
      return;
    }
    if (t == 0) wait_partials(params.fixup.counter(work.tile_index, cw), params.units.splits - 1, watchdog, work.tile_index);
    named_barrier_sync(bar_id, 128);  // thread 0 has seen every slice counted in
    for (int s = 0; s < params.units.splits - 1; ++s) add_partial(acc, params.fixup.slot(s, work.tile_index, cw), t);
  }
  /// Only the last slice of a tile stores C.
  MM_HD bool compute_epilogue(const WorkTileInfo& work) const { return work.split == params.units.splits - 1; }
};

/// The arguments of `Scheduler` for the tiles of `Cfg` over `p`, what a step's preparation sets as
/// its scheduler: whole tiles (PersistentTileScheduler), or K in `splits` slices (a SplitKScheduler;
/// SplitKTileScheduler::make clamps them to the K steps).
template <class Cfg, class Scheduler>
typename Scheduler::Params tile_schedule(const GemmProblem& p, int splits = 1) {
  if constexpr (std::is_same_v<Scheduler, PersistentTileScheduler>) {
    return whole_tiles<Cfg>(p);
  } else {
    return Scheduler::to_underlying_arguments(SplitKTileScheduler::make(tile_order<Cfg>(p), k_steps_of<Cfg>(p), splits));
  }
}

/// Stream-K (chapter 11's stream_k): a block's units are its stream-K pieces, then its whole tiles
/// (StreamKTileScheduler). A piece that ends before its tile's last K step leaves its partial sum in
/// the block's slot; the piece that holds the last K step adds the slots of the blocks before it that
/// share the tile, in block order.
template <int NAcc>
struct StreamKScheduler {
  /// The schedule and its workspace.
  struct Params {
    StreamKTileScheduler units;  ///< the tiles, the blocks' K ranges, the order
    SplitKFixup<NAcc> fixup;     ///< a slot and a counter per (block, warpgroup)
  };
  Params params;    ///< the schedule
  int block;        ///< this block
  int current = 0;  ///< the block's unit
  int n_units;      ///< the block's units: its pieces, then its whole tiles

  /// Block `b` (the grid is the schedule's blocks).
  MM_HD StreamKScheduler(const Params& p, int b, int) : params(p), block(b), n_units(p.units.units(b)) {}
  /// The arguments of the schedule `units` (StreamKTileScheduler::make); the workspace comes later.
  static Params to_underlying_arguments(const StreamKTileScheduler& units) { return {units, {}}; }
  /// The grid is one block per StreamKTileScheduler block, all resident at once.
  static std::int64_t units(const Params& p) { return p.units.blocks; }
  /// Bytes of workspace: a slot and a counter per (block, warpgroup), when some tiles are shared.
  /// `cluster_size`: 1. Stream-K's slots are its schedule's blocks, each its own K range, so it runs
  /// without clusters (std::logic_error otherwise, before anything is launched).
  static std::size_t workspace_bytes(const Params& p, int consumers, int cluster_size = 1) {
    if (cluster_size != 1) throw std::logic_error("stream-K runs without clusters: its partial sums are a block's, not a tile's");
    if (p.units.sk_tiles == 0) return 0;
    return std::size_t(SplitKFixup<NAcc>::partial_bytes(2, p.units.blocks, consumers)) +
           std::size_t(p.units.blocks) * consumers * sizeof(int);
  }
  /// Where the counters start in the workspace.
  static std::size_t counter_offset(const Params& p, int consumers, int = 1) {
    return std::size_t(SplitKFixup<NAcc>::partial_bytes(2, p.units.blocks, consumers));
  }
  /// Points the fixup at `workspace` (workspace_bytes of it, its counters zeroed by the caller).
  static void initialize_workspace(Params& p, void* workspace, int consumers, int = 1) {
    if (p.units.sk_tiles == 0) return;
    p.fixup.partials = static_cast<float*>(workspace);
    p.fixup.counters = reinterpret_cast<int*>(static_cast<char*>(workspace) + counter_offset(p, consumers));
    p.fixup.tiles = p.units.blocks;  // a slot per block
    p.fixup.consumers = consumers;
  }

  /// The block's current unit: a piece of a shared tile, or a whole tile.
  MM_HD WorkTileInfo get_current_work() const {
    WorkTileInfo w;
    w.valid = current < n_units;
    if (w.valid) static_cast<WorkUnit&>(w) = params.units.unit(block, current);
    return w;
  }
  /// The block's next unit, `count` on.
  MM_HD WorkTileInfo advance_to_next_work(int count = 1) {
    current += count;
    return get_current_work();
  }
  /// Consumer warpgroup `cw` (thread `t`), after the main loop of `work`: a piece that ends before its
  /// tile's last K step leaves its partial sum in the block's slot; the finisher adds the others'.
  template <class Accumulators>
  MM_HD void fixup(const WorkTileInfo& work, Accumulators& acc, int cw, int t, WatchdogState& watchdog) const {
    static_assert(decltype(acc.size())::value == NAcc, "a slot holds one consumer thread's accumulators");
    const int bar_id = 1 + cw;
    if (work.k_end < params.units.k_steps) {  // a piece that leaves a partial sum: the block's slot
      store_partial(acc, params.fixup.slot(0, block, cw), t);
#if defined(__CUDA_ARCH__)
      __threadfence();
#endif
      named_barrier_sync(bar_id, 128);
      if (t == 0) signal_partial(params.fixup.counter(block, cw));
      return;
    }
    if (work.k_begin > 0) {  // the finisher of a shared tile: the blocks before it, in order
      const int first = params.units.contributors_begin(block, work.tile_index);
      for (int c = first; c < block; ++c)
        if (t == 0) wait_partials(params.fixup.counter(c, cw), 1, watchdog, work.tile_index);
      named_barrier_sync(bar_id, 128);  // thread 0 has seen every partial counted in
      for (int c = first; c < block; ++c) add_partial(acc, params.fixup.slot(0, c, cw), t);
    }
  }
  /// The unit that holds a tile's last K step stores it.
  MM_HD bool compute_epilogue(const WorkTileInfo& work) const { return work.k_end == params.units.k_steps; }
};

/// Split-K with the slices added by a second kernel (gemm/reduce_split_k.cuh): every slice stores its
/// fp32 partial C, row-major M×N, at workspace + slice·M·N; the epilogue runs only when K is not split.
template <int NAcc, class Atom>
struct SplitKReduceScheduler {
  /// The schedule and where the slices' partial C go.
  struct Params {
    SplitKTileScheduler units;  ///< the tiles, their slices, the order
    float* workspace;  ///< splits × M × N fp32
    int m;             ///< C's rows
    int n;             ///< C's columns
    int tile_m;        ///< rows of the tile (a warpgroup's rows start at tile_m·tile + 64·cw)
    int tile_n;        ///< columns of the tile
  };
  Params params;          ///< the schedule
  std::int64_t current;  ///< the block's current unit
  std::int64_t stride;   ///< blocks of the grid

  /// Block `block` of a grid of `blocks`.
  MM_HD SplitKReduceScheduler(const Params& p, int block, int blocks) : params(p), current(block), stride(blocks) {}
  /// Units of work the grid can share.
  static std::int64_t units(const Params& p) { return p.units.size(); }
  /// The block's current unit: a tile's K slice.
  MM_HD WorkTileInfo get_current_work() const {
    WorkTileInfo w;
    w.valid = current < params.units.size();
    if (w.valid) static_cast<WorkUnit&>(w) = params.units.unit(current);
    return w;
  }
  /// The next unit `count` steps on.
  MM_HD WorkTileInfo advance_to_next_work(int count = 1) {
    current += stride * count;
    return get_current_work();
  }
  /// With K split, every slice stores its fp32 partial C into its slice of the workspace.
  template <class Accumulators>
  MM_HD void fixup(const WorkTileInfo& work, Accumulators& accum, int cw, int t, WatchdogState&) const {
    static_assert(decltype(size<1>(accum.layout()))::value == 1, "a consumer of 64 rows (the cooperative kernel)");
    if (params.units.splits == 1) return;
    float* slice = params.workspace + std::int64_t(work.split) * params.m * params.n;
    store_accumulators_strided<Atom>(flatten(accum(_, 0, 0)), slice, params.n, 1, work.tile.m * params.tile_m + 64 * cw,
                                     work.tile.n * params.tile_n, params.m, params.n, t);
  }
  /// C is stored by the kernel only when K is not split (else by the second kernel).
  MM_HD bool compute_epilogue(const WorkTileInfo&) const { return params.units.splits == 1; }
};

}  // namespace mm
