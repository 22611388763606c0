// Chapter 12, appendix (a measured dead end): fp8_block_scaled_cluster and fp8_per_tensor_cluster.
// Steps 4 and 5 (the small-M rules and their tiles) with each tile's blocks in clusters of two that
// share one operand by TMA multicast (DeepGEMM's measure 3; chapter 10's cluster_multicast wrote it
// out for bf16).
//
// Every block of a tile row reads the same panel of A, every block of a tile column the same panel
// of B. Through L2 each reads its own copy: at 128 × 7168 × 16384, 112 blocks read A's slices, 320 MB
// through L2 where cuBLASLt's clusters of 4 read 221 MB. In a cluster, neighbours share: each block
// loads half of the shared operand's boxes and the TMA multicast writes them into both blocks' shared
// memory; each stage's full barrier still expects the whole tile (gemm/collective_mma_sm90.hpp's
// copy_operands), and a stage is refilled only once the consumers of both blocks have released it
// (gemm/pipeline.hpp's arrival counts).
//
//   tile           cluster   shared   where (the small-M rules' plans)
//   64×N, 128×128  1 × 2     A        few rows: the tiles of one row of C, side by side along N
//   128×256        2 × 1     B        the 128-row tiles of fp8_block_scaled and fp8_per_tensor
//
// The composition changes nothing but the configuration: Clustered<Cfg, 1, 2> (gemm/kernel_sm90.hpp)
// adds kClusterM = 1, kClusterN = 2 to a step's Cfg. The kernel (gemm/kernel_sm90.hpp) meets its peers before and after,
// the scheduler hands a cluster its units (gemm/tile_scheduler_sm90.hpp's block_work: each block a
// tile of the cluster tile, a tile past C's edge loaded as zeros and dropped at the store), the adapter
// launches whole clusters. Where TMA cannot read A's scales (M % 4 != 0) the block-scaled step runs
// step 4 unchanged.
//
// Measured (the page's appendix): slower than steps 4 and 5 at nearly every row of issue 35's suite
// (geometric means 101.9% -> 95.9% block-scaled, 95.2% -> 86.8% per-tensor); the TMA's reads from L2 fell
// by 14 MB of the 56 predicted at 128 × 7168 × 16384, and the time did not follow: L2 is not what bounds
// these rows.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled_cluster
#pragma once

#include <string>

#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"
#include "12_hopper_datatypes/fp8_per_tensor_small_m.cuh"

namespace mm::ch12 {

/// The cluster shape of a plan's tile: 2 × 1 (B shared) for the 128×256 tiles, 1 × 2 (A shared) for
/// the narrow ones, whose tiles lie side by side along one row of C.
inline std::string cluster_name(const Fp8SmallMPlan& plan) { return plan.bn == 256 && plan.bm == 128 ? "2x1" : "1x2"; }

/// fp8_block_scaled_cluster: step 4's plan (choose_fp8_small_m), each tile's blocks in clusters of
/// two. The path names the tile, the slices and the cluster ("fp8_block_scaled_cluster 128x128 x2
/// 1x2"); for M % 4 != 0, step 4's own path. The rules and errors of prepare_fp8_block_scaled_kernel.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_block_scaled_cluster(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                     int max_blocks = 0) {
  const char* name = "fp8_block_scaled_cluster";
  ch11::check_step(name, fp8_block_scaled_refuses(p), A, B, C);
  if (!CollectiveMmaBlockScaledTmaBase<Fp8Block64Cfg>::tma_scales_rejects(p).empty())
    return prepare_fp8_block_scaled_small_m(p, A, B, C, max_blocks);
  const Fp8SmallMPlan plan = choose_fp8_small_m(p, device_sm_count(), true);
  const std::string path = std::string(name) + " " + std::to_string(plan.bm) + "x" + std::to_string(plan.bn) + " x" +
                           std::to_string(plan.splits) + " " + cluster_name(plan);
  if (plan.bm == 128 && plan.bn == 256) {
    using Cfg = Clustered<Fp8BlockCfg, 2, 1>;
    return prepare_fp8_block_scaled_kernel<Cfg, Fp8BlockKernel<Cfg>>(p, A, B, C, max_blocks, path);
  }
  if (plan.bm == 128) {
    using Cfg = Clustered<Fp8Block128x128Cfg, 1, 2>;
    using Kernel = Fp8BlockKernel<Cfg, CollectiveMmaBlockScaled<Cfg, true, true, true, WarpgroupTurns::per_half>, Fp8BlockSplitK<Cfg>>;
    return prepare_fp8_block_scaled_kernel<Cfg, Kernel>(p, A, B, C, max_blocks, path, plan.splits);
  }
  if (plan.bn == 128) {
    using Cfg = Clustered<Fp8Block64x128Cfg, 1, 2>;
    return prepare_fp8_block_scaled_kernel<Cfg, Fp8Block64SplitKKernel<Cfg, true>>(p, A, B, C, max_blocks, path, plan.splits);
  }
  using Cfg = Clustered<Fp8Block64Cfg, 1, 2>;
  return prepare_fp8_block_scaled_kernel<Cfg, Fp8Block64SplitKKernel<Cfg, true>>(p, A, B, C, max_blocks, path, plan.splits);
}

/// fp8_per_tensor_cluster: step 5's plan (choose_fp8_per_tensor_small_m), each tile's blocks in
/// clusters of two; the path as fp8_block_scaled_cluster's. The rules and errors of
/// prepare_fp8_per_tensor.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_per_tensor_cluster(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                   int max_blocks = 0) {
  const char* name = "fp8_per_tensor_cluster";
  ch11::check_step(name, fp8_per_tensor_refuses(p), A, B, C);
  const Fp8SmallMPlan plan = choose_fp8_per_tensor_small_m(p, device_sm_count());
  const std::string path = std::string(name) + " " + std::to_string(plan.bm) + "x" + std::to_string(plan.bn) + " x" +
                           std::to_string(plan.splits) + " " + cluster_name(plan);
  if (plan.bm == 128) {
    using Cfg = Clustered<Fp8Cfg, 2, 1>;
    return prepare_fp8_per_tensor<Cfg, Fp8Kernel<Cfg>>(p, A, B, C, max_blocks, path);
  }
  if (plan.bn == 64) {
    using Cfg = Clustered<Fp8Tensor64x64Cfg, 1, 2>;
    return prepare_fp8_per_tensor<Cfg, Fp8SplitKKernel<Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  }
  if (plan.bn == 128) {
    using Cfg = Clustered<Fp8Block64x128Cfg, 1, 2>;
    return prepare_fp8_per_tensor<Cfg, Fp8SplitKKernel<Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
  }
  using Cfg = Clustered<Fp8Block64Cfg, 1, 2>;
  return prepare_fp8_per_tensor<Cfg, Fp8SplitKKernel<Cfg>>(p, A, B, C, max_blocks, path, plan.splits);
}

}  // namespace mm::ch12
