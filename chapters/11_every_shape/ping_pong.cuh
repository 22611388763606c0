// Chapter 11, appendix: ping_pong. tile_shapes' kernel with the two consumer warpgroups on different
// tiles, taking turns on the tensor cores, so that one's epilogue runs under the other's main loop.
// Measured on the H200, it is slower than tile_shapes at every shape with many tiles (the page's
// "Tried: ping-pong consumers"): a tile per consumer is half a 128×256 tile, and the operand bytes per
// flop that costs outweigh the epilogue it hides.
//
// In tile_shapes (CUTLASS calls it "cooperative") both consumers share each 128×256 tile, 64 rows
// each: they finish its main loop together, then both write C while the tensor cores wait, and only
// then start the next tile. At 4096³ a tile's main loop is 64 K steps and its epilogue stores 64 KB
// through shared memory: a few percent of the SM's time with no wgmma in flight. Here (CUTLASS's
// "ping-pong") each consumer owns a whole tile, the block's tiles alternating between them, and a
// pair of named barriers passes the turn: consumer 0 runs its main loop, hands the tensor cores to
// consumer 1 (bar.arrive), and stores its C while consumer 1 multiplies; then it waits (bar.sync)
// for the turn to come back.
//
//   block's tiles  i0        i1        i2        i3
//   consumer 0     [ main ]--[ C ]     [ main ]--[ C ]
//   consumer 1               [ main ]--[ C ]     [ main ]--[ C ]
//
// What changes from tile_shapes.cuh is the kernel's schedule, GemmKernelPingpong (gemm/kernel_sm90.hpp),
// all in the consumers: a tile per consumer (every other unit of the block's scheduler), both of its
// 64-row halves multiplied by the one warpgroup (two wgmma per K slice: CollectiveMma::mma with
// Rows = 2); each stage is released by one warpgroup, not two; a consumer skips the stages of the
// other's tile (PipelineState::advance); the turn barriers around the main loop. The producer is
// unchanged: it loads the block's tiles in order, and the ring's stages alternate owners tile by tile.
// The main loop, the epilogue and the scheduler are tile_shapes'.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel ping_pong   (configured with -DMM_APPENDIX_STEPS=ON)
#pragma once

#include "11_every_shape/tile_shapes.cuh"

namespace mm::ch11 {

/// A 128×128 tile per consumer warpgroup (the two of them hold 128×256 between them, as tile_shapes'
/// largest tile): 128 accumulators per thread, 6 stages of 32 KB.
struct PingPong128x128Cfg : Tile128x256Cfg {
  using BN = _128;
  static constexpr int kStages = 6;
};
/// A 64×256 tile per consumer: each K slice is the one wgmma 64×256 of tile_shapes' consumers; 4
/// stages of 40 KB.
struct PingPong64x256Cfg : Tile128x256Cfg {
  using BM = _64;
};

/// ping_pong's kernel: tile_shapes' blocks under the ping-pong schedule (gemm/kernel_sm90.hpp's
/// GemmKernelPingpong: a consumer per tile, the turn passed by two named barriers).
template <class Cfg>
using PingPongKernel = GemmKernelPingpong<Cfg, CollectiveMma<Cfg, bf16>, CollectiveEpilogueTma<Cfg, bf16>, PersistentTileScheduler>;

/// ping_pong with the tile given: tile_shapes' launch (rules, TMA copies, a grid of the blocks the GPU
/// holds at once, at most one per tile, at most `max_blocks` when above 0), this kernel.
template <class Cfg>
PreparedGemm prepare_ping_pong_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("ping_pong", tile_shapes_rejects(p), A, B, C);
  using Kernel = PingPongKernel<Cfg>;
  auto args = tile_arguments<Kernel>(p, A, B, C);
  args.scheduler = whole_tiles<Cfg>(p);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("ping_pong " + tile_name<Cfg>());
}

/// The step: 128×128 tiles per consumer.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ping_pong(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  return prepare_ping_pong_with<PingPong128x128Cfg>(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
