// Chapter 13, the appendix's dead end: grouped_skip_padding. grouped_contiguous's kernel, whose consumer warpgroups
// skip the 64 rows of a tile that are all padding.
//
// Each expert's rows start on a multiple of 128 (the contiguous layout, step 1), so an expert's last
// tile holds 1 to 128 of its rows and padding after them. Consumer warpgroup 1 multiplies the tile's
// rows 0-63, warpgroup 2 rows 64-127: when the expert's rows end in the first half, warpgroup 2's
// wgmma multiply padding only, and its store writes C's padding, which nobody reads. With the flag
// below the kernel (gemm/kernel_sm90.hpp, GemmKernelCooperative) asks, per tile and warpgroup,
// whether its first row is at or past the tile's `row_end` (the grouped scheduler's: one past the
// expert's last row); if so the warpgroup skips the tile's wgmma and store, and only keeps its place
// in the ring (CollectiveMma::skip: it waits for each stage and releases it at once).
//
//   GemmKernelCooperative          + the skip, under Cfg::kSkipIdleConsumers (false by default)
//   + CollectiveMma                + skip(): the ring's protocol without the wgmma
//   + CollectiveEpilogueTma        unchanged (a skipped warpgroup stores nothing)
//   + PersistentGroupTileScheduler unchanged (it already says where the expert ends)
//
// What it saves: the padding's MMA in 64-row halves instead of 128-row tiles, half of it on average.
// The tile's loads do not change (A's box stays 128 rows; the tensor cores, not the bytes, are what
// a prefill shape is bound by).
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe --kernel grouped_contiguous,grouped_skip_padding --tokens 4096
#pragma once

#include "13_grouped_moe/grouped_contiguous.cuh"

namespace mm::ch13 {

/// grouped_contiguous's tile (128×256, K steps of 64, 4 stages), its idle consumer warpgroups skipping.
struct GroupedSkipCfg : GroupedCfg {
  static constexpr bool kSkipIdleConsumers = true;  ///< a warpgroup whose 64 rows are padding skips the tile
};

}  // namespace mm::ch13
