// The composed kernels' blocks on the CPU (gemm/tile_scheduler_sm90.hpp, collective_epilogue_sm90.hpp,
// prepared_gemm.hpp, watchdog.hpp): the schedulers that own the loop walked for every block of a grid,
// their fixups run thread by thread, the epilogue's buffer rule, the path a prepared GEMM names, and
// the watchdog's bound and line. The kernels that compose them run on the GPU in tests/ch11 and ch12.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/prepared_gemm.hpp"
#include "gemm/tile_scheduler_sm90.hpp"
#include "gemm/watchdog.hpp"

using namespace mm;

namespace {

// ---- The store pipeline's buffer rule ----

// Issues `tiles` tiles of `per_tile` pieces through `buffers` buffers, choosing each piece's buffer
// with `buffer_of(piece overall, piece in tile)`, the stores completing as late as the rule allows
// (tma_store_wait<B - 1> leaves the B - 1 newest in flight). True when no buffer is ever refilled while
// a store in flight still reads it.
template <class BufferOf>
bool never_refills_a_buffer_in_flight(int buffers, int per_tile, int tiles, BufferOf buffer_of) {
  std::deque<int> in_flight;  // the buffers the stores in flight read, oldest first
  int piece = 0;
  for (int tile = 0; tile < tiles; ++tile)
    for (int j = 0; j < per_tile; ++j, ++piece) {
      while (int(in_flight.size()) > buffers - 1) in_flight.pop_front();  // acquire(): wait_group.read<B-1>
      const int b = buffer_of(piece, j);
      for (int busy : in_flight)
        if (busy == b) return false;
      in_flight.push_back(b);
    }
  return true;
}

TEST(EpilogueStorePipeline, NeverRefillsABufferAStoreStillReads) {
  for (int per_tile = 1; per_tile <= 4; ++per_tile) {
    auto check = [&](auto pipeline) {
      using P = decltype(pipeline);
      EXPECT_TRUE(never_refills_a_buffer_in_flight(P::kBuffers, per_tile, 5, [&](int, int) {
        const int b = pipeline.buffer();
        pipeline.advance();
        return b;
      })) << P::kBuffers << " buffers, " << per_tile << " pieces a tile";
    };
    check(EpilogueStorePipeline<1>{});
    check(EpilogueStorePipeline<2>{});
    check(EpilogueStorePipeline<3>{});
    check(EpilogueStorePipeline<4>{});
  }
  EXPECT_EQ(EpilogueStorePipeline<2>::kStoresInFlight, 1);
  EXPECT_EQ(EpilogueStorePipeline<3>::kStoresInFlight, 2);
}

TEST(EpilogueStorePipeline, CountingWithinATileIsWhatBroke) {
  // The bug the rule replaced: the buffer chosen by the piece's index in its tile, j % 2. With 3
  // pieces a tile (a 192-column bf16 tile) the next tile's first piece refills the buffer of the
  // store issued last; with an even count it happens to be right.
  EXPECT_FALSE(never_refills_a_buffer_in_flight(2, 3, 3, [](int, int j) { return j % 2; }));
  EXPECT_TRUE(never_refills_a_buffer_in_flight(2, 4, 3, [](int, int j) { return j % 2; }));
  EXPECT_TRUE(never_refills_a_buffer_in_flight(2, 3, 3, [](int piece, int) { return piece % 2; }));
}

// ---- The schedulers, walked for every block ----

// Each block's units, in its order, as its producer and its consumers walk them.
template <class Scheduler>
std::vector<std::vector<WorkTileInfo>> walk(const typename Scheduler::Params& params, int blocks) {
  std::vector<std::vector<WorkTileInfo>> out(static_cast<std::size_t>(blocks));
  for (int b = 0; b < blocks; ++b) {
    Scheduler s(params, b, blocks);
    for (WorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work()) out[std::size_t(b)].push_back(w);
  }
  return out;
}

// Every (tile, K step) of a tiles_m × tiles_n × k_steps problem in exactly one unit, and exactly one
// unit per tile that computes its epilogue.
template <class Scheduler>
void expect_covers_exactly_once(const Scheduler& any, const std::vector<std::vector<WorkTileInfo>>& units,
                                const GroupedTileScheduler& tiles, int k_steps, const std::string& what) {
  std::map<std::pair<std::int64_t, int>, int> hits;
  std::map<std::int64_t, int> epilogues;
  for (const auto& block : units)
    for (const WorkTileInfo& w : block) {
      ASSERT_LT(w.k_begin, w.k_end) << what;
      const TileCoord c = tiles.tile(w.tile_index);
      ASSERT_EQ(c.m, w.tile.m) << what;
      ASSERT_EQ(c.n, w.tile.n) << what;
      for (int k = w.k_begin; k < w.k_end; ++k) hits[{w.tile_index, k}] += 1;
      if (any.compute_epilogue(w)) epilogues[w.tile_index] += 1;
    }
  ASSERT_EQ(std::int64_t(hits.size()), tiles.size() * k_steps) << what;
  for (const auto& [key, n] : hits) ASSERT_EQ(n, 1) << what << ": tile " << key.first << " K step " << key.second;
  ASSERT_EQ(std::int64_t(epilogues.size()), tiles.size()) << what;
  for (const auto& [tile, n] : epilogues) ASSERT_EQ(n, 1) << what << ": tile " << tile;
}

TEST(TileSchedulersSm90, PersistentHandsOutEveryTileOnceWithAllItsKSteps) {
  for (int blocks : {1, 3, 7, 132})
    for (auto [tm, tn] : {std::pair{1, 1}, {7, 3}, {32, 16}}) {
      const GroupedTileScheduler tiles{tm, tn, 16};
      const auto params = PersistentTileScheduler::to_underlying_arguments(tiles, 5);
      const auto units = walk<PersistentTileScheduler>(params, blocks);
      expect_covers_exactly_once(PersistentTileScheduler(params, 0, blocks), units, tiles, 5,
                                 std::to_string(blocks) + " blocks");
      // Block b's tiles are b, b + G, ...: the tiles in flight are G neighbours in the grouped order.
      for (int b = 0; b < blocks; ++b)
        for (std::size_t j = 0; j < units[std::size_t(b)].size(); ++j)
          EXPECT_EQ(units[std::size_t(b)][j].tile_index, b + std::int64_t(j) * blocks);
    }
}

TEST(TileSchedulersSm90, AdvancingTwoAtATimeSplitsABlocksUnitsBetweenTwoConsumers) {
  // The ping-pong kernel's consumers: consumer 0 takes the block's units 0, 2, ..., consumer 1 units
  // 1, 3, ...; together, each unit once.
  const GroupedTileScheduler tiles{9, 5, 4};
  const auto params = PersistentTileScheduler::to_underlying_arguments(tiles, 3);
  const int blocks = 4;
  for (int b = 0; b < blocks; ++b) {
    std::vector<std::int64_t> seen;
    for (int c = 0; c < 2; ++c) {
      PersistentTileScheduler s(params, b, blocks);
      WorkTileInfo w = s.get_current_work();
      if (c == 1) w = s.advance_to_next_work();
      for (; w.is_valid(); w = s.advance_to_next_work(2)) seen.push_back(w.tile_index);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::int64_t> want;
    for (std::int64_t t = b; t < tiles.size(); t += blocks) want.push_back(t);
    EXPECT_EQ(seen, want) << "block " << b;
  }
}

TEST(TileSchedulersSm90, SplitKCoversEveryKStepOnceAndOnlyTheLastSliceStoresC) {
  for (int wanted : {1, 2, 3, 7})
    for (int blocks : {1, 5, 64}) {
      const GroupedTileScheduler tiles{3, 4, 2};
      const SplitKTileScheduler split = SplitKTileScheduler::make(tiles, 13, wanted);
      const auto params = SplitKScheduler<8>::to_underlying_arguments(split);
      const auto units = walk<SplitKScheduler<8>>(params, blocks);
      expect_covers_exactly_once(SplitKScheduler<8>(params, 0, blocks), units, tiles, 13,
                                 std::to_string(wanted) + " slices, " + std::to_string(blocks) + " blocks");
      for (const auto& block : units)
        for (const WorkTileInfo& w : block)
          EXPECT_EQ(SplitKScheduler<8>(params, 0, blocks).compute_epilogue(w), w.split == split.splits - 1);
    }
}

TEST(TileSchedulersSm90, StreamKCoversEveryKStepOnceAndTheFinisherStoresC) {
  for (auto [tm, tn, k_steps, blocks] : {std::tuple{4, 4, 16, 6}, {1, 1, 64, 8}, {5, 3, 9, 7}, {33, 3, 4, 132}}) {
    const GroupedTileScheduler tiles{tm, tn, 16};
    const StreamKTileScheduler sk = StreamKTileScheduler::make(tiles, k_steps, blocks);
    const auto params = StreamKScheduler<8>::to_underlying_arguments(sk);
    EXPECT_EQ(StreamKScheduler<8>::units(params), blocks);
    const auto units = walk<StreamKScheduler<8>>(params, blocks);
    expect_covers_exactly_once(StreamKScheduler<8>(params, 0, blocks), units, tiles, k_steps,
                               std::to_string(tm) + "x" + std::to_string(tn) + " tiles on " + std::to_string(blocks));
  }
}

// Clusters: the scheduler walks cluster tiles (tile_order of a clustered configuration), block_work
// gives each block of a cluster its own tile of the cluster tile. Walked for every block of the grid
// (cluster c = block / size, rank = block % size): every tile of C (and the padding tiles past its edge
// that round it to whole clusters) gets each K step exactly once, a cluster's blocks walk the same
// number of units with the same K steps in the same order (they share stages), and their tile indices
// (the fixup's slots) are distinct.
template <int ClusterM, int ClusterN>
struct ClusterCfg {
  using BM = Int<128>;
  using BN = Int<128>;
  using BK = Int<64>;
  static constexpr int kGroupM = 16, kClusterM = ClusterM, kClusterN = ClusterN;
};

template <class Cfg, class Scheduler>
void expect_cluster_walk(const typename Scheduler::Params& params, int clusters, int tiles_m, int tiles_n, int k_steps,
                         const std::string& what) {
  constexpr int size = Cfg::kClusterM * Cfg::kClusterN;
  std::map<std::tuple<int, int, int>, int> hits;  // (tile m, tile n, K step)
  std::map<std::int64_t, std::pair<int, int>> slots;  // block tile index -> its tile
  for (int c = 0; c < clusters; ++c) {
    const auto units = walk<Scheduler>(params, clusters)[std::size_t(c)];
    std::vector<std::vector<WorkTileInfo>> blocks(size);
    for (int r = 0; r < size; ++r)
      for (const WorkTileInfo& w : units) blocks[std::size_t(r)].push_back(block_work<Cfg>(w, r));
    for (int r = 0; r < size; ++r)
      for (std::size_t i = 0; i < units.size(); ++i) {
        const WorkTileInfo& w = blocks[std::size_t(r)][i];
        ASSERT_EQ(w.k_begin, blocks[0][i].k_begin) << what;  // the cluster's blocks in lock-step
        ASSERT_EQ(w.k_end, blocks[0][i].k_end) << what;
        ASSERT_EQ(w.tile.m / Cfg::kClusterM, units[i].tile.m) << what;
        ASSERT_EQ(w.tile.n / Cfg::kClusterN, units[i].tile.n) << what;
        const auto [it, fresh] = slots.emplace(w.tile_index, std::pair{w.tile.m, w.tile.n});
        if (!fresh) {
          ASSERT_EQ(it->second, (std::pair{w.tile.m, w.tile.n})) << what << ": two tiles share slot " << w.tile_index;
        }
        for (int k = w.k_begin; k < w.k_end; ++k) hits[{w.tile.m, w.tile.n, k}] += 1;
      }
  }
  const int padded_m = (tiles_m + Cfg::kClusterM - 1) / Cfg::kClusterM * Cfg::kClusterM;
  const int padded_n = (tiles_n + Cfg::kClusterN - 1) / Cfg::kClusterN * Cfg::kClusterN;
  ASSERT_EQ(std::int64_t(hits.size()), std::int64_t(padded_m) * padded_n * k_steps) << what;
  for (const auto& [key, n] : hits) ASSERT_EQ(n, 1) << what << ": tile (" << std::get<0>(key) << "," << std::get<1>(key) << ")";
  EXPECT_EQ(std::int64_t(slots.size()), std::int64_t(padded_m) * padded_n) << what;
}

TEST(TileSchedulersSm90, ClustersTakeWholeClusterTilesInLockStepEachBlockItsOwnTile) {
  // 5 × 7 tiles of 128×128 (M = 600, N = 800: both edges cut a cluster of 2), 10 K steps of 64.
  const GemmProblem p{600, 800, 640};
  auto check = [&](auto cfg, const std::string& shape) {
    using Cfg = decltype(cfg);
    const GroupedTileScheduler order = tile_order<Cfg>(p);
    EXPECT_EQ(order.tiles_m, (5 + Cfg::kClusterM - 1) / Cfg::kClusterM) << shape;
    EXPECT_EQ(order.tiles_n, (7 + Cfg::kClusterN - 1) / Cfg::kClusterN) << shape;
    EXPECT_EQ(order.group_m, 16 / Cfg::kClusterM) << shape;
    for (int clusters : {1, 3, 66}) {
      expect_cluster_walk<Cfg, PersistentTileScheduler>(tile_schedule<Cfg, PersistentTileScheduler>(p), clusters, 5, 7, 10,
                                                        shape + " whole, " + std::to_string(clusters) + " clusters");
      expect_cluster_walk<Cfg, SplitKScheduler<8>>(tile_schedule<Cfg, SplitKScheduler<8>>(p, 3), clusters, 5, 7, 10,
                                                   shape + " 3 slices, " + std::to_string(clusters) + " clusters");
    }
  };
  check(ClusterCfg<1, 1>{}, "1x1");
  check(ClusterCfg<2, 1>{}, "2x1");
  check(ClusterCfg<1, 2>{}, "1x2");
  check(ClusterCfg<2, 2>{}, "2x2");
}

// The split-K workspace of a clustered kernel has a slot per block tile: block_work's tile_index runs
// to cluster tiles × blocks per cluster.
TEST(TileSchedulersSm90, ClusteredSplitKWorkspaceCountsEveryBlocksTile) {
  using Cfg = ClusterCfg<1, 2>;
  const auto params = tile_schedule<Cfg, SplitKScheduler<8>>(GemmProblem{128, 1024, 640}, 2);  // 4 cluster tiles
  EXPECT_EQ(params.units.tiles.size(), 4);
  EXPECT_EQ(SplitKScheduler<8>::workspace_bytes(params, 2, 2), 2 * SplitKScheduler<8>::workspace_bytes(params, 2));
  auto p = params;
  std::vector<unsigned char> workspace(SplitKScheduler<8>::workspace_bytes(params, 2, 2));
  SplitKScheduler<8>::initialize_workspace(p, workspace.data(), 2, 2);
  EXPECT_EQ(p.fixup.tiles, 8);
  const WorkTileInfo last = block_work<Cfg>(SplitKScheduler<8>(p, 3, 4).get_current_work(), 1);  // cluster tile 3, rank 1
  EXPECT_EQ(last.tile_index, 7);
  EXPECT_LE(reinterpret_cast<unsigned char*>(p.fixup.counter(last.tile_index, 1) + 1), workspace.data() + workspace.size());
}

// The fixups run on the host, thread by thread (a consumer warpgroup's 128 threads in turn; the named
// barriers do nothing there): each unit's accumulators hold 1000·(its split) + thread + value index,
// and the unit that stores C must hold the sum over all units of the tile.
TEST(TileSchedulersSm90, SplitKFixupAddsEverySliceOfTheTile) {
  constexpr int kAcc = 8, kConsumers = 2;
  const GroupedTileScheduler tiles{2, 3, 2};
  const SplitKTileScheduler split = SplitKTileScheduler::make(tiles, 12, 4);
  auto params = SplitKScheduler<kAcc>::to_underlying_arguments(split);
  std::vector<unsigned char> workspace(SplitKScheduler<kAcc>::workspace_bytes(params, kConsumers), 0);
  SplitKScheduler<kAcc>::initialize_workspace(params, workspace.data(), kConsumers);
  const SplitKScheduler<kAcc> s(params, 0, 1);
  WatchdogState watchdog;  // (on the host, no word: the fixup's wait never spins there)
  // Slices in order of the units (slice-major): the last slice of each tile comes after the others.
  for (std::int64_t i = 0; i < split.size(); ++i) {
    WorkTileInfo w;
    static_cast<WorkUnit&>(w) = split.unit(i);
    w.valid = true;
    for (int cw = 0; cw < kConsumers; ++cw)
      for (int t = 0; t < 128; ++t) {
        auto acc = make_gmma_accumulators<2 * kAcc>();  // ((2,2,kAcc/4),1,1): a 64×16 wgmma's fragment
        for (int v = 0; v < kAcc; ++v) acc(v) = float(1000 * (w.split + 1) + 10 * t + v + 100000 * cw);
        s.fixup(w, acc, cw, t, watchdog);
        if (!s.compute_epilogue(w)) continue;
        for (int v = 0; v < kAcc; ++v) {
          float want = 0;
          for (int sl = 0; sl < split.splits; ++sl) want += float(1000 * (sl + 1) + 10 * t + v + 100000 * cw);
          ASSERT_EQ(acc(v), want) << "tile " << w.tile_index << " warpgroup " << cw << " thread " << t;
        }
      }
  }
  EXPECT_FALSE(watchdog.gave_up());
}

// ---- What a prepared GEMM names ----

TEST(PreparedGemm, ALambdaConvertsWithNoPathAndAPathIsKept) {
  int calls = 0;
  PreparedGemm plain = [&](cudaStream_t) { ++calls; };
  EXPECT_TRUE(plain.path.empty()) << "the harness then writes the step's own name";
  plain(nullptr);
  const PreparedGemm named([&](cudaStream_t) { calls += 10; }, "split_k 128x128 x3");
  named(nullptr);
  EXPECT_EQ(named.path, "split_k 128x128 x3");
  EXPECT_EQ(calls, 11);
}

// ---- The watchdog's host side ----

TEST(Watchdog, BoundIsFourSecondsScaledUnderAToolAndOverriddenByTheEnvironment) {
  EXPECT_EQ(watchdog_bound_ns(nullptr, false), kMbarrierTimeoutNs);
  EXPECT_EQ(watchdog_bound_ns(nullptr, true), kMbarrierTimeoutNs * kToolBoundScale);
  EXPECT_EQ(watchdog_bound_ns("30", true), 30'000'000'000ull);
  EXPECT_EQ(watchdog_bound_ns("0.5", false), 500'000'000ull);
  for (const char* bad : {"", "0", "-3", "ten", "5s"}) EXPECT_EQ(watchdog_bound_ns(bad, false), kMbarrierTimeoutNs) << bad;
}

TEST(Watchdog, ABadMmWatchdogSecondsIsRefusedWithOneLine) {
  EXPECT_TRUE(watchdog_seconds_valid(nullptr));
  EXPECT_TRUE(watchdog_seconds_valid(""));
  EXPECT_TRUE(watchdog_seconds_valid("30"));
  EXPECT_TRUE(watchdog_seconds_valid("0.5"));
  for (const char* bad : {"0", "-3", "ten", "5s", "1e10"}) EXPECT_FALSE(watchdog_seconds_valid(bad)) << bad;
  EXPECT_EQ(watchdog_bound_or_exit("30", false), 30'000'000'000ull);
  EXPECT_EXIT(watchdog_bound_or_exit("5s", false), testing::ExitedWithCode(2),
              "MM_WATCHDOG_SECONDS=5s: needs a positive number of seconds");
}

TEST(Watchdog, RecognizesACudaToolInjectedIntoTheProcess) {
  // What each tool sets (compute-sanitizer 13.0's variables as seen on the H200 machine); the test
  // clears them all first, then sets one at a time, and restores them.
  const char* names[] = {"CUDA_INJECTION64_PATH", "NV_SANITIZER_INJECTION_PORT_BASE", "NVTX_INJECTION64_PATH", "LD_PRELOAD"};
  std::map<std::string, std::string> saved;
  for (const char* n : names)
    if (const char* v = std::getenv(n)) saved[n] = v;
  for (const char* n : names) ::unsetenv(n);
  EXPECT_FALSE(running_under_cuda_tool());
  const std::pair<const char*, const char*> tools[] = {
      {"CUDA_INJECTION64_PATH", "/opt/nvidia/nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherPlaceholder.so"},
      {"NV_SANITIZER_INJECTION_PORT_BASE", "49152"},
      {"NVTX_INJECTION64_PATH", "libsanitizer-collection.so"},
      {"LD_PRELOAD", "/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so"}};
  for (const auto& [name, value] : tools) {
    ::setenv(name, value, 1);
    EXPECT_TRUE(running_under_cuda_tool()) << name;
    ::unsetenv(name);
  }
  ::setenv("NVTX_INJECTION64_PATH", "libsomething-else.so", 1);  // NVTX's own tools are not a CUDA tool
  EXPECT_FALSE(running_under_cuda_tool());
  ::unsetenv("NVTX_INJECTION64_PATH");
  for (const auto& [name, value] : saved) ::setenv(name.c_str(), value.c_str(), 1);
}

TEST(Watchdog, TheLineNamesTheBlockTheThreadAndTheBarrier) {
  WatchdogRecord r{};
  EXPECT_EQ(describe_watchdog_record(r, kMbarrierTimeoutNs), "") << "nothing fired: no line";
  r = {1, 3, 130, std::uint32_t(WatchdogSite::consumer_wait), 2, 1, 0x400};
  const std::string line = describe_watchdog_record(r, kMbarrierTimeoutNs);
  EXPECT_NE(line.find("block 3, thread 130"), std::string::npos) << line;
  EXPECT_NE(line.find("a consumer waiting for stage 2 to land"), std::string::npos) << line;
  EXPECT_NE(line.find("parity 1"), std::string::npos) << line;
  EXPECT_NE(line.find("more than 4 s"), std::string::npos) << line;
  r.site = std::uint32_t(WatchdogSite::fixup);
  EXPECT_NE(describe_watchdog_record(r, kMbarrierTimeoutNs).find("2 partial sums of tile 1024"), std::string::npos);
}

TEST(Watchdog, AWaitThatGaveUpIsPackedIntoTheBlocksWordAndUnpackedIntoTheRecord) {
  EXPECT_EQ(unpack_watchdog(0, 3).fired, 0u) << "a word of 0: no wait gave up";
  const std::uint64_t word = pack_watchdog(WatchdogSite::consumer_wait, 5, 1, 0x38020, 130);  // 227 KB window
  EXPECT_NE(word, 0u);
  const WatchdogRecord r = unpack_watchdog(word, 3);
  EXPECT_EQ(r.fired, 1u);
  EXPECT_EQ(r.block, 3u);
  EXPECT_EQ(r.thread, 130u);
  EXPECT_EQ(r.site, std::uint32_t(WatchdogSite::consumer_wait));
  EXPECT_EQ(r.stage, 5u);
  EXPECT_EQ(r.parity, 1u);
  EXPECT_EQ(r.barrier, 0x38020u);
  // Thread 0 at stage 0, parity 0, barrier 0 is still a wait that gave up.
  EXPECT_NE(pack_watchdog(WatchdogSite::other, 0, 0, 0, 0), 0u);
  const WatchdogRecord fixup = unpack_watchdog(pack_watchdog(WatchdogSite::fixup, 3, 0, 1234, 7), 0);
  EXPECT_EQ(fixup.site, std::uint32_t(WatchdogSite::fixup));
  EXPECT_EQ(fixup.stage, 3u);
  EXPECT_EQ(fixup.barrier, 1234u);
  EXPECT_NE(describe_watchdog_record(fixup, kMbarrierTimeoutNs).find("3 partial sums of tile 1234"), std::string::npos);
}

}  // namespace
