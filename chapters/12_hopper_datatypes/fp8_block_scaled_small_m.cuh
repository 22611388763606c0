// Chapter 12, step 4: fp8_block_scaled_small_m. fp8_block_scaled for the few-row problems of a
// model's decode and small batches (DeepSeek-V3's M = 64 and 128 against N = 2112-7168, K up to
// 16384), where its 128×256 tiles leave the GPU idle.
//
// At M = 64 and N = 7168 fp8_block_scaled has N / 256 = 28 tiles for 132 SMs, each walking all of K,
// and each half empty: the wgmma multiply 128 rows where 64 exist. Two blocks of chapter 11 fix the
// two, without a line of new device code:
//
//   split K        chapter 11's SplitKScheduler (gemm/tile_scheduler_sm90.hpp): K in slices of whole
//                  K blocks, one unit of work per (tile, slice), the fp32 partial sums added by each
//                  tile's last slice. The promotion makes this natural: each K block is scaled and
//                  added on its own, so a slice of K blocks is a sum like any other. The rule is
//                  chapter 11's (choose_splits): split only when the tiles fill less than half the
//                  GPU, as many slices as bring the units to one per SM, with at least
//                  kFp8MinKBlocksPerSlice K blocks in each.
//   64-row tiles   KernelConfig<64, 256, 128, 5>: one consumer warpgroup (DeepGEMM's BLOCK_M 64),
//                  and a fifth stage in the shared memory the second consumer's rows freed. At
//                  M <= 64 half the wgmma of a 128-row tile; at M = 128 twice the tiles, so fewer
//                  slices. With one consumer there is no other warpgroup to cover the promotion, so
//                  the turns are off, and it is used only where the 128-row tiles leave half the
//                  GPU idle. Narrower still, 64×128 tiles make twice as many units again, where
//                  more slices would make each too short.
//   128×128 tiles  the narrow tile with fp8_block_scaled's two consumers taking turns, where M > 64
//                  and they make as many units as 64×128 tiles: B read once for both 64-row halves,
//                  and each consumer's promotion covered by the other's wgmma.
//
// The main loop and the epilogue are fp8_block_scaled's (CollectiveMmaBlockScaled with A's scales by
// TMA, B's in registers); what changes is the scheduler and the tile. Where the tiles
// fill the GPU alone (M = 4096, or N large and K short) it is fp8_block_scaled itself. M % 4 != 0 (TMA
// cannot read scale_a's rows): the same choice with the main loop's LDG scales.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled_small_m
#pragma once

#include <string>

#include "11_every_shape/step_rules.hpp"  // choose_splits, check_step
#include "12_hopper_datatypes/fp8_block_scaled.cuh"

namespace mm::ch12 {

/// fp8_block_scaled_small_m's tile for M <= 64: 64×256, one consumer warpgroup, 5 stages of 40 KB.
struct Fp8Block64Cfg : Fp8BlockScaledConfig<64, 256, 5> {};

/// Its narrow tile: 64×128 (one half, one scale block of B), twice the tiles, 8 stages of 24 KB.
struct Fp8Block64x128Cfg : Fp8BlockScaledConfig<64, 128, 8> {};

/// The narrow tile with two consumers, for M > 64: 128×128, fp8_block_scaled's turns between the two
/// 64-row halves, 5 stages of 32.5 KB.
struct Fp8Block128x128Cfg : Fp8BlockScaledConfig<128, 128, 5> {};

/// K blocks a slice keeps at least (choose_splits' min_k_steps for K steps of 128). Measured at the
/// suite's M = 64 and 128 rows with the slices forced (2026-11-29h call 2): 4 K blocks a slice ran at
/// 57-61% of cuBLASLt where 8-14 ran at 70-78%, and past one unit per SM a second round costs more
/// than the longer slices.
inline constexpr int kFp8MinKBlocksPerSlice = 12;

/// What fp8_block_scaled_small_m runs: the tile and the K slices (1: whole tiles).
struct Fp8SmallMPlan {
  int bm = 0;      ///< rows of the tile: 64 or 128
  int bn = 256;    ///< columns of the tile: 256 or 128
  int splits = 0;  ///< K slices per tile
};

/// K blocks a slice of a 64×128 tile keeps at least (the narrow-first rule; call 10's forced plans: two
/// slices of 28 K blocks ran 104.6-111.9% of cuBLASLt at the suite's K = 7168 rows, four of 64×256
/// 91.5-95.5%).
inline constexpr int kFp8MinKBlocksPerNarrowSlice = 24;

/// The choice, on the host. Where the 128×256 tiles fill at least half the GPU (and M > 64): whole
/// 128×256 tiles, fp8_block_scaled itself. Where 64×256 tiles do: those, whole. Otherwise the narrow
/// tile, 64×128 (twice the tiles), with K split by chapter 11's rule at slices of at least 24 K
/// blocks; but for M > 64, 128×128 tiles (two consumers) where they make as many units with slices of
/// the same rule. `narrow` false (TMA cannot read A's scales: M % 4 != 0): 64×256 with 12 K blocks a
/// slice instead. Measured with the plans forced (2026-11-29h calls 3, 9, 10; 2026-11-29i call 2):
/// 64-row tiles won at every row the 128×256 tiles leave half the GPU idle, M = 128 included, and lost
/// where they do not; 64×128 won at the K = 2048 rows whole (105% against 78-83%) and at the K = 7168
/// rows in two slices (104.6-111.9% against 64×256's 91.5-95.5% in four); 128×128 in two slices won
/// at 128×7168×16384 (95.5-96.3% against 64×128 whole's 86.4-86.9%) and lost where it makes fewer
/// units than 64×128 (84-85% against 110% at 128×4096×7168, two slices each).
inline Fp8SmallMPlan choose_fp8_small_m(const GemmProblem& p, int sms, bool narrow = true) {
  const auto tiles_of = [&](int bm, int bn) {
    return launch::ceil_div(p.m, std::int64_t(bm)) * launch::ceil_div(p.n, std::int64_t(bn));
  };
  if (p.m > 64 && 2 * tiles_of(128, 256) >= sms) return {128, 256, 1};
  if (2 * tiles_of(64, 256) >= sms) return {64, 256, 1};
  const int k_blocks = int(launch::ceil_div(p.k, std::int64_t(kScaleBlock)));
  if (narrow) {
    const int thin = ch11::choose_splits(tiles_of(64, 128), k_blocks, sms, kFp8MinKBlocksPerNarrowSlice);
    const int pair = ch11::choose_splits(tiles_of(128, 128), k_blocks, sms, kFp8MinKBlocksPerNarrowSlice);
    if (p.m > 64 && tiles_of(128, 128) * pair >= tiles_of(64, 128) * thin) return {128, 128, pair};
    return {64, 128, thin};
  }
  return {64, 256, ch11::choose_splits(tiles_of(64, 256), k_blocks, sms, kFp8MinKBlocksPerSlice)};
}

/// The split-K kernel of a 64-row tile: fp8_block_scaled's main loop with A's scales by TMA (kTma)
/// or by LDG, one consumer (no turns), chapter 11's scheduler. (128×256 tiles with K split were
/// measured with the plans forced, 2026-11-29h call 3, and lost to these wherever the rule splits; the
/// rule never picks them, so they are not built. The narrow tiles are built with TMA's scales only: for
/// M % 4 != 0 the step runs 64×256 instead.)
template <class Cfg, bool kTma>
using Fp8Block64SplitKKernel =
    Fp8BlockKernel<Cfg, CollectiveMmaBlockScaled<Cfg, true, kTma, kTma, WarpgroupTurns::none>, Fp8BlockSplitK<Cfg>>;

/// The split-K kernel of the 128×128 tile: fp8_block_scaled's main loop with A's scales by TMA and its
/// turns, chapter 11's scheduler.
using Fp8Block128x128SplitKKernel =
    Fp8BlockKernel<Fp8Block128x128Cfg,
                   CollectiveMmaBlockScaled<Fp8Block128x128Cfg, true, true, true, WarpgroupTurns::per_half>,
                   Fp8BlockSplitK<Fp8Block128x128Cfg>>;

/// fp8_block_scaled_small_m (issue 35's small-M path): `plan` as choose_fp8_small_m says unless given
/// (64×256, 64×128 or 128×128 with plan.splits >= 1, or 128×256 with 1). The path names the tile and the slices
/// ("fp8_block_scaled_small_m 64x256 x4"); the 128-row plan is fp8_block_scaled itself, and its path
/// says so ("fp8_block_scaled"). The rules and errors of prepare_fp8_block_scaled_kernel, and
/// std::invalid_argument for a plan it does not build.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_block_scaled_small_m(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                     int max_blocks = 0, Fp8SmallMPlan plan = {}) {
  const char* name = "fp8_block_scaled_small_m";
  const bool chosen = plan.bm == 0;
  const bool built = (plan.bm == 64 && (plan.bn == 256 || plan.bn == 128) && plan.splits >= 1) ||
                     (plan.bm == 128 && plan.bn == 256 && plan.splits == 1) ||
                     (plan.bm == 128 && plan.bn == 128 && plan.splits >= 1);
  if (!chosen && !built)
    throw std::invalid_argument(std::string(name) + ": plans are 64×256 or 64×128 tiles in 1 or more K slices, 128×128 " +
                                "in 1 or more, or whole 128×256 tiles; not " + std::to_string(plan.bm) + "×" + std::to_string(plan.bn) + " in " +
                                std::to_string(plan.splits) + " slices");
  // Everything that refuses the problem before the choice asks the GPU for its SM count.
  ch11::check_step(name, fp8_block_scaled_refuses(p), A, B, C);
  const bool tma = CollectiveMmaBlockScaledTmaBase<Fp8Block64Cfg>::tma_scales_rejects(p).empty();
  if (chosen) plan = choose_fp8_small_m(p, device_sm_count(), tma);
  if (plan.bn == 128 && !tma) plan = {64, 256, plan.splits};  // a forced narrow plan: built with TMA's scales only
  if (plan.bm == 128 && plan.bn == 128)
    return prepare_fp8_block_scaled_kernel<Fp8Block128x128Cfg, Fp8Block128x128SplitKKernel>(
        p, A, B, C, max_blocks, std::string(name) + " 128x128 x" + std::to_string(plan.splits), plan.splits);
  if (plan.bm == 128) return prepare_fp8_block_scaled(p, A, B, C, max_blocks);  // its path: "fp8_block_scaled"
  const std::string path = std::string(name) + " 64x" + std::to_string(plan.bn) + " x" + std::to_string(plan.splits);
  if (plan.bn == 128)
    return prepare_fp8_block_scaled_kernel<Fp8Block64x128Cfg, Fp8Block64SplitKKernel<Fp8Block64x128Cfg, true>>(
        p, A, B, C, max_blocks, path, plan.splits);
  if (tma)
    return prepare_fp8_block_scaled_kernel<Fp8Block64Cfg, Fp8Block64SplitKKernel<Fp8Block64Cfg, true>>(p, A, B, C, max_blocks,
                                                                                                       path, plan.splits);
  return prepare_fp8_block_scaled_kernel<Fp8Block64Cfg, Fp8Block64SplitKKernel<Fp8Block64Cfg, false>>(p, A, B, C, max_blocks,
                                                                                                      path, plan.splits);
}

}  // namespace mm::ch12
