// Chapter 12, step 5: fp8_per_tensor_small_m. Step 4's tiles and slices for fp8_per_tensor: the same
// few-row problems (DeepSeek-V3's M = 64 and 128 rows, a model's decode) leave fp8_per_tensor's 128×256
// tiles as idle as they left fp8_block_scaled's: at 64 × 2112 × 7168, 9 tiles for 132 SMs.
//
// The fix is step 4's, with nothing new: the same rule (choose_fp8_small_m: 128×256 tiles where they
// fill half the GPU, then 64×256, then 64×128 or 128×128 with K split by chapter 11's rule in slices
// of at least 24 K blocks), the same configs, chapter 11's SplitKScheduler. What changes from step 4 is
// the main loop and the epilogue, which are fp8_per_tensor's: CollectiveMma's K step (no promotion,
// so nothing for a second consumer to cover, but the rule's tiles are kept as measured for step 4:
// the forced plans of 2026-11-29i call 4 say how they fare here) and the per-tensor scale applied
// once, in the epilogue, after the slices' partial sums are added (a scale factors out of a sum).
// Every M takes every tile: per-tensor has no scale matrix for TMA to read.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m
#pragma once

#include <stdexcept>
#include <string>

#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"  // choose_fp8_small_m, the configs
#include "12_hopper_datatypes/fp8_per_tensor.cuh"

namespace mm::ch12 {

/// A narrower tile than block scales allow (no scale block to align to): 64×64, 12 stages of 16 KB.
struct Fp8Tensor64x64Cfg : KernelConfig<64, 64, 128, 12> {};

/// The split-K kernel of a per-tensor tile: fp8_per_tensor's main loop and epilogue, chapter 11's
/// scheduler (a slot holds one consumer thread's accumulators: BN / 2 floats).
template <class Cfg>
using Fp8SplitKKernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, e4m3>, CollectiveEpilogueTma<Cfg, bf16, EpilogueScale::per_tensor>,
                                              SplitKScheduler<Cfg::BN::value / 2>>;

/// fp8_per_tensor_small_m: `plan` as choose_fp8_small_m says unless given (64×256, 64×128 or 128×128
/// with plan.splits >= 1, or 128×256 with 1). The path names the tile and the slices
/// ("fp8_per_tensor_small_m 64x128 x2"); the 128×256 plan is fp8_per_tensor itself, and its path says
/// so. The rules and errors of prepare_fp8_per_tensor, and std::invalid_argument for a plan it does
/// not build.
inline PreparedGemm prepare_fp8_per_tensor_small_m(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                   int max_blocks = 0, Fp8SmallMPlan plan = {}) {
  const std::string name = "fp8_per_tensor_small_m";
  const bool chosen = plan.bm == 0;
  const bool built = (plan.bm == 64 && (plan.bn == 256 || plan.bn == 128 || plan.bn == 64) && plan.splits >= 1) ||
                     (plan.bm == 128 && plan.bn == 128 && plan.splits >= 1) ||
                     (plan.bm == 128 && plan.bn == 256 && plan.splits == 1);
  if (!chosen && !built)
    throw std::invalid_argument(name + ": plans are 64×256 or 64×128 tiles in 1 or more K slices, 128×128 in 1 or more, " +
                                "or whole 128×256 tiles; not " + std::to_string(plan.bm) + "×" + std::to_string(plan.bn) + " in " +
                                std::to_string(plan.splits) + " slices");
  // Everything that refuses the problem before the choice asks the GPU for its SM count.
  std::string why = fp8_per_tensor_refuses(p);
  if (why.empty()) why = launch::tma_pointer_rejects({{"A", A}, {"B", B}, {"C", C}});
  if (!why.empty()) throw std::invalid_argument(name + ": " + why);
  if (chosen) plan = choose_fp8_small_m(p, device_sm_count());
  if (plan.bm == 128 && plan.bn == 256) return prepare_fp8_per_tensor(p, A, B, C, max_blocks);  // its path: "fp8_per_tensor"
  const std::string path = name + " " + std::to_string(plan.bm) + "x" + std::to_string(plan.bn) + " x" + std::to_string(plan.splits);
  if (plan.bm == 128)
    return prepare_fp8_per_tensor<Fp8Block128x128Cfg, Fp8SplitKKernel<Fp8Block128x128Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  if (plan.bn == 64)
    return prepare_fp8_per_tensor<Fp8Tensor64x64Cfg, Fp8SplitKKernel<Fp8Tensor64x64Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  if (plan.bn == 128)
    return prepare_fp8_per_tensor<Fp8Block64x128Cfg, Fp8SplitKKernel<Fp8Block64x128Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  return prepare_fp8_per_tensor<Fp8Block64Cfg, Fp8SplitKKernel<Fp8Block64Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
}

}  // namespace mm::ch12
