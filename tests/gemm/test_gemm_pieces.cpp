// The pieces chapter 10 adds to the layout library, on the CPU: the grouped tile scheduler visits
// every tile once and keeps the tiles in flight together; a pipeline position flips its phase each
// round; multicast masks; and the stmatrix epilogue puts every accumulator where the wgmma
// accumulator layout (checked against the PTX ISA in test_mma_sm90.cpp) says it belongs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "layout/all.hpp"
#include "layout/cluster.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/tile_scheduler.hpp"

using namespace mm;

namespace {

// ---- The grouped tile scheduler ----

TEST(TileScheduler, VisitsEveryTileExactlyOnce) {
  for (int tiles_m : {1, 2, 7, 16, 17, 33, 64})
    for (int tiles_n : {1, 3, 8, 32})
      for (int group : {1, 4, 8, 16, 100}) {
        const GroupedTileScheduler s{tiles_m, tiles_n, group};
        ASSERT_EQ(s.size(), std::int64_t(tiles_m) * tiles_n);
        std::vector<int> hits(std::size_t(s.size()), 0);
        for (std::int64_t i = 0; i < s.size(); ++i) {
          const TileCoord c = s.tile(i);
          ASSERT_GE(c.m, 0);
          ASSERT_LT(c.m, tiles_m);
          ASSERT_GE(c.n, 0);
          ASSERT_LT(c.n, tiles_n);
          hits[std::size_t(c.m) * tiles_n + c.n] += 1;
        }
        for (int h : hits) ASSERT_EQ(h, 1) << tiles_m << "x" << tiles_n << " group " << group;
      }
}

TEST(TileScheduler, WalksDownAGroupThenRight) {
  // 32×16 tiles (4096² in 128×256 tiles), groups of 8 rows: tiles 0-7 are column 0, rows 0-7; tile 8
  // starts column 1; tile 128 (8 rows × 16 columns later) starts the second group at row 8.
  const GroupedTileScheduler s{32, 16, 8};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(s.tile(i).m, i);
    EXPECT_EQ(s.tile(i).n, 0);
  }
  EXPECT_EQ(s.tile(8).m, 0);
  EXPECT_EQ(s.tile(8).n, 1);
  EXPECT_EQ(s.tile(128).m, 8);
  EXPECT_EQ(s.tile(128).n, 0);
  // The last group of a grid whose rows are not a multiple of the group is shorter, walked the same way.
  const GroupedTileScheduler r{10, 3, 4};  // groups of rows 0-3, 4-7, 8-9
  EXPECT_EQ(r.tile(24).m, 8);
  EXPECT_EQ(r.tile(24).n, 0);
  EXPECT_EQ(r.tile(25).m, 9);
  EXPECT_EQ(r.tile(26).m, 8);
  EXPECT_EQ(r.tile(26).n, 1);
}

TEST(TileScheduler, TilesInFlightShareOperands) {
  // 132 consecutive tiles (one per SM) of a 64×32 grid (8192² in 128×256 tiles): in grouped order
  // with 16 rows they touch 16 rows of tiles (panels of A) and 9 columns (panels of B); row-major
  // order (a group of 1... i.e. every tile of a row first) touches 5 rows and all 32 columns.
  auto panels = [](const GroupedTileScheduler& s, std::int64_t first) {
    std::set<int> rows, cols;
    for (std::int64_t i = first; i < first + 132 && i < s.size(); ++i) {
      rows.insert(s.tile(i).m);
      cols.insert(s.tile(i).n);
    }
    return std::pair<int, int>(int(rows.size()), int(cols.size()));
  };
  const auto grouped = panels(GroupedTileScheduler{64, 32, 16}, 0);
  EXPECT_EQ(grouped.first, 16);
  EXPECT_EQ(grouped.second, 9);
  // A group as tall as the grid walks whole columns: 132 tiles are 64 rows × 3 columns (minus 60).
  const auto columns = panels(GroupedTileScheduler{64, 32, 64}, 0);
  EXPECT_EQ(columns.first, 64);
  EXPECT_EQ(columns.second, 3);
  // Fewer panels in flight with the grouped order: 16 + 9 against 64 + 3.
  EXPECT_LT(grouped.first + grouped.second, columns.first + columns.second);
}

// ---- Pipeline positions, multicast masks ----

TEST(PipelineState, PhaseFlipsEachRound) {
  PipelineState<4> s;
  std::vector<std::pair<int, unsigned>> seen;
  for (int i = 0; i < 10; ++i) {
    seen.emplace_back(s.index(), s.phase());
    ++s;
  }
  const std::vector<std::pair<int, unsigned>> expected = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1},
                                                          {1, 1}, {2, 1}, {3, 1}, {0, 0}, {1, 0}};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(s.count(), 10u);
}

TEST(PipelineState, AdvanceIsThatManyIncrements) {
  // What the ping-pong kernel's consumers rely on to skip the other consumer's stages: advance(n)
  // lands where n increments land, phase included, from any position, for n across several rounds.
  for (int start = 0; start < 7; ++start) {
    for (std::uint32_t n : {0u, 1u, 3u, 5u, 6u, 11u, 12u, 13u, 64u, 257u}) {
      PipelineState<6> stepped, jumped;
      for (int i = 0; i < start; ++i) ++stepped, ++jumped;
      for (std::uint32_t i = 0; i < n; ++i) ++stepped;
      jumped.advance(n);
      EXPECT_EQ(jumped.index(), stepped.index()) << start << " + " << n;
      EXPECT_EQ(jumped.phase(), stepped.phase()) << start << " + " << n;
      EXPECT_EQ(jumped.count(), stepped.count()) << start << " + " << n;
    }
  }
}

TEST(PipelineTmaAsync, TheProducerStartsAtPhaseOne) {
  // CUTLASS's make_producer_start_state: every stage is free in round 0, and a wait on a fresh
  // barrier for the parity before its first phase (1) returns at once. A producer that started at
  // phase 0 would wait for a release that never comes: a deadlock.
  const auto w = make_producer_start_state<PipelineTmaAsync<4>>();
  EXPECT_EQ(w.index(), 0);
  EXPECT_EQ(w.phase(), 1u);
  const PipelineTmaAsync<4>::State r;  // a consumer's first position
  EXPECT_EQ(r.phase(), 0u);
}

// Every block's empty barrier must expect exactly the releases the consumers of a cluster send it:
// one per consumer warpgroup of each block in its row or column (the blocks whose producers
// multicast into it), for 1-D and 2-D clusters.
template <int CM, int CN>
void expect_release_counts_match() {
  using P = PipelineTmaAsync<4, CM, CN>;
  constexpr int blocks = CM * CN, consumers = 2;
  std::vector<int> received(blocks, 0);
  for (int src = 0; src < blocks; ++src)
    for (int t = 0; t < 128; ++t)
      if (P::releases_in(t, src)) {
        ASSERT_LT(t, blocks) << CM << "x" << CN;
        // The destination shares a row (m) or a column (n) of the cluster with the source.
        EXPECT_TRUE(t % CM == src % CM || t / CM == src / CM) << CM << "x" << CN << " " << src << "->" << t;
        received[std::size_t(t)] += consumers;  // each consumer warpgroup's thread t releases once
      }
  for (int b = 0; b < blocks; ++b)
    EXPECT_EQ(std::uint32_t(received[std::size_t(b)]), P::empty_arrivals(consumers)) << CM << "x" << CN << " block " << b;
}

TEST(PipelineTmaAsync, EmptyBarriersCountTheReleasesOfTheirRowAndColumn) {
  expect_release_counts_match<1, 1>();
  expect_release_counts_match<2, 1>();
  expect_release_counts_match<4, 1>();
  expect_release_counts_match<1, 2>();
  expect_release_counts_match<2, 2>();
  expect_release_counts_match<4, 2>();
  expect_release_counts_match<2, 4>();
  expect_release_counts_match<4, 4>();
  // The count the barriers are initialized with: (CM + CN - 1) per consumer warpgroup.
  EXPECT_EQ((PipelineTmaAsync<4, 2, 1>::empty_arrivals(2)), 4u);
  EXPECT_EQ((PipelineTmaAsync<4, 2, 2>::empty_arrivals(2)), 6u);
}

TEST(Cluster, MulticastMasks) {
  EXPECT_EQ(multicast_mask(0, 1), 0b1);
  EXPECT_EQ(multicast_mask(0, 2), 0b11);
  EXPECT_EQ(multicast_mask(1, 2, 2), 0b1010);
  EXPECT_EQ(multicast_mask(0, 4), 0b1111);
}

// ---- The stmatrix epilogue ----

// Each thread t of the warpgroup holds accumulator i of its 64×256 tile; identify it as t·128 + i
// (it fits 16 bits) and let stmatrix (emulated on the host, with the addresses and registers
// StsmAccumulatorMap gives) store chunk j: element (r, c) of the chunk must be the accumulator
// that the wgmma C layout places at row r, column 64j + c.
TEST(EpilogueSm90, StmatrixPutsEveryAccumulatorWhereTheCLayoutSays) {
  using Atom = SM90_64xNx16_F32BF16BF16_SS<256, GmmaMajor::K, GmmaMajor::K>;
  using CLayout = MMA_Traits<Atom>::CLayout;  // (thr,val) -> m + 64·n
  std::vector<int> owner(64 * 256, -1);       // m + 64·n -> the id of the accumulator there
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 128; ++i) owner[std::size_t(CLayout{}(t, i))] = t * 128 + i;
  for (int j = 0; j < 4; ++j) {
    std::array<std::uint16_t, 64 * 64> chunk;  // row-major 64×64 (no swizzle: the addresses are what is tested)
    chunk.fill(0xFFFF);
    for (int warp = 0; warp < 4; ++warp)
      for (int q = 0; q < 4; ++q) {
        std::array<std::array<std::uint32_t, 4>, 32> regs{};
        std::array<void*, 32> rows{};
        for (int lane = 0; lane < 32; ++lane) {
          const int t = 32 * warp + lane;
          for (int reg = 0; reg < 4; ++reg) {
            const int i = StsmAccumulatorMap::acc_index(j, q, reg);
            regs[lane][reg] = std::uint32_t(t * 128 + i) | std::uint32_t(t * 128 + i + 1) << 16;
          }
          rows[lane] = &chunk[std::size_t(64 * StsmAccumulatorMap::row(warp, lane) + StsmAccumulatorMap::col(q, lane))];
        }
        stmatrix_x4_on_host(regs, rows);
      }
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c)
        ASSERT_EQ(int(chunk[std::size_t(64 * r + c)]), owner[std::size_t(r + 64 * (64 * j + c))])
            << "chunk " << j << " row " << r << " column " << c;
  }
}

TEST(EpilogueSm90, StmatrixRowsAreOneSwizzleUnitAndConflictFree) {
  // In the 128-byte-swizzled 64×64 bf16 piece, the 8 rows one matrix writes land in 8 different
  // 16-byte bank groups: a stmatrix.x4 writes 512 bytes in 4 wavefronts, the minimum.
  auto piece = composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _64>, Stride<_64, _1>>{});
  for (int warp = 0; warp < 4; ++warp)
    for (int q = 0; q < 4; ++q)
      for (int m = 0; m < 4; ++m) {
        std::set<int> groups;
        for (int lane = 8 * m; lane < 8 * m + 8; ++lane) {
          const int off = int(piece(StsmAccumulatorMap::row(warp, lane), StsmAccumulatorMap::col(q, lane)));
          ASSERT_EQ(off % 8, 0) << "a row starts a 16-byte unit";
          groups.insert((off * 2 / 16) % 8);  // which 16-byte group of the 128-byte bank window
        }
        EXPECT_EQ(groups.size(), 8u) << "warp " << warp << " store " << q << " matrix " << m;
      }
}

// store_accumulators_bf16 splits the accumulator layout into a thread part and a value part, in rows
// and columns separately: that is only right if, for every thread and value, row(t, v) = row(t, 0) +
// row(0, v) and likewise for the column.
TEST(EpilogueSm90, AccumulatorLayoutSplitsIntoThreadAndValueParts) {
  using Atom = SM90_64xNx16_F32BF16BF16_SS<256, GmmaMajor::MN, GmmaMajor::K>;
  using CLayout = MMA_Traits<Atom>::CLayout;
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < 128; ++v) {
      const int idx = CLayout{}(t, v), ti = CLayout{}(t, 0), vi = CLayout{}(0, v);
      ASSERT_EQ(idx % 64, ti % 64 + vi % 64) << "thread " << t << " value " << v;
      ASSERT_EQ(idx / 64, ti / 64 + vi / 64) << "thread " << t << " value " << v;
    }
}
TEST(SplitKTileScheduler, EveryTileAndKStepBelongsToExactlyOneUnit) {
  for (int tiles_m : {1, 3, 17})
    for (int tiles_n : {1, 4})
      for (int k_steps : {1, 2, 7, 64, 65})
        for (int wanted : {1, 2, 3, 5, 16, 100}) {
          const auto s = SplitKTileScheduler::make(GroupedTileScheduler{tiles_m, tiles_n, 4}, k_steps, wanted);
          ASSERT_GE(s.splits, 1);
          ASSERT_LE(s.splits, std::min(wanted, k_steps));
          ASSERT_EQ(s.size(), std::int64_t(tiles_m) * tiles_n * s.splits);
          std::vector<int> hits(std::size_t(tiles_m) * tiles_n * k_steps, 0);
          for (std::int64_t i = 0; i < s.size(); ++i) {
            const WorkUnit u = s.unit(i);
            ASSERT_LT(u.k_begin, u.k_end) << "an empty slice";
            ASSERT_EQ(u.split, int(i / (std::int64_t(tiles_m) * tiles_n)));
            for (int k = u.k_begin; k < u.k_end; ++k)
              hits[(std::size_t(u.tile.m) * tiles_n + u.tile.n) * k_steps + k] += 1;
          }
          for (int h : hits) ASSERT_EQ(h, 1) << tiles_m << "x" << tiles_n << " k_steps " << k_steps << " wanted " << wanted;
        }
}

TEST(SplitKTileScheduler, SlicesOfOneTileAreFarApartInTheOrder) {
  // Slice-major: the units running at once are one slice of many tiles (sharing panels in L2), not
  // many slices of one tile.
  const auto s = SplitKTileScheduler::make(GroupedTileScheduler{8, 8, 4}, 64, 4);
  EXPECT_EQ(s.splits, 4);
  EXPECT_EQ(s.k_steps_per_split, 16);
  EXPECT_EQ(s.unit(0).split, 0);
  EXPECT_EQ(s.unit(63).split, 0);
  EXPECT_EQ(s.unit(64).split, 1);
  EXPECT_EQ(s.unit(64).tile.m, s.unit(0).tile.m);
  EXPECT_EQ(s.unit(64).tile.n, s.unit(0).tile.n);
  EXPECT_EQ(s.unit(64).k_begin, 16);
}

TEST(StreamKTileScheduler, EveryTileAndKStepBelongsToExactlyOneUnitAndBlocksAreEven) {
  for (int tiles_m : {1, 3, 17})
    for (int tiles_n : {1, 4, 9})
      for (int k_steps : {1, 2, 7, 16, 65})
        for (int blocks : {1, 2, 5, 7, 16, 132}) {
          const GroupedTileScheduler tiles{tiles_m, tiles_n, 4};
          const auto s = StreamKTileScheduler::make(tiles, k_steps, blocks);
          const std::int64_t n = tiles.size();
          const std::int64_t sk = n < blocks ? n : n % blocks;
          ASSERT_TRUE(s.sk_tiles == sk || s.sk_tiles == 0);
          std::vector<int> hits(std::size_t(n) * k_steps, 0);
          std::int64_t most = 0, least = std::numeric_limits<std::int64_t>::max();
          for (int b = 0; b < blocks; ++b) {
            std::int64_t work = 0;
            for (int j = 0; j < s.units(b); ++j) {
              const WorkUnit u = s.unit(b, j);
              ASSERT_LT(u.k_begin, u.k_end) << "an empty piece";
              ASSERT_LE(u.k_end, k_steps);
              // Only a block's first unit may end before its tile's last K step (one partial sum per
              // block), and it starts at K step 0 unless it is the block's only piece.
              if (j > 0) {
                ASSERT_EQ(u.k_end, k_steps) << "block " << b << " unit " << j;
              }
              if (j == 0 && s.pieces(b) > 1) {
                ASSERT_EQ(u.k_begin, 0) << "block " << b;
              }
              ASSERT_EQ(u.split, u.k_end < k_steps ? 1 : 0);
              const TileCoord c = tiles.tile(u.tile_index);
              ASSERT_EQ(c.m, u.tile.m);
              ASSERT_EQ(c.n, u.tile.n);
              for (int k = u.k_begin; k < u.k_end; ++k)
                hits[(std::size_t(u.tile.m) * tiles_n + u.tile.n) * k_steps + k] += 1;
              work += u.k_end - u.k_begin;
            }
            most = std::max(most, work);
            least = std::min(least, work);
          }
          for (int h : hits) ASSERT_EQ(h, 1) << tiles_m << "x" << tiles_n << " k_steps " << k_steps << " blocks " << blocks;
          // Stream-K's point: no block has more than one K step more work than another, unless sharing
          // was not worth it (the busiest block would have kept more than 7/8 of its K steps).
          const std::int64_t shared_busiest = (n - sk) / blocks * k_steps + (sk * k_steps + blocks - 1) / blocks;
          if (s.sk_tiles == 0 && sk > 0) {
            EXPECT_GT(8 * shared_busiest, 7 * most) << tiles_m << "x" << tiles_n << " " << k_steps << " " << blocks;
            continue;
          }
          EXPECT_LE(most - least, 1) << tiles_m << "x" << tiles_n << " " << k_steps << " " << blocks;
        }
}

TEST(StreamKTileScheduler, TheFinisherAddsThePiecesOfExactlyTheBlocksBeforeIt) {
  // For every tile shared by K ranges: the piece with the tile's last K step (k_begin > 0) belongs to
  // block b, and contributors_begin(b, t) .. b-1 are the blocks whose first units cover the rest of K,
  // in K order.
  for (int k_steps : {3, 16, 47, 224})
    for (int blocks : {2, 7, 132}) {
      const auto s = StreamKTileScheduler::make(GroupedTileScheduler{9, 11, 4}, k_steps, blocks);  // 99 tiles
      for (int b = 0; b < blocks; ++b)
        for (int j = 0; j < s.units(b); ++j) {
          const WorkUnit u = s.unit(b, j);
          if (u.k_end < k_steps || u.k_begin == 0) continue;
          const int first = s.contributors_begin(b, u.tile_index);
          ASSERT_LT(first, b) << "a shared tile with no contributor";
          int covered = 0;
          for (int c = first; c < b; ++c) {
            const WorkUnit piece = s.unit(c, 0);  // a contributor's piece is its first unit
            ASSERT_EQ(piece.tile_index, u.tile_index);
            ASSERT_EQ(piece.k_begin, covered) << "contributors in K order";
            ASSERT_LT(piece.k_end, k_steps);
            covered = piece.k_end;
          }
          ASSERT_EQ(covered, u.k_begin) << "the contributors and the finisher make the whole tile";
        }
    }
}

TEST(StreamKTileScheduler, BlocksInFlightShareKSteps) {
  // 100 tiles of 224 K steps (512×6400×14336 in 128×256 tiles) on 132 blocks: all shared, ranges of
  // 169 or 170 steps. Every block's first piece starts at K step 0, and every second piece at K step
  // 54 or 55 (224 - the range's length): the blocks in flight read K panels at two places of K, not
  // at 132 places spread over it.
  const auto s = StreamKTileScheduler::make(GroupedTileScheduler{4, 25, 16}, 224, 132);
  ASSERT_EQ(s.sk_tiles, 100);
  int two_pieces = 0;
  for (int b = 0; b < 132; ++b) {
    const std::int64_t length = s.sk_begin(b + 1) - s.sk_begin(b);
    ASSERT_TRUE(length == 169 || length == 170) << b;
    if (s.pieces(b) != 2) continue;
    ++two_pieces;
    EXPECT_EQ(s.unit(b, 0).k_begin, 0) << b;
    EXPECT_EQ(s.unit(b, 1).k_begin - s.unit(b, 0).k_end, 224 - length) << b;
  }
  EXPECT_GE(two_pieces, 95);  // about 132 · 170/224: the other ranges lie inside one tile
}

TEST(StreamKTileScheduler, SharesTheLastRoundOnlyWhereItPays) {
  // 288 tiles on 132 blocks (3072³ in 128×256 tiles): 2 whole rounds, the 24 left shared (the busiest
  // block: 2.18 tiles of K steps instead of 3).
  const auto s = StreamKTileScheduler::make(GroupedTileScheduler{24, 12, 16}, 48, 132);
  EXPECT_EQ(s.sk_tiles, 24);
  EXPECT_EQ(s.units(0), 1 + 2);   // starts at K step 0 of tile 0, ends inside it: one piece
  EXPECT_EQ(s.unit(0, 1).tile_index, 24);  // then its whole tiles, a round apart
  EXPECT_EQ(s.unit(0, 2).tile_index, 24 + 132);
  // 512 tiles (4096³): 3.88 rounds, sharing would save 3%: every tile whole.
  EXPECT_EQ(StreamKTileScheduler::make(GroupedTileScheduler{32, 16, 16}, 64, 132).sk_tiles, 0);
  // 264 tiles: 2 whole rounds, nothing to share.
  EXPECT_EQ(StreamKTileScheduler::make(GroupedTileScheduler{8, 33, 16}, 94, 132).sk_tiles, 0);
  // 43 tiles (128×11008 in 128×256): a third of a round, all shared.
  EXPECT_EQ(StreamKTileScheduler::make(GroupedTileScheduler{1, 43, 16}, 64, 132).sk_tiles, 43);
}

// store_accumulators_strided puts value (m, n) of the warpgroup's tile at m·row_stride + n·col_stride:
// run on the host for every thread with accumulators that name their own place, into a row-major and
// a transposed (column-major) output, clipped at M×N.
TEST(EpilogueSm90, StridedStoreWritesEveryValueWhereTheLayoutSays) {
  using Atom = SM90_64xNx16_F32BF16BF16_SS<16, GmmaMajor::K, GmmaMajor::K>;
  using CLayout = MMA_Traits<Atom>::CLayout;
  constexpr int M = 60, N = 13;  // clipped: 4 rows and 3 columns of the 64×16 tile fall outside
  for (bool transposed : {false, true}) {
    std::vector<float> out(M * N, -1.0f);
    const std::int64_t rs = transposed ? 1 : N, cs = transposed ? M : 1;
    for (int t = 0; t < 128; ++t) {
      float acc[8];
      for (int v = 0; v < 8; ++v) acc[v] = float(CLayout{}(t, v));  // m + 64·n
      store_accumulators_strided<Atom>(acc, out.data(), rs, cs, 0, 0, M, N, t);
    }
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) ASSERT_EQ(out[m * rs + n * cs], float(m + 64 * n)) << m << "," << n << " transposed " << transposed;
  }
}

}  // namespace
