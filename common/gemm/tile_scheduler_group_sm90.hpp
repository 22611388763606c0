// The tile scheduler of a grouped GEMM (CUTLASS's PersistentTileSchedulerSm90Group): the tiles of every
// group in one persistent launch, each group's found from prefix sums on the device. For a
// mixture-of-experts layer: group g is an expert, its M_g rows of A (the tokens routed to it, sorted by
// expert) times its own weight, all groups sharing N and K.
//
//   group 0: M_0 rows   tiles 0 .. T_0 - 1            T_g = ceil(M_g / BM) · ceil(N / BN)
//   group 1: M_1 rows   tiles T_0 .. T_0 + T_1 - 1    (an empty group has no tiles)
//   ...
//
// Block b of a grid of G takes tiles b, b + G, b + 2G, ... of that list, as PersistentTileScheduler
// does for one GEMM; within a group, tiles follow GroupedTileScheduler's order. The group of tile t
// is the g with T_0 + .. + T_{g-1} <= t < T_0 + .. + T_g: the block keeps a cursor (the group it is in
// and that group's first tile) that only moves forward, since its tiles only grow, so it reads each
// group's row count once over the whole launch (CUTLASS keeps the same cursor).
//
// The row counts live on the device and are read by the kernel: the host launches without knowing
// them (the router wrote them), which is what lets a CUDA graph replay the layer. Two ways to give
// them, as DeepGEMM's two grouped kernels take them:
//
//   contiguous  offsets[0..E]: group g's rows are offsets[g] .. offsets[g+1] - 1 of A and C (prefill:
//               the routed tokens sorted by expert, back to back). With a row alignment (DeepGEMM's
//               "psum" layout) offsets[g + 1] is where group g ends and it starts at
//               align_up(offsets[g], alignment): each group's first row on a tile's edge, so that
//               no tile holds two groups' rows (the rows between are padding the caller leaves)
//   masked      counts[0..E-1] and a capacity: group g's rows are g·capacity .. g·capacity + counts[g] - 1
//               (decode: a fixed buffer per expert, a count per expert)
//
// What a unit tells the kernel beyond PersistentTileScheduler's: the group (whose weight B_g to read),
// the first row of the tile in A and C, and the group's last row (so that neither the main loop's
// loads nor the epilogue's stores cross into the next group's rows).
#pragma once

#include <cstdint>

#include "gemm/tile_scheduler.hpp"
#include "gemm/tile_scheduler_sm90.hpp"  // WorkTileInfo, TileOrigin
#include "layout/integer.hpp"

namespace mm {

/// Whether x is a power of two (1, 2, 4, ...).
MM_HD constexpr bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
/// log2(x) for a power of two x, on the host and the device: the position of its one set bit.
MM_HD int log2_of_power_of_two(int x) {
#if defined(__CUDA_ARCH__)
  return __ffs(x) - 1;  // the position of the lowest set bit, from 1
#else
  return __builtin_ctz(unsigned(x));
#endif
}

/// A unit of a grouped schedule: a whole tile of one group. WorkTileInfo's fields (the tile within the
/// group's own C, its position in the list of all groups' tiles, K steps 0 .. k_steps), so that a
/// kernel and its main loop take it as they take one GEMM's, and where the group's rows are.
struct GroupWorkTileInfo : WorkTileInfo {
  int group = 0;               ///< the group (expert) the tile is in
  std::int64_t row_begin = 0;  ///< the tile's first row in A and C (the group's first row + tile.m · BM)
  std::int64_t row_end = 0;    ///< one past the group's last row in A and C (rows at or past it are not the group's)
  int b_tile_n = 0;            ///< the tile's column of tiles in the groups' stacked B: group · tiles_n + tile.n
};

/// Where a grouped tile is: its first row in A and C, its first column of C, and its first row of the
/// groups' stacked B (E·N rows of K: group g's weight is rows g·N .. g·N + N - 1, with N = tiles_n·BN).
template <class Cfg>
MM_HD TileOrigin tile_origin(const GroupWorkTileInfo& w) {
  return {int(w.row_begin), w.tile.n * Cfg::BN::value, w.b_tile_n * Cfg::BN::value};
}

/// Whole tiles of every group of a grouped GEMM, in one persistent launch (see the file comment).
struct PersistentGroupTileScheduler {
  /// Where the groups' rows are, and the tile.
  struct Params {
    int groups;                    ///< E: the number of groups (experts)
    const std::int64_t* offsets;   ///< contiguous: E + 1 row offsets (offsets[0] = 0, not decreasing); else null
    const int* counts;             ///< masked: E row counts, each at most `capacity`; else null
    std::int64_t capacity;         ///< masked: rows between the starts of two groups
    int tiles_n;                   ///< tiles along N (every group's)
    int bm;                        ///< rows of a tile
    int group_m;                   ///< GroupedTileScheduler's rows of tiles walked before the next column
    int k_steps;                   ///< K steps of every tile
    int alignment;                 ///< contiguous: group g starts at align_up(offsets[g], alignment) (1: at offsets[g])
  };
  using WorkTileInfo = GroupWorkTileInfo;  ///< what get_current_work hands out
  Params params;            ///< the schedule
  std::int64_t current;     ///< the block's current tile in the list of all groups' tiles
  std::int64_t stride;      ///< blocks of the grid
  int group = 0;            ///< the cursor: the group `current` was last found in
  std::int64_t group_first = 0;  ///< the cursor: the list position of that group's first tile

  /// Block `block` of a grid of `blocks` (blockIdx.x and gridDim.x in a kernel).
  MM_HD PersistentGroupTileScheduler(const Params& p, int block, int blocks) : params(p), current(block), stride(blocks) {}

  /// Contiguous groups: `offsets` (E + 1 of them, in the memory the kernel reads), tiles of bm rows,
  /// `tiles_n` tiles along N.
  /// `alignment`: each group starts on a multiple of it (see the file comment); `k_steps`: K steps of a tile.
  static Params contiguous(int groups, const std::int64_t* offsets, int bm, int tiles_n, int group_m = 8, int k_steps = 1,
                           int alignment = 1) {
    return {groups, offsets, nullptr, 0, tiles_n, bm, group_m, k_steps, alignment};
  }
  /// Masked groups: `counts` (E of them) of at most `capacity` rows each, group g from row g·capacity.
  static Params masked(int groups, const int* counts, std::int64_t capacity, int bm, int tiles_n, int group_m = 8,
                       int k_steps = 1) {
    return {groups, nullptr, counts, capacity, tiles_n, bm, group_m, k_steps, 1};
  }
  /// Units of work the grid can share: unknown on the host (the counts are the device's), so as many
  /// blocks as the GPU holds.
  static std::int64_t units(const Params&) { return INT64_MAX; }

  /// Group g's first row in A and C.
  MM_HD std::int64_t first_row(int g) const {
    if (params.offsets == nullptr) return std::int64_t(g) * params.capacity;
    const std::int64_t a = params.alignment;
    return (params.offsets[g] + a - 1) / a * a;
  }
  /// Group g's rows. Counts the host could not check (the device's) are clamped: a negative count or
  /// end reads as an empty group, a masked count above the capacity as the capacity, so that a bad
  /// router makes wrong rows, never a read or write outside the group's buffer.
  MM_HD std::int64_t rows(int g) const {
    const std::int64_t r = params.offsets ? params.offsets[g + 1] - first_row(g) : std::int64_t(params.counts[g]);
    if (r < 0) return 0;
    return params.offsets == nullptr && r > params.capacity ? params.capacity : r;
  }
  /// Group g's tiles.
  MM_HD std::int64_t tiles(int g) const { return (rows(g) + params.bm - 1) / params.bm * params.tiles_n; }

  /// Groups whose rows the cursor reads at once. One at a time, each step of the walk waited for the
  /// last one's loads (a chain of dependent loads from L2): at decode (one token: 8 of Qwen3's 128
  /// experts with rows, every block walking past the 120 empty ones) a launch took ~87 µs for 50 MB of
  /// weights; with a batch's loads issued together, then scanned in registers, ~65 µs (chapter 13,
  /// step 6), still twice cuBLAS's ~32 µs with DRAM 17% busy. ncu on that kernel (65 µs, IPC 0.8, 1.27
  /// warps a scheduler) put ~70% of the warp stalls in this walk, most of them `stall_wait`: each
  /// expert's inlined 64-bit divisions (first_row's align-up, tiles()'s ceil-div: MUFU.RCP and IMAD
  /// chains), and its SASS showed the batch's loads not together after all: tiles(group + i) behind
  /// `group + i < groups ?` put each expert's loads just before its own division code, ~100
  /// instructions after the last expert's. So a step paid a load's latency and a division chain.
  /// (Shifts alone, through a branch per expert, ran longer: chapter 13's appendix, "A dead end: the
  /// walk's divisions", guessing that the branches split the loads further. So both go together.)
  /// Now batch_tiles issues every load of the batch first, unconditionally (the index clamped to the
  /// last group), then does the arithmetic: masks and shifts when bm and the alignment are powers of
  /// two (every kernel's), `/` otherwise, chosen once a batch, never per expert; and a block whose next
  /// tile is in its cursor's group answers from that group alone (get_current_work), since a batch on
  /// every tile cost the decode tile 50-75 ns a K step where blocks take many tiles of few experts.
  /// Measured (H200, chapter 13's step 7): Qwen3 at one token, gate+up 63.0 -> 37.9 µs, down 55.3 ->
  /// 31.8 µs (predicted 25-35 and 20-30); over the 144 decode kernel-shapes 1.10x in the geometric
  /// mean, prefill 1.05x.
  static constexpr int kWalkBatch = 8;

  /// The tiles of groups group .. group + kWalkBatch - 1 into t (0 past the last group): tiles(group + i)
  /// for each, as one round of loads. Every load first, with nothing between them that they wait for:
  /// the index clamped (offsets: to offsets[groups], counts: to the last group), so no branch and no
  /// read past the end (a group past the last counts 0 tiles below); then the arithmetic.
  MM_HD void batch_tiles(std::int64_t (&t)[kWalkBatch]) const {
    std::int64_t begin[kWalkBatch], end[kWalkBatch];  // contiguous: offsets[g_i], offsets[g_i + 1]; masked: 0, counts[g_i]
    std::int64_t most = INT64_MAX;                     // the rows a group may have (masked: the capacity)
    if (params.offsets) {
      // kWalkBatch + 1 loads, not twice kWalkBatch: group i's end is group i + 1's begin (past the last
      // group, the clamped index repeats offsets[groups], and those groups count 0 tiles anyway).
      std::int64_t o[kWalkBatch + 1];
      MM_UNROLL
      for (int i = 0; i <= kWalkBatch; ++i) o[i] = params.offsets[group + i < params.groups ? group + i : params.groups];
      MM_UNROLL
      for (int i = 0; i < kWalkBatch; ++i) {
        begin[i] = o[i];
        end[i] = o[i + 1];
      }
    } else {
      MM_UNROLL
      for (int i = 0; i < kWalkBatch; ++i) {
        begin[i] = 0;
        end[i] = params.counts[group + i < params.groups ? group + i : params.groups - 1];
      }
      most = params.capacity;
    }
    if (is_power_of_two(params.bm) && is_power_of_two(params.alignment))
      batch_tiles_from<true>(begin, end, most, t);
    else
      batch_tiles_from<false>(begin, end, most, t);
  }
  /// batch_tiles' arithmetic: tiles() of each loaded group, by masks and shifts (kShifts: bm and the
  /// alignment powers of two) or by `/`, the same numbers either way.
  template <bool kShifts>
  MM_HD void batch_tiles_from(const std::int64_t (&begin)[kWalkBatch], const std::int64_t (&end)[kWalkBatch],
                              std::int64_t most, std::int64_t (&t)[kWalkBatch]) const {
    const std::int64_t a = params.alignment, bm = params.bm;
    const int log2_bm = kShifts ? log2_of_power_of_two(params.bm) : 0;
    MM_UNROLL
    for (int i = 0; i < kWalkBatch; ++i) {
      // first_row: x / a * a with x = begin + a - 1, rounded toward zero as `/` rounds (x < 0 only for a
      // bad device offset, and then the same wrong row as rows() reads)
      const std::int64_t x = begin[i] + a - 1;
      const std::int64_t first = kShifts ? (x < 0 ? x + a - 1 : x) & ~(a - 1) : x / a * a;
      const std::int64_t r = end[i] - first;                   // rows(), with its clamps:
      const std::int64_t m = r < 0 ? 0 : r > most ? most : r;  // negative -> 0, masked -> at most the capacity
      const std::int64_t tiles_m = kShifts ? (m + bm - 1) >> log2_bm : (m + bm - 1) / bm;
      t[i] = group + i < params.groups ? tiles_m * params.tiles_n : 0;
    }
  }

  /// The block's current unit: moves the cursor forward to the group of `current`, then that group's tile.
  MM_HD GroupWorkTileInfo get_current_work() {
    GroupWorkTileInfo w;
    // A block's next tile is most often in the group of its last (several tiles an expert): then one
    // group's rows answer, and the batch's loads are not issued at all.
    for (bool found = group >= params.groups || current < group_first + tiles(group); !found;) {
      std::int64_t t[kWalkBatch];  // tiles of groups group .. group + kWalkBatch - 1 (0 past the last)
      batch_tiles(t);
      MM_UNROLL
      for (int i = 0; i < kWalkBatch; ++i) {  // the same steps as one group at a time: t[i] is `group`'s
        if (found) continue;
        if (group >= params.groups || current < group_first + t[i]) {
          found = true;
        } else {
          group_first += t[i];
          ++group;
        }
      }
    }
    w.valid = group < params.groups;
    if (!w.valid) return w;
    const int tiles_m = int((rows(group) + params.bm - 1) / params.bm);
    const GroupedTileScheduler order{tiles_m, params.tiles_n, params.group_m < tiles_m ? params.group_m : tiles_m};
    w.group = group;
    w.tile = order.tile(current - group_first);
    w.row_begin = first_row(group) + std::int64_t(w.tile.m) * params.bm;
    w.row_end = first_row(group) + rows(group);
    w.tile_index = current;
    w.b_tile_n = group * params.tiles_n + w.tile.n;
    w.split = 0;
    w.k_begin = 0;
    w.k_end = params.k_steps;
    return w;
  }
  /// The next unit `count` steps on.
  MM_HD GroupWorkTileInfo advance_to_next_work(int count = 1) {
    current += stride * count;
    return get_current_work();
  }

  /// Whole tiles leave no partial sums: nothing to fix up.
  template <class Accumulators>
  MM_HD void fixup(const GroupWorkTileInfo&, Accumulators&, int, int, WatchdogState&) const {}
  /// Every unit stores its tile.
  MM_HD constexpr bool compute_epilogue(const GroupWorkTileInfo&) const { return true; }

  /// Empty when `p` describes groups a kernel can walk: E >= 1, offsets that start at 0 and never
  /// decrease (contiguous), counts from 0 to the capacity (masked); otherwise one line saying which is
  /// wrong. The host checks what it can see (a test, a library with host copies of the counts); a kernel
  /// reading device counts trusts the router that wrote them.
  static const char* rejects(const Params& p) {
    if (p.groups < 1) return "needs at least one group";
    if (p.bm < 1 || p.tiles_n < 0) return "needs a tile of at least one row";
    if (p.alignment < 1) return "needs an alignment of at least one row";
    if ((p.offsets == nullptr) == (p.counts == nullptr)) return "needs either offsets (contiguous) or counts (masked)";
    if (p.offsets) {
      if (p.offsets[0] != 0) return "offsets[0] must be 0";
      const std::int64_t a = p.alignment;
      for (int g = 0; g < p.groups; ++g)
        if (p.offsets[g + 1] < (p.offsets[g] + a - 1) / a * a)
          return a == 1 ? "offsets must not decrease (a group of negative rows)"
                        : "a group's end must not come before its aligned start (offsets[g + 1] < align_up(offsets[g]))";
    } else {
      for (int g = 0; g < p.groups; ++g)
        if (p.counts[g] < 0 || p.counts[g] > p.capacity) return "every count must be from 0 to the capacity";
    }
    return "";
  }
};

}  // namespace mm
