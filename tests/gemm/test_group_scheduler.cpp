// The grouped GEMM's tile scheduler (gemm/tile_scheduler_group_sm90.hpp) on the CPU: every block of a
// grid walked, for contiguous and masked groups, with empty groups, one-row groups, groups one row past
// a tile, every row on one group, one group (a plain GEMM); and the groups it refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gemm/tile_scheduler_group_sm90.hpp"
#include "gemm/tile_scheduler_sm90.hpp"

using namespace mm;

namespace {

constexpr int kBM = 128;

/// Every unit of every block of a grid of `blocks`, checked against the groups' rows as it is walked:
/// a block's tiles in increasing list order, rows inside its group. Returns (group, m, n) -> times seen.
std::map<std::tuple<int, int, int>, int> walk(const PersistentGroupTileScheduler::Params& p, int blocks,
                                              const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& rows) {
  std::map<std::tuple<int, int, int>, int> seen;
  for (int b = 0; b < blocks; ++b) {
    PersistentGroupTileScheduler s(p, b, blocks);
    std::int64_t last = -1;
    for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work()) {
      EXPECT_GT(w.tile_index, last) << "block " << b;
      last = w.tile_index;
      const int g = w.group;
      EXPECT_GT(rows[g], 0) << "an empty group was handed a tile";
      EXPECT_EQ(w.row_begin, first[g] + std::int64_t(w.tile.m) * kBM);
      EXPECT_EQ(w.row_end, first[g] + rows[g]);
      EXPECT_LT(w.row_begin, w.row_end) << "a tile with no row of its group";
      EXPECT_LT(w.tile.n, p.tiles_n);
      EXPECT_EQ(w.b_tile_n, g * p.tiles_n + w.tile.n) << "the tile's column of the stacked weights";
      EXPECT_EQ(w.k_begin, 0);
      EXPECT_EQ(w.k_end, p.k_steps) << "whole tiles: every K step";
      ++seen[{g, w.tile.m, w.tile.n}];
    }
  }
  return seen;
}

/// Every tile of every group exactly once.
void expect_each_tile_once(const std::map<std::tuple<int, int, int>, int>& seen, const std::vector<std::int64_t>& rows,
                           int tiles_n, const std::string& what) {
  std::int64_t expected = 0;
  for (std::size_t g = 0; g < rows.size(); ++g) {
    const int tiles_m = int((rows[g] + kBM - 1) / kBM);
    expected += std::int64_t(tiles_m) * tiles_n;
    for (int m = 0; m < tiles_m; ++m)
      for (int n = 0; n < tiles_n; ++n) {
        const auto it = seen.find({int(g), m, n});
        EXPECT_TRUE(it != seen.end() && it->second == 1) << what << ": group " << g << " tile (" << m << ", " << n << ")";
      }
  }
  EXPECT_EQ(std::int64_t(seen.size()), expected) << what;
}

const std::vector<std::vector<std::int64_t>> kGroupRows = {
    {1},                                  // one group of one row
    {4096},                               // one group: a plain GEMM
    {0, 0, 300, 0},                       // every row on one expert, the others empty
    {1, 127, 128, 129, 0, 255, 256, 257}, // one row, a tile's edges, an empty group
    {0},                                  // no rows at all
    // decode: 8 of 37 groups with one row, the rest empty, across the walk's batches of kWalkBatch groups
    {0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  // 17 empty groups: two batches and one group
};

TEST(GroupTileScheduler, ContiguousGroupsGetEachTileOnceOnAnyGrid) {
  std::mt19937 gen(5);
  std::vector<std::vector<std::int64_t>> cases = kGroupRows;
  std::vector<std::int64_t> skewed(64);  // 64 experts, mostly small, one four times the mean
  for (auto& r : skewed) r = std::uniform_int_distribution<int>(0, 40)(gen);
  skewed[7] = 4 * 20 * 64 / 64 * 4;
  cases.push_back(skewed);
  for (const auto& rows : cases) {
    std::vector<std::int64_t> offsets{0}, first;
    for (auto r : rows) first.push_back(offsets.back()), offsets.push_back(offsets.back() + r);
    for (int tiles_n : {1, 3, 16})
      for (int blocks : {1, 3, 7, 132}) {
        const auto p = PersistentGroupTileScheduler::contiguous(int(rows.size()), offsets.data(), kBM, tiles_n);
        ASSERT_STREQ(PersistentGroupTileScheduler::rejects(p), "");
        expect_each_tile_once(walk(p, blocks, first, rows), rows, tiles_n,
                              "contiguous, " + std::to_string(rows.size()) + " groups, " + std::to_string(blocks) + " blocks");
      }
  }
}

TEST(GroupTileScheduler, MaskedGroupsStartAtTheirCapacity) {
  const std::int64_t capacity = 256;
  const std::vector<int> counts = {0, 1, 128, 129, 256, 0, 17};
  std::vector<std::int64_t> rows, first;
  for (std::size_t g = 0; g < counts.size(); ++g) rows.push_back(counts[g]), first.push_back(std::int64_t(g) * capacity);
  for (int blocks : {1, 5, 132}) {
    const auto p = PersistentGroupTileScheduler::masked(int(counts.size()), counts.data(), capacity, kBM, 4);
    ASSERT_STREQ(PersistentGroupTileScheduler::rejects(p), "");
    expect_each_tile_once(walk(p, blocks, first, rows), rows, 4, "masked, " + std::to_string(blocks) + " blocks");
  }
}

TEST(GroupTileScheduler, OneGroupIsThePersistentSchedulersOrder) {
  // E = 1: the same tiles in the same order as one GEMM's PersistentTileScheduler.
  const std::int64_t offsets[] = {0, 1000};
  const auto p = PersistentGroupTileScheduler::contiguous(1, offsets, kBM, 5, 8);
  const GroupedTileScheduler order{int((1000 + kBM - 1) / kBM), 5, 8};
  for (int blocks : {1, 4}) {
    for (int b = 0; b < blocks; ++b) {
      PersistentGroupTileScheduler s(p, b, blocks);
      PersistentTileScheduler one(PersistentTileScheduler::to_underlying_arguments(order, 1), b, blocks);
      WorkTileInfo o = one.get_current_work();
      for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work(), o = one.advance_to_next_work()) {
        ASSERT_TRUE(o.is_valid());
        EXPECT_EQ(w.tile.m, o.tile.m);
        EXPECT_EQ(w.tile.n, o.tile.n);
      }
      EXPECT_FALSE(o.is_valid());
    }
  }
}

TEST(GroupTileScheduler, AlignedGroupsStartOnATileEdge) {
  // DeepGEMM's psum layout: offsets[g + 1] is where group g ends, and it starts at align_up(offsets[g], 128).
  const std::vector<std::int64_t> rows = {1, 0, 127, 128, 129, 0, 300, 5};
  std::vector<std::int64_t> offsets{0}, first;
  for (auto r : rows) {
    const std::int64_t start = (offsets.back() + kBM - 1) / kBM * kBM;
    first.push_back(start);
    offsets.push_back(start + r);
  }
  for (int blocks : {1, 3, 132}) {
    const auto p = PersistentGroupTileScheduler::contiguous(int(rows.size()), offsets.data(), kBM, 2, 8, 7, kBM);
    ASSERT_STREQ(PersistentGroupTileScheduler::rejects(p), "");
    expect_each_tile_once(walk(p, blocks, first, rows), rows, 2, "aligned, " + std::to_string(blocks) + " blocks");
    PersistentGroupTileScheduler s(p, 0, blocks);
    for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work())
      EXPECT_EQ(w.row_begin % kBM, 0) << "a tile that starts off a tile edge holds two groups' rows";
  }
  // The same ends read unaligned are other groups: the alignment is part of the layout.
  const auto unaligned = PersistentGroupTileScheduler::contiguous(int(rows.size()), offsets.data(), kBM, 2);
  EXPECT_STREQ(PersistentGroupTileScheduler::rejects(unaligned), "");
  const auto aligned = PersistentGroupTileScheduler::contiguous(int(rows.size()), offsets.data(), kBM, 2, 8, 1, kBM);
  EXPECT_EQ(PersistentGroupTileScheduler(aligned, 0, 1).rows(1), 0);
  EXPECT_EQ(PersistentGroupTileScheduler(unaligned, 0, 1).rows(1), 127) << "expert 0's padding read as expert 1's rows";
}

TEST(GroupTileScheduler, TheTileOriginIsTheGroupsRowsAndWeight) {
  struct Cfg { using BM = Int<128>; using BN = Int<256>; };
  const std::int64_t offsets[] = {0, 300, 300, 900};
  const auto p = PersistentGroupTileScheduler::contiguous(3, offsets, 128, 4, 8, 1);
  PersistentGroupTileScheduler s(p, 0, 1);
  for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work()) {
    const TileOrigin o = tile_origin<Cfg>(w);
    EXPECT_EQ(o.m0, offsets[w.group] + w.tile.m * 128);
    EXPECT_EQ(o.n0, w.tile.n * 256) << "C's columns are the group's own";
    EXPECT_EQ(o.b0, (w.group * 4 + w.tile.n) * 256) << "B's rows: group g's weight is rows g·N ..";
  }
  // One GEMM's: the corner, B's rows C's columns.
  WorkTileInfo one;
  one.tile = {3, 2};
  const TileOrigin o = tile_origin<Cfg>(one);
  EXPECT_EQ(o.m0, 384);
  EXPECT_EQ(o.n0, 512);
  EXPECT_EQ(o.b0, 512);
}

TEST(GroupTileScheduler, CountsTheHostCouldNotCheckAreClamped) {
  // A router's bad counts (on the device, unseen by rejects) never send a tile outside a group's buffer.
  const int counts[] = {-5, 300, 7};
  const auto p = PersistentGroupTileScheduler::masked(3, counts, 256, kBM, 1);
  PersistentGroupTileScheduler s(p, 0, 1);
  EXPECT_EQ(s.rows(0), 0);
  EXPECT_EQ(s.rows(1), 256);
  EXPECT_EQ(s.rows(2), 7);
  for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work())
    EXPECT_LE(w.row_end, (w.group + 1) * 256);
  const std::int64_t decreasing[] = {0, 10, 5};
  EXPECT_EQ(PersistentGroupTileScheduler(PersistentGroupTileScheduler::contiguous(2, decreasing, kBM, 1), 0, 1).rows(1), 0);
}

TEST(GroupTileScheduler, RefusesGroupsNoKernelCanWalk) {
  const std::int64_t decreasing[] = {0, 10, 5};
  const std::int64_t late_start[] = {3, 10};
  const int negative[] = {4, -1};
  const int over[] = {4, 300};
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::contiguous(2, decreasing, kBM, 1)), "");
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::contiguous(1, late_start, kBM, 1)), "");
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::masked(2, negative, 256, kBM, 1)), "");
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::masked(2, over, 256, kBM, 1)), "");
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::contiguous(0, late_start, kBM, 1)), "");
  const std::int64_t before_aligned_start[] = {0, 5, 100};  // group 1 would start at 128, after its end
  EXPECT_STRNE(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::contiguous(2, before_aligned_start, kBM, 1, 8, 1, 128)), "");
  EXPECT_STREQ(PersistentGroupTileScheduler::rejects(PersistentGroupTileScheduler::contiguous(2, before_aligned_start, kBM, 1)), "");
}

}  // namespace
