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
// with its own height, so every tile is visited exactly once (tests/gemm/test_gemm_pieces.cpp).
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

namespace mm {

/// One unit of work of a split-K schedule: a tile of C and the K steps [k_begin, k_end) of it that
/// one block multiplies (K steps of the kernel's BK; k_begin < k_end).
struct WorkUnit {
  TileCoord tile;            ///< the tile of C
  std::int64_t tile_index;   ///< its position in the tile order (0 .. tiles - 1)
  int split;       ///< which K slice of the tile (0 .. splits - 1)
  int k_begin;     ///< first K step of the slice
  int k_end;       ///< one past its last K step
};

/// Split-K over the grouped order: each tile's K steps cut into `splits` slices of
/// `k_steps_per_split` (the last may be shorter), each slice a unit of work. CUTLASS's
/// PersistentTileSchedulerSm90StreamK does this in its DecompositionMode::SplitK (and its stream-K
/// mode cuts the units unevenly across tiles); here the cut is even and the units are ordered
/// slice-major: units 0 .. tiles-1 are slice 0 of every tile in the grouped order, then slice 1, ...
/// so that the blocks running at once share operand panels as in GroupedTileScheduler.
///
/// make() chooses the slice length so that no slice is empty: splits = ceil(k_steps / per) with
/// per = ceil(k_steps / wanted). Every (tile, K step) pair belongs to exactly one unit
/// (tests/gemm/test_gemm_pieces.cpp).
struct SplitKTileScheduler {
  GroupedTileScheduler tiles;  ///< the tiles, in grouped order
  int k_steps;                 ///< K steps of one tile (ceil(K / BK))
  int splits;                  ///< slices per tile (>= 1)
  int k_steps_per_split;       ///< K steps of every slice but maybe the last

  /// A schedule with at most `wanted` slices per tile, none of them empty (wanted >= 1, k_steps >= 1).
  MM_HD static SplitKTileScheduler make(GroupedTileScheduler tiles, int k_steps, int wanted) {
    if (wanted < 1) wanted = 1;
    if (wanted > k_steps) wanted = k_steps;
    const int per = (k_steps + wanted - 1) / wanted;
    return {tiles, k_steps, (k_steps + per - 1) / per, per};
  }
  /// Number of units: tiles × splits.
  MM_HD std::int64_t size() const { return tiles.size() * splits; }
  /// The unit at position `i` (0 <= i < size()).
  MM_HD WorkUnit unit(std::int64_t i) const {
    const std::int64_t n = tiles.size();
    const int split = int(i / n);
    const int begin = split * k_steps_per_split;
    const int end = begin + k_steps_per_split < k_steps ? begin + k_steps_per_split : k_steps;
    return {tiles.tile(i % n), i % n, split, begin, end};
  }
};

}  // namespace mm

namespace mm {

/// Stream-K over the grouped order (Osama et al., "Stream-K", PPoPP 2023; CUTLASS's
/// PersistentTileSchedulerSm90StreamK in its "data-parallel + stream-K" form): the tiles that do not
/// make a whole round of the persistent grid are not left to a few blocks while the others idle;
/// their K steps ("iterations") are laid end to end and cut into `blocks` equal ranges, one a block.
///
///   tile order:  | stream-K tiles (sk_tiles)          | data-parallel tiles                       |
///   iterations:  | t0: k0 ... | t1: k0 ... | ...       |
///   block b:     [sk_begin(b), sk_begin(b+1))         then tiles sk_tiles + b, + 2·blocks, ...
///
/// A block's range is shorter than a tile (sk_tiles < blocks) and may cross one tile boundary: its
/// units are the pieces of the tiles in its range, then its whole data-parallel tiles. The pieces run
/// in reverse: the piece of the range's last tile (its first K steps) first, the piece of its first
/// tile (that tile's last K steps) second. The blocks whose ranges cross a tile boundary (most, when a
/// range is nearly a tile long) then all start at K step 0 together, and go on at K steps that they
/// all reach together (k_steps - the range's length further): the blocks in flight read the same K
/// panels of the operands, as in a data-parallel round, and L2 keeps serving them. (Ranges walked
/// forward start at K steps spread over the whole of K: each block reads its own operand bytes, from
/// DRAM once K is large; the page measured it.)
///
/// Only a block's first piece can end before its tile's last K step, so a block leaves at most one
/// partial sum (one workspace slot per block). The piece that holds a tile's last K step is its
/// finisher: it adds the partial sums of the blocks before it whose ranges end inside that tile
/// (contributors_begin(b, t) .. b-1, in that order: deterministic) and writes C. Those blocks multiply
/// that piece first, before anything else that could wait: no deadlock while every block is resident.
///
/// sk_tiles: all tiles when there are fewer than blocks; otherwise the tiles past the last whole
/// round, tiles % blocks. None (every tile whole, the last round short) when spreading them would not
/// shorten the busiest block's K steps by at least an eighth: the partial sums and the pieces' L2
/// traffic cost more than that (the page's measurements: 4096³, 3.88 rounds of 128×256, ran 3% slower
/// shared than whole).
struct StreamKTileScheduler {
  GroupedTileScheduler tiles;  ///< the tiles, in grouped order
  int k_steps;                 ///< K steps of one tile (>= 1)
  int blocks;                  ///< blocks of the persistent grid (>= 1)
  std::int64_t sk_tiles;       ///< the first sk_tiles tiles of the order are shared by K ranges

  /// The schedule of `tiles` on `blocks` blocks, sk_tiles as the struct's comment says.
  MM_HD static StreamKTileScheduler make(GroupedTileScheduler tiles, int k_steps, int blocks) {
    const std::int64_t n = tiles.size();
    const std::int64_t sk = n < blocks ? n : n % blocks;
    const std::int64_t whole = (n + blocks - 1) / blocks * k_steps;                           // busiest block, no sharing
    const std::int64_t shared = (n - sk) / blocks * k_steps + (sk * k_steps + blocks - 1) / blocks;  // busiest, shared
    return {tiles, k_steps, blocks, 8 * shared <= 7 * whole ? sk : 0};
  }
  /// First iteration (tile · k_steps + K step) of block b's stream-K range; sk_begin(blocks) is the end.
  MM_HD std::int64_t sk_begin(int b) const {
    const std::int64_t work = sk_tiles * k_steps;
    return b * (work / blocks) + (b < work % blocks ? b : work % blocks);
  }
  /// Stream-K pieces of block b: the tiles its range touches (0 when the range is empty).
  MM_HD int pieces(int b) const {
    const std::int64_t begin = sk_begin(b), end = sk_begin(b + 1);
    return begin == end ? 0 : int((end - 1) / k_steps - begin / k_steps + 1);
  }
  /// Units of block b: its stream-K pieces, then its data-parallel tiles.
  MM_HD int units(int b) const { return pieces(b) + int((tiles.size() - sk_tiles - b + blocks - 1) / blocks); }
  /// Unit j (0 <= j < units(b)) of block b. `split` is 1 for a piece that leaves a partial sum (it ends
  /// before the tile's last K step), 0 for a finisher or a whole tile.
  MM_HD WorkUnit unit(int b, int j) const {
    const int n_pieces = pieces(b);
    if (j < n_pieces) {
      const std::int64_t begin = sk_begin(b), end = sk_begin(b + 1);
      const std::int64_t first = begin / k_steps, last = (end - 1) / k_steps;
      const std::int64_t t = last - j;  // the range's last tile first
      const int k_begin = t == first ? int(begin - t * k_steps) : 0;
      const int k_end = t == last ? int(end - t * k_steps) : k_steps;
      return {tiles.tile(t), t, k_end < k_steps ? 1 : 0, k_begin, k_end};
    }
    const std::int64_t t = sk_tiles + b + std::int64_t(j - n_pieces) * blocks;
    return {tiles.tile(t), t, 0, 0, k_steps};
  }
  /// The first of the blocks before `b` whose ranges end inside stream-K tile `t` (b holds the tile's
  /// last K step): blocks contributors_begin(b, t) .. b-1 left partial sums of tile t.
  MM_HD int contributors_begin(int b, std::int64_t t) const {
    int c = b;
    while (c > 0 && sk_begin(c) > t * k_steps) --c;
    return c;
  }
};

}  // namespace mm
