// Chapter 12, step 5: fp8_per_tensor_small_m. Step 4's blocks for fp8_per_tensor: the same few-row
// problems (DeepSeek-V3's M = 64 and 128 rows, a model's decode) leave fp8_per_tensor's 128×256 tiles
// as idle as they left fp8_block_scaled's: at 64 × 2112 × 7168, 9 tiles for 132 SMs.
//
// The blocks are step 4's: 64-row tiles (one consumer) and chapter 11's SplitKScheduler, on
// fp8_per_tensor's main loop and epilogue; the per-tensor scale is applied once, in the epilogue, after
// the slices' partial sums are added (a scale factors out of a sum). The rule is its own, because two
// things that shaped step 4's are gone: there is no promotion for a second consumer to cover, and no
// 128-column scale block to align a tile to, so a tile may be 64 columns wide. The rule
// (choose_fp8_per_tensor_small_m): the narrowest 64-row tile, 64×64, 64×128 or 64×256, whose tiles fit
// in one wave of the SMs, with K split to fill the SMs (slices of at least 16 K blocks, chapter 11's
// 16 K steps of 128 bytes); where none fits, fp8_per_tensor's 128×256 tiles. Measured (2026-11-29i
// calls 4 and 8, forced plans): step 4's rule on this kernel took the suite's M <= 128 rows to 81-108%
// of cuBLASLt per-tensor; the plans this rule picks ran 86-116% at the same rows.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"  // Fp8SmallMPlan, the 64-row configs, ch11::check_step
#include "12_hopper_datatypes/fp8_per_tensor.cuh"

namespace mm::ch12 {

/// A narrower tile than block scales allow (no scale block to align to): 64×64, 12 stages of 16 KB.
struct Fp8Tensor64x64Cfg : KernelConfig<64, 64, 128, 12> {};

/// K blocks a slice keeps at least: chapter 11's 16 K steps (a K step is 128 bytes of a row in both).
/// Measured at 64 × 2112 × 7168 with 64×64 tiles forced (2026-11-29i call 8): 3 slices of 18-19 K
/// blocks 93.5-94.5% of cuBLASLt, 4 of 14 89.2-89.5%.
inline constexpr int kFp8TensorMinKBlocksPerSlice = 16;

/// The choice, on the host (see the file comment): the narrowest 64-row tile whose tiles fit in one
/// wave of `sms`, K split into as many slices as keep the units within the SMs and each slice at least
/// kFp8TensorMinKBlocksPerSlice K blocks; else fp8_per_tensor's whole 128×256 tiles.
inline Fp8SmallMPlan choose_fp8_per_tensor_small_m(const GemmProblem& p, int sms) {
  const std::int64_t k_blocks = launch::ceil_div(p.k, std::int64_t(128));
  for (int bn : {64, 128, 256}) {
    const std::int64_t tiles = launch::ceil_div(p.m, std::int64_t(64)) * launch::ceil_div(p.n, std::int64_t(bn));
    if (tiles > sms) continue;
    const std::int64_t splits = std::min<std::int64_t>(sms / tiles, k_blocks / kFp8TensorMinKBlocksPerSlice);
    return {64, bn, int(std::max<std::int64_t>(splits, 1))};
  }
  return {128, 256, 1};
}

/// The split-K kernel of a per-tensor tile: fp8_per_tensor's main loop and epilogue, chapter 11's
/// scheduler (a slot holds one consumer thread's accumulators: BN / 2 floats).
template <class Cfg>
using Fp8SplitKKernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, e4m3>, CollectiveEpilogueTma<Cfg, bf16, EpilogueScale::per_tensor>,
                                              SplitKScheduler<Cfg::BN::value / 2>>;

/// fp8_per_tensor_small_m: `plan` as choose_fp8_per_tensor_small_m says unless given (64×256, 64×128 or
/// 64×64 with plan.splits >= 1, or 128×256 with 1). The path names the tile and the slices
/// ("fp8_per_tensor_small_m 64x128 x2"); the 128×256 plan is fp8_per_tensor itself, and its path says
/// so. The rules and errors of prepare_fp8_per_tensor, and std::invalid_argument for a plan it does
/// not build.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_per_tensor_small_m(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                   int max_blocks = 0, Fp8SmallMPlan plan = {}) {
  const std::string name = "fp8_per_tensor_small_m";
  const bool chosen = plan.bm == 0;
  const bool built = (plan.bm == 64 && (plan.bn == 256 || plan.bn == 128 || plan.bn == 64) && plan.splits >= 1) ||
                     (plan.bm == 128 && plan.bn == 256 && plan.splits == 1);
  if (!chosen && !built)
    throw std::invalid_argument(name + ": plans are 64×256, 64×128 or 64×64 tiles in 1 or more K slices, or whole " +
                                "128×256 tiles; not " + std::to_string(plan.bm) + "×" + std::to_string(plan.bn) + " in " +
                                std::to_string(plan.splits) + " slices");
  // Everything that refuses the problem before the choice asks the GPU for its SM count.
  ch11::check_step(name.c_str(), fp8_per_tensor_refuses(p), A, B, C);
  if (chosen) plan = choose_fp8_per_tensor_small_m(p, device_sm_count());
  if (plan.bm == 128 && plan.bn == 256) return prepare_fp8_per_tensor(p, A, B, C, max_blocks);  // its path: "fp8_per_tensor"
  const std::string path = name + " " + std::to_string(plan.bm) + "x" + std::to_string(plan.bn) + " x" + std::to_string(plan.splits);
  if (plan.bn == 64)
    return prepare_fp8_per_tensor<Fp8Tensor64x64Cfg, Fp8SplitKKernel<Fp8Tensor64x64Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  if (plan.bn == 128)
    return prepare_fp8_per_tensor<Fp8Block64x128Cfg, Fp8SplitKKernel<Fp8Block64x128Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  return prepare_fp8_per_tensor<Fp8Block64Cfg, Fp8SplitKKernel<Fp8Block64Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
}

}  // namespace mm::ch12
