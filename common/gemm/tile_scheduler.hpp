// Which output tile a persistent block computes next, in an order that keeps operands in L2.
//
// A persistent kernel launches about one block (or cluster) per SM and lets each loop over tiles:
// block b takes tiles b, b + G, b + 2G, ... of a linear order (G = the grid's blocks or clusters).
// That is correct whether or not every block is resident at once (no block waits for another), and
// the tiles running at the same moment are G consecutive ones in the order. The order decides what
// they share: row-major order runs G tiles along one row of C, which need one panel of A but G
// different panels of B; grouped order walks down `group_m` rows of tiles first, so the tiles in
// flight form a group_m × (G / group_m) block of C and read group_m panels of A and G / group_m of B.
// For G = 132 that is fewest bytes from DRAM near group_m ≈ sqrt(132 · BN / BM).
//
//   tile index:     0  group_m  2·group_m ...      (columns of the group)
//                   1  ...
//                   .
//   group_m - 1     ...                       then the next group of group_m rows below
//
// The last group may have fewer rows (tiles_m not a multiple of group_m): it is walked the same way
// with its own height, so every tile is visited exactly once (tests/layout/test_tile_scheduler.cpp).
#pragma once

#include <cstdint>

#include "layout/integer.hpp"  // MM_HD

namespace mm {

/// A tile's coordinates in the grid of tiles: row `m` (along M), column `n` (along N).
struct TileCoord {
  int m;  ///< tile row
  int n;  ///< tile column
};

/// The grouped ("swizzled") raster of a tiles_m × tiles_n grid of tiles (see the file comment).
struct GroupedTileScheduler {
  int tiles_m;  ///< tiles along M
  int tiles_n;  ///< tiles along N
  int group_m;  ///< rows of tiles walked down before moving to the next column (>= 1)

  /// Number of tiles.
  MM_HD std::int64_t size() const { return std::int64_t(tiles_m) * tiles_n; }

  /// The tile at position `i` (0 <= i < size()) of the order.
  MM_HD TileCoord tile(std::int64_t i) const {
    const std::int64_t per_group = std::int64_t(group_m) * tiles_n;  // tiles in one full group
    const int group = int(i / per_group);
    const int first_m = group * group_m;
    const int rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;  // this group's height
    const std::int64_t local = i - std::int64_t(group) * per_group;
    return {first_m + int(local % rows), int(local / rows)};
  }
};

}  // namespace mm
