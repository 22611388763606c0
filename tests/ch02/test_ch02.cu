// Chapter 02: every step of the chapter's list against the fp64 reference (GPU), and the launch
// arithmetic and access patterns of its two mappings on the CPU (no GPU needed). Every test name
// starts with "ch02", so that `ctest -R ch02` selects this chapter.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "02_naive_gpu/naive_gemm.cuh"
#include "02_naive_gpu/steps.hpp"
#include "gpu_test.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;
using mm::ch02::NaiveCoalescedCfg;
using mm::ch02::NaiveStridedCfg;

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;

// ---- GPU: every step, every size, against the fp64 reference (output poisoned first) ----

// Every step of the list at every size of the first GPU chapters (gpu_test.hpp), named
// "naive_strided_31x33x17" in ctest's list.
class NaiveGemm : public ::testing::TestWithParam<std::tuple<mm::GemmKernel<float, float>, Size>> {};

TEST_P(NaiveGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  mm::test::expect_matches_fp64(std::get<0>(GetParam()), problem(std::get<1>(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(ch02, NaiveGemm,
                         ::testing::Combine(::testing::ValuesIn(mm::ch02::steps()),
                                            ::testing::ValuesIn(mm::test::first_gpu_sizes())),
                         mm::test::param_name);

// ---- CPU: the grid each configuration computes covers C exactly once ----

// Runs the kernel's own index arithmetic (naive_element) for every thread of the launch and
// counts how often each element of C is reached; threads outside C are counted separately.
struct Coverage {
  std::vector<int> hits;  // per element of C, row-major
  std::int64_t outside = 0;
};

template <class Cfg>
Coverage cover(const GemmProblem& p, dim3 grid, dim3 block) {
  Coverage c{std::vector<int>(std::size_t(p.m * p.n), 0), 0};
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx)
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx) {
          const mm::ch02::RowCol e = mm::ch02::naive_element<Cfg>(dim3(bx, by), block, dim3(tx, ty));
          if (e.row < p.m && e.col < p.n) ++c.hits[std::size_t(e.row * p.n + e.col)];
          else ++c.outside;
        }
  return c;
}

// One configuration of the kernel (a mapping of threads to C) as a test parameter: its launch
// arithmetic and coverage, named as the step of the list that uses it.
struct Mapping {
  const char* name;
  dim3 (*grid)(const GemmProblem&, dim3);
  Coverage (*cover)(const GemmProblem&, dim3, dim3);
  mm::ch02::GridExtent (*extent)(const GemmProblem&);
};
void PrintTo(const Mapping& m, std::ostream* os) { *os << m.name; }

template <class Cfg>
Mapping mapping(const char* name) {
  return {name, mm::ch02::naive_grid<Cfg>, cover<Cfg>, Cfg::grid_extent};
}
const Mapping kMappings[] = {mapping<NaiveStridedCfg>("naive_strided"), mapping<NaiveCoalescedCfg>("naive_coalesced")};

class NaiveGridCover : public ::testing::TestWithParam<std::tuple<Mapping, Size>> {};

TEST_P(NaiveGridCover, CoversEveryElementOfCExactlyOnce) {
  const Mapping& map = std::get<0>(GetParam());
  const GemmProblem p = problem(std::get<1>(GetParam()));
  const dim3 block = mm::ch02::naive_block<NaiveStridedCfg>();  // both configurations: 32×8
  const dim3 grid = map.grid(p, block);
  const Coverage c = map.cover(p, grid, block);
  std::int64_t missed = 0, twice = 0;
  for (int h : c.hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0) << map.name << " at " << size_name(p);
  EXPECT_EQ(twice, 0) << map.name << " at " << size_name(p);
  // No whole block of wasted threads: the grid overhangs C by less than one block per dimension.
  const mm::ch02::GridExtent e = map.extent(p);
  EXPECT_LT(std::int64_t(grid.x) * block.x - e.x, block.x);
  EXPECT_LT(std::int64_t(grid.y) * block.y - e.y, block.y);
}

INSTANTIATE_TEST_SUITE_P(ch02, NaiveGridCover,
                         ::testing::Combine(::testing::ValuesIn(kMappings),
                                            ::testing::ValuesIn(mm::test::first_gpu_sizes())),
                         mm::test::param_name);

TEST(ch02_NaiveGrid, StridedPutsRowsOnXCoalescedPutsColumnsOnX) {
  const GemmProblem p{100, 3000, 7};
  const dim3 block(32, 8);
  const dim3 s = mm::ch02::naive_grid<NaiveStridedCfg>(p, block);
  const dim3 c = mm::ch02::naive_grid<NaiveCoalescedCfg>(p, block);
  EXPECT_EQ(s.x, 4u);    // ceil(100 / 32) blocks of rows
  EXPECT_EQ(s.y, 375u);  // ceil(3000 / 8) blocks of columns
  EXPECT_EQ(c.x, 94u);   // ceil(3000 / 32) blocks of columns
  EXPECT_EQ(c.y, 13u);   // ceil(100 / 8) blocks of rows
}

TEST(ch02_NaiveGrid, RejectsWhatTheGridCannotHold) {
  // grid.y holds at most 65535 blocks of 8: 524280 rows (coalesced) or columns (strided).
  EXPECT_EQ(mm::ch02::naive_rejects<NaiveCoalescedCfg>(GemmProblem{524280, 1, 1}), "");
  EXPECT_NE(mm::ch02::naive_rejects<NaiveCoalescedCfg>(GemmProblem{524281, 1, 1}), "");
  EXPECT_EQ(mm::ch02::naive_rejects<NaiveStridedCfg>(GemmProblem{524281, 1, 1}), "");
  EXPECT_NE(mm::ch02::naive_rejects<NaiveStridedCfg>(GemmProblem{1, 524281, 1}), "");
  GemmProblem col_major_b{64, 64, 64};
  col_major_b.b = mm::Order::col;
  EXPECT_NE(mm::ch02::naive_rejects<NaiveCoalescedCfg>(col_major_b), "");
  EXPECT_THROW(mm::ch02::launch_naive<NaiveCoalescedCfg>(col_major_b, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

// The list's rejects are the configurations' own (so the binary refuses what the launch would throw on).
TEST(ch02_NaiveGrid, TheListRejectsWhatItsConfigurationsReject) {
  const GemmProblem tall{524281, 1, 1};
  const mm::GemmKernel<float, float> strided = mm::test::step_named(mm::ch02::steps(), "naive_strided");
  const mm::GemmKernel<float, float> coalesced = mm::test::step_named(mm::ch02::steps(), "naive_coalesced");
  EXPECT_EQ(strided.rejects(tall), "");
  EXPECT_EQ(coalesced.rejects(tall), "needs M <= 524280 (65535 blocks of 8 along grid y)");
  EXPECT_EQ(mm::ch02::best().name, "ch02_naive_coalesced");
  EXPECT_EQ(mm::ch02::best().rejects(tall), coalesced.rejects(tall));
}

// ---- CPU: the tutorial's <<<blocksPerGridX, blocksPerGridY>>> launch misses most of C ----

// What the tutorial's `matMul<<<blocksPerGridX, blocksPerGridY>>>` really launches. The two numbers
// of <<<a, b>>> are the grid and the *block*, so this is a 1-D grid of ceil(M/256) blocks of
// ceil(N/256) threads, not a 2-D grid of 256-thread blocks.
struct LaunchConfig {
  dim3 grid, block;
};
LaunchConfig tutorial_launch_as_written(const GemmProblem& p) {
  const std::int64_t threads_per_block = 256;
  const auto blocks_x = unsigned(mm::launch::ceil_div(p.m, threads_per_block));
  const auto blocks_y = unsigned(mm::launch::ceil_div(p.n, threads_per_block));
  return {dim3(blocks_x), dim3(blocks_y)};  // what <<<blocks_x, blocks_y>>> converts its two arguments to
}

TEST(ch02_TutorialLaunchBug, LaunchesA1DGridThatMissesMostOfC) {
  const GemmProblem p{1024, 1024, 1024};
  const LaunchConfig wrong = tutorial_launch_as_written(p);
  // <<<4, 4>>>: a grid of 4 blocks (x only) of 4 threads (x only), not 4×4 blocks of 256 threads.
  EXPECT_EQ(wrong.grid.x, 4u);
  EXPECT_EQ(wrong.grid.y, 1u);
  EXPECT_EQ(wrong.block.x, 4u);
  EXPECT_EQ(wrong.block.y, 1u);
  // The tutorial's kernel uses the strided mapping (i from x is the row, j from y the column).
  const Coverage c = cover<NaiveStridedCfg>(p, wrong.grid, wrong.block);
  std::int64_t reached = 0;
  for (int h : c.hits) reached += h > 0;
  EXPECT_EQ(reached, 16);  // 16 threads in all: C(0..15, 0), of 1048576 elements
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(c.hits[std::size_t(i * p.n)], 1) << "C(" << i << ", 0)";
}

TEST(ch02_TutorialLaunchBug, NeverCoversCForAnySizeBeyondOneElement) {
  for (const Size& size : mm::test::first_gpu_sizes()) {
    const GemmProblem p = problem(size);
    if (p.m * p.n == 1) continue;  // a 1×1 C is the one case the 1-D launch happens to cover
    const LaunchConfig wrong = tutorial_launch_as_written(p);
    const Coverage c = cover<NaiveStridedCfg>(p, wrong.grid, wrong.block);
    std::int64_t reached = 0;
    for (int h : c.hits) reached += h > 0;
    EXPECT_LT(reached, p.m * p.n) << size_name(p);
  }
}

// ---- CPU: the memory access pattern of one warp, in 32-byte sectors ----

// The sectors (32-byte aligned pieces of memory, the unit the memory system moves) touched when
// the 32 lanes of warp 0 of block (0, 0) read A(i, k) and B(k, j) at step k = 0, i.e. offsets
// i*K and j; and when they write C(i, j), offset i*N + j.
struct WarpSectors {
  std::size_t a, b, c;
};

template <class Cfg>
WarpSectors warp_sectors(const GemmProblem& p) {
  std::set<std::int64_t> a, b, c;
  const dim3 block = mm::ch02::naive_block<Cfg>();
  for (unsigned lane = 0; lane < 32; ++lane) {
    const mm::ch02::RowCol e = mm::ch02::naive_element<Cfg>(dim3(0, 0), block, dim3(lane, 0));
    a.insert(e.row * p.k * 4 / 32);  // byte offset / 32: the sector
    b.insert(e.col * 4 / 32);
    c.insert((e.row * p.n + e.col) * 4 / 32);
  }
  return {a.size(), b.size(), c.size()};
}

TEST(ch02_AccessPattern, CoalescedWarpTouchesFourSectorsOfBAndOneOfA) {
  const WarpSectors s = warp_sectors<NaiveCoalescedCfg>(GemmProblem{4096, 4096, 4096});
  EXPECT_EQ(s.a, 1u);  // all 32 lanes read the same A(i, k): one broadcast
  EXPECT_EQ(s.b, 4u);  // 32 consecutive floats = 128 bytes = 4 sectors, all of it used
  EXPECT_EQ(s.c, 4u);
}

TEST(ch02_AccessPattern, StridedWarpTouchesThirtyTwoSectorsOfA) {
  const WarpSectors s = warp_sectors<NaiveStridedCfg>(GemmProblem{4096, 4096, 4096});
  EXPECT_EQ(s.a, 32u);  // 32 rows of A, 16 KiB apart: a sector each, 4 of its 32 bytes used
  EXPECT_EQ(s.b, 1u);   // all lanes read the same B(k, j)
  EXPECT_EQ(s.c, 32u);  // and C is written one float per sector
}

// The naive kernel computes offsets only for elements inside the matrices (a thread outside C returns
// first), so the 32-bit rule allows exactly 2^31 elements per matrix, with no rounding to tiles.
TEST(ch02_NaiveGrid, RejectsOffsetsBeyond32Bits) {
  for (const mm::GemmKernel<float, float>& step : mm::ch02::steps()) {
    EXPECT_EQ(step.rejects(GemmProblem{16384, 131072, 1}), "") << step.name;  // C: 2^31 elements
    EXPECT_NE(step.rejects(GemmProblem{16385, 131072, 1}), "") << step.name;
    EXPECT_EQ(step.rejects(GemmProblem{2, 1, 1073741824}), "") << step.name;  // A: 2^31 elements
    EXPECT_NE(step.rejects(GemmProblem{2, 1, 1073741825}), "") << step.name;
    EXPECT_EQ(step.rejects(GemmProblem{1, 1, 2147483647}), "") << step.name;  // no K tiles to round
  }
}

}  // namespace
