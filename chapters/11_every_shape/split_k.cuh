// Chapter 11, step 2: split_k. tile_shapes with each tile's K cut into slices that different blocks
// multiply at the same time, when there are too few tiles to fill the GPU.
//
// At 1024³ the best tile still gives 64 tiles for 132 SMs; at M = 128, N = 8192 (a batch of 128
// tokens through an 8192×8192 layer) 128×128 tiles give 64, each with 128 K steps to walk alone. K is
// the one dimension left: with S slices, each (tile, slice) is a unit of work
// (gemm/tile_scheduler.hpp's SplitKTileScheduler), S × tiles units fill the SMs, and each unit walks
// 1/S of K. The price: the S partial tiles must be added. The units of slices 0 .. S-2 store their
// fp32 accumulators in a workspace and count themselves in; the unit of the last slice waits for
// them, adds their partial sums in slice order and stores C (gemm/split_k_fixup.hpp). Deterministic:
// the same sum in the same order on every run, bit for bit (tests/ch11 checks it); no atomics on
// the data. (Adding the slices in a second kernel is simpler and was measured first: its launch and
// its extra pass cost more than the split saved at 1024³; the page's appendix.)
//
// When the tiles fill the GPU on their own (choose_splits gives 1), the units are the tiles and the
// kernel does what tile_shapes does.
//
// What changes from tile_shapes is one block: the scheduler, SplitKScheduler (gemm/tile_scheduler_sm90.hpp)
// instead of PersistentTileScheduler; the main loop and the epilogue are tile_shapes'. The kernel's
// loop was already the scheduler's: for each unit, the main loop over the unit's K steps, the
// scheduler's fixup, and the epilogue when the scheduler says the unit finishes its tile.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel split_k
#pragma once

#include "11_every_shape/tile_shapes.cuh"
#include "gemm/split_k_fixup.hpp"

namespace mm::ch11 {

/// split_k's kernel: tile_shapes' with the split-K scheduler.
template <class Cfg>
using SplitKKernel = TileKernel<Cfg, SplitKScheduler<Cfg::BN::value / 2>>;

/// split_k's rule: tile_shapes' (C goes out by TMA when K is not split).
inline std::string split_k_rejects(const GemmProblem& p) { return tile_shapes_rejects(p); }

/// split_k's preparation with the tile and the number of slices given (`splits` <= 0: choose_splits).
/// The workspace is allocated here, once per problem, and freed with the returned launch. The units
/// of one launch wait for each other: the grid is never larger than what the GPU holds at once.
template <class Cfg>
PreparedGemm prepare_split_k_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int splits = 0,
                                  int max_blocks = 0) {
  check_step("split_k", split_k_rejects(p), A, B, C);
  using Kernel = SplitKKernel<Cfg>;
  const GroupedTileScheduler tiles = tile_order<Cfg>(p);
  const int k_steps = k_steps_of<Cfg>(p);
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, splits > 0 ? splits : choose_splits(tiles.size(), k_steps, device_sm_count()));
  auto args = tile_arguments<Kernel>(p, A, B, C);  // C by TMA when K is not split (the map is made either way)
  args.scheduler = Kernel::Scheduler::to_underlying_arguments(units);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);  // the fixup's workspace, once per problem (its counters are back at zero after every launch)
  return gemm.prepared("split_k " + tile_name<Cfg>() + " x" + std::to_string(units.splits));
}

/// The step: tile_shapes' tile for this problem, K split as choose_splits says.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_split_k(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("split_k", split_k_rejects(p), A, B, C);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_split_k_with<decltype(cfg)>(p, A, B, C, 0, max_blocks);
  });
}

}  // namespace mm::ch11
