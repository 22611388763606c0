// Chapter 11, step 3: stream_k. split_k's kernel with the work cut evenly across the blocks instead
// of evenly across each tile's K.
//
// split_k fixes the case of too few tiles by cutting every tile into S slices; it cannot help a
// problem with many tiles that do not make whole rounds: at 6000³, 1128 tiles of 128×256 make 8.55
// rounds of 132 SMs, the ninth with 72 tiles while 60 SMs idle (5% of the time). Stream-K (Osama et
// al., PPoPP 2023; CUTLASS's stream-K tile scheduler) leaves the whole rounds as they are and spreads
// the K steps of the remaining tiles evenly over all blocks: each block multiplies 72/132 of a tile's K
// steps, which may end in one tile and go on in the next (gemm/tile_scheduler.hpp's
// StreamKTileScheduler: the pieces run in an order that keeps the blocks at the same K steps, for L2).
// A tile whose K steps are shared comes out of the piece that holds its last K step (the finisher),
// after it has added the partial sums of the pieces that other blocks multiplied; a block leaves at
// most one partial sum (its first piece), so the workspace is a slot per block, and the finisher adds
// the slots of the blocks before it in block order: C is bit-identical run to run (tests/ch11 checks
// it), no atomics on the data.
//
// The tile no longer needs to fit the rounds, so it is always the most efficient one, 128×256; and
// fewer tiles than SMs (1024³: 32 tiles) are spread the same way, over all the SMs.
//
// What changes from split_k is again the scheduler alone: StreamKScheduler (gemm/tile_scheduler_sm90.hpp)
// hands each block its pieces, then its whole tiles, and its fixup leaves a piece's partial sum in the
// block's slot or, in the finisher, adds the slots of the blocks before it.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel stream_k
#pragma once

#include "11_every_shape/split_k.cuh"

namespace mm::ch11 {

/// stream_k's kernel: tile_shapes' with the stream-K scheduler.
template <class Cfg>
using StreamKKernel = TileKernel<Cfg, StreamKScheduler<Cfg::BN::value / 2>>;

/// stream_k's rule: tile_shapes'.
inline std::string stream_k_rejects(const GemmProblem& p) { return tile_shapes_rejects(p); }

/// stream_k's preparation with the tile given: the grid of stream_k_blocks (at most `max_blocks` when
/// above 0), the schedule of StreamKTileScheduler::make, the workspace (a slot and a zeroed counter
/// per block) allocated here, once per problem, when some tiles are shared.
template <class Cfg>
PreparedGemm prepare_stream_k_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("stream_k", stream_k_rejects(p), A, B, C);
  using Kernel = StreamKKernel<Cfg>;
  const GroupedTileScheduler tiles = tile_order<Cfg>(p);
  const int k_steps = k_steps_of<Cfg>(p);
  int resident = GemmAdapter<Kernel>::max_active_blocks();
  if (max_blocks > 0) resident = std::min(resident, max_blocks);
  const int blocks = stream_k_blocks(tiles.size(), k_steps, resident);
  const StreamKTileScheduler units = StreamKTileScheduler::make(tiles, k_steps, blocks);
  auto args = tile_arguments<Kernel>(p, A, B, C);
  args.scheduler = Kernel::Scheduler::to_underlying_arguments(units);  // the grid: one block per schedule block
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);  // a slot and a zeroed counter per block, when some tiles are shared
  return gemm.prepared("stream_k " + tile_name<Cfg>() + (units.sk_tiles > 0 ? " shared" : " whole"));
}

/// The step: 128×256 tiles, the last round's spread over every block.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_stream_k(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  return prepare_stream_k_with<Tile128x256Cfg>(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
