// Chapter 12, a measured variant of step 3 (appendix): fp8_block_scaled_stream_k. fp8_block_scaled
// where its tiles do not make whole rounds of the GPU: the last round's K blocks spread over every
// block (chapter 11's stream-K).
//
// At M = 4096 and N = 2112 (DeepSeek-V3's q_a/kv_a projection, K = 7168), 128×256 tiles make 32 × 9 =
// 288 tiles: two whole rounds of 132 SMs and a third of 24 tiles, during which 108 SMs idle. The
// kernel takes 3 tiles' time where the work is 2.18. Splitting every tile's K (measured, 2026-11-29h
// call 6) made it slower: at a full GPU every tile pays for its partial sums. Stream-K
// (gemm/tile_scheduler.hpp's StreamKTileScheduler, chapter 11's step 3) leaves the two whole rounds
// whole and cuts only the last round's 24 × 56 K blocks evenly over the 132 blocks, about 10 each: 2.2
// tiles' time and 24 tiles' partial sums. Each K block is promoted on its own, so a piece of K blocks
// is a sum like any other, as for split K. Where the rounds are whole or nearly (4096³: 3.9 rounds;
// the schedule's rule shares only where the busiest block's K steps drop by an eighth) the schedule
// is whole tiles.
//
// Measured (2026-11-29i call 1, notes/issue35_plan.md): slower everywhere. The schedule's unit()
// divides 64-bit integers, which ptxas calls as subroutines (42 CALLs in the SASS against
// fp8_block_scaled's 8), and beside the consumer's 128 + 64 accumulator registers each call saves
// registers to the stack: a 24-byte frame and 42 local loads and stores (fp8_block_scaled: none).
// With whole tiles it runs at 86% of fp8_block_scaled; at 4096×2112×7168, shared, 78% of cuBLASLt
// against fp8_block_scaled's 82%.
//
// What changes from fp8_block_scaled is the scheduler alone: StreamKScheduler, and its workspace.
//
// Build: cmake -DMM_APPENDIX_STEPS=ON ... && cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled_stream_k
#pragma once

#include <algorithm>
#include <string>

#include "11_every_shape/step_rules.hpp"  // stream_k_blocks, check_step
#include "12_hopper_datatypes/fp8_block_scaled.cuh"

namespace mm::ch12 {

/// The stream-K kernel of a block-scaled tile: fp8_block_scaled's main loop (A's scales by TMA, or by
/// LDG when `kTma` is false) and turns, chapter 11's stream-K scheduler.
template <class Cfg, bool kTma>
using Fp8BlockStreamKKernel =
    Fp8BlockKernel<Cfg, CollectiveMmaBlockScaled<Cfg, true, kTma, kTma, WarpgroupTurns::per_half>,
                   StreamKScheduler<Cfg::BN::value / 2>>;

/// fp8_block_scaled_stream_k: 128×256 tiles, the last round's K blocks spread over every block
/// (StreamKTileScheduler::make; whole tiles where that would not shorten the busiest block by an
/// eighth). Its path says which ("fp8_block_scaled_stream_k shared" or "... whole"). The rules and
/// errors of prepare_fp8_block_scaled_kernel.
template <class Cfg = Fp8BlockCfg>
PreparedGemm prepare_fp8_block_scaled_stream_k(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C, int max_blocks = 0,
                                               const char* name = "fp8_block_scaled_stream_k") {
  // Everything that refuses the problem before the schedule asks the GPU how many blocks it holds.
  ch11::check_step(name, fp8_block_scaled_refuses(p), A, B, C);
  const auto prepare = [&]<class Kernel>() {
    const GroupedTileScheduler tiles = tile_order<Cfg>(p);
    const int k_steps = k_steps_of<Cfg>(p);
    int resident = GemmAdapter<Kernel>::max_active_blocks();
    if (max_blocks > 0) resident = std::min(resident, max_blocks);
    const StreamKTileScheduler units =
        StreamKTileScheduler::make(tiles, k_steps, ch11::stream_k_blocks(tiles.size(), k_steps, resident));
    return prepare_fp8_block_scaled_kernel<Cfg, Kernel>(p, A, B, C, max_blocks,
                                                        std::string(name) + (units.sk_tiles > 0 ? " shared" : " whole"), 1, units);
  };
  if (CollectiveMmaBlockScaledTmaBase<Cfg>::tma_scales_rejects(p).empty())
    return prepare.template operator()<Fp8BlockStreamKKernel<Cfg, true>>();
  return prepare.template operator()<Fp8BlockStreamKKernel<Cfg, false>>();
}

}  // namespace mm::ch12
