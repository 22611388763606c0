// Chapter 02: both naive kernels against the fp64 reference (GPU), and the launch arithmetic
// and access patterns on the CPU (no GPU needed). Every test name starts with "ch02", so that
// `ctest -R ch02` selects this chapter.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "02_naive_gpu/naive_gpu.cuh"
#include "gpu_test.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;
using mm::ch02::Mapping;

struct NamedKernel {
  const char* name;
  mm::test::GemmLaunchFn launch;
  Mapping mapping;
};

void PrintTo(const NamedKernel& k, std::ostream* os) { *os << k.name; }

const NamedKernel kKernels[] = {
    {"naive_strided", mm::ch02::launch_naive_strided, Mapping::strided},
    {"naive_coalesced", mm::ch02::launch_naive_coalesced, Mapping::coalesced},
};

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;

// Every kernel at every size of the first GPU chapters (gpu_test.hpp), named "naive_strided_31x33x17" in ctest's list.
const auto kKernelsAndSizes =
    ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(mm::test::first_gpu_sizes()));

// ---- GPU: every kernel, every size, against the fp64 reference (output poisoned first) ----

class NaiveGemm : public ::testing::TestWithParam<std::tuple<NamedKernel, Size>> {};

TEST_P(NaiveGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  mm::test::expect_matches_fp64(std::get<0>(GetParam()), problem(std::get<1>(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(ch02, NaiveGemm, kKernelsAndSizes, mm::test::param_name);

// ---- CPU: the grid each launcher computes covers C exactly once ----

// Runs the kernel's own index arithmetic (naive_element) for every thread of the launch and
// counts how often each element of C is reached; threads outside C are counted separately.
struct Coverage {
  std::vector<int> hits;  // per element of C, row-major
  std::int64_t outside = 0;
};

template <Mapping map>
Coverage cover(const GemmProblem& p, dim3 grid, dim3 block) {
  Coverage c{std::vector<int>(std::size_t(p.m * p.n), 0), 0};
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx)
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx) {
          const mm::ch02::RowCol e = mm::ch02::naive_element<map>(dim3(bx, by), block, dim3(tx, ty));
          if (e.row < p.m && e.col < p.n) ++c.hits[std::size_t(e.row * p.n + e.col)];
          else ++c.outside;
        }
  return c;
}

Coverage cover(Mapping map, const GemmProblem& p, dim3 grid, dim3 block) {
  return map == Mapping::strided ? cover<Mapping::strided>(p, grid, block) : cover<Mapping::coalesced>(p, grid, block);
}

class NaiveGridCover : public ::testing::TestWithParam<std::tuple<NamedKernel, Size>> {};

TEST_P(NaiveGridCover, CoversEveryElementOfCExactlyOnce) {
  const NamedKernel& kernel = std::get<0>(GetParam());
  const GemmProblem p = problem(std::get<1>(GetParam()));
  const dim3 block(mm::ch02::naive_block_x, mm::ch02::naive_block_y);
  const dim3 grid = mm::ch02::naive_grid(p, block, kernel.mapping);
  const Coverage c = cover(kernel.mapping, p, grid, block);
  std::int64_t missed = 0, twice = 0;
  for (int h : c.hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0) << kernel.name << " at " << size_name(p);
  EXPECT_EQ(twice, 0) << kernel.name << " at " << size_name(p);
  // No whole block of wasted threads: the grid overhangs C by less than one block per dimension.
  const std::int64_t along_x = kernel.mapping == Mapping::strided ? p.m : p.n;
  const std::int64_t along_y = kernel.mapping == Mapping::strided ? p.n : p.m;
  EXPECT_LT(std::int64_t(grid.x) * block.x - along_x, block.x);
  EXPECT_LT(std::int64_t(grid.y) * block.y - along_y, block.y);
}

INSTANTIATE_TEST_SUITE_P(ch02, NaiveGridCover, kKernelsAndSizes, mm::test::param_name);

TEST(ch02_NaiveGrid, StridedPutsRowsOnXCoalescedPutsColumnsOnX) {
  const GemmProblem p{100, 3000, 7};
  const dim3 block(32, 8);
  const dim3 s = mm::ch02::naive_grid(p, block, Mapping::strided);
  const dim3 c = mm::ch02::naive_grid(p, block, Mapping::coalesced);
  EXPECT_EQ(s.x, 4u);    // ceil(100 / 32) blocks of rows
  EXPECT_EQ(s.y, 375u);  // ceil(3000 / 8) blocks of columns
  EXPECT_EQ(c.x, 94u);   // ceil(3000 / 32) blocks of columns
  EXPECT_EQ(c.y, 13u);   // ceil(100 / 8) blocks of rows
}

TEST(ch02_NaiveGrid, RejectsWhatTheGridCannotHold) {
  // grid.y holds at most 65535 blocks of 8: 524280 rows (coalesced) or columns (strided).
  EXPECT_EQ(mm::ch02::naive_rejects(GemmProblem{524280, 1, 1}, Mapping::coalesced), "");
  EXPECT_NE(mm::ch02::naive_rejects(GemmProblem{524281, 1, 1}, Mapping::coalesced), "");
  EXPECT_EQ(mm::ch02::naive_rejects(GemmProblem{524281, 1, 1}, Mapping::strided), "");
  EXPECT_NE(mm::ch02::naive_rejects(GemmProblem{1, 524281, 1}, Mapping::strided), "");
  GemmProblem col_major_b{64, 64, 64};
  col_major_b.b = mm::Order::col;
  EXPECT_NE(mm::ch02::naive_rejects(col_major_b, Mapping::coalesced), "");
  EXPECT_THROW(mm::ch02::launch_naive_coalesced(col_major_b, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

// ---- CPU: the tutorial's <<<blocksPerGridX, blocksPerGridY>>> launch misses most of C ----

TEST(ch02_TutorialLaunchBug, LaunchesA1DGridThatMissesMostOfC) {
  const GemmProblem p{1024, 1024, 1024};
  const mm::ch02::LaunchConfig wrong = mm::ch02::tutorial_launch_as_written(p);
  // <<<4, 4>>>: a grid of 4 blocks (x only) of 4 threads (x only), not 4×4 blocks of 256 threads.
  EXPECT_EQ(wrong.grid.x, 4u);
  EXPECT_EQ(wrong.grid.y, 1u);
  EXPECT_EQ(wrong.block.x, 4u);
  EXPECT_EQ(wrong.block.y, 1u);
  // The tutorial's kernel uses the strided mapping (i from x is the row, j from y the column).
  const Coverage c = cover(Mapping::strided, p, wrong.grid, wrong.block);
  std::int64_t reached = 0;
  for (int h : c.hits) reached += h > 0;
  EXPECT_EQ(reached, 16);  // 16 threads in all: C(0..15, 0), of 1048576 elements
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(c.hits[std::size_t(i * p.n)], 1) << "C(" << i << ", 0)";
}

TEST(ch02_TutorialLaunchBug, NeverCoversCForAnySizeBeyondOneElement) {
  for (const Size& size : mm::test::first_gpu_sizes()) {
    const GemmProblem p = problem(size);
    if (p.m * p.n == 1) continue;  // a 1×1 C is the one case the 1-D launch happens to cover
    const mm::ch02::LaunchConfig wrong = mm::ch02::tutorial_launch_as_written(p);
    const Coverage c = cover(Mapping::strided, p, wrong.grid, wrong.block);
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

template <Mapping map>
WarpSectors warp_sectors(const GemmProblem& p) {
  std::set<std::int64_t> a, b, c;
  const dim3 block(mm::ch02::naive_block_x, mm::ch02::naive_block_y);
  for (unsigned lane = 0; lane < 32; ++lane) {
    const mm::ch02::RowCol e = mm::ch02::naive_element<map>(dim3(0, 0), block, dim3(lane, 0));
    a.insert(e.row * p.k * 4 / 32);  // byte offset / 32: the sector
    b.insert(e.col * 4 / 32);
    c.insert((e.row * p.n + e.col) * 4 / 32);
  }
  return {a.size(), b.size(), c.size()};
}

TEST(ch02_AccessPattern, CoalescedWarpTouchesFourSectorsOfBAndOneOfA) {
  const WarpSectors s = warp_sectors<Mapping::coalesced>(GemmProblem{4096, 4096, 4096});
  EXPECT_EQ(s.a, 1u);  // all 32 lanes read the same A(i, k): one broadcast
  EXPECT_EQ(s.b, 4u);  // 32 consecutive floats = 128 bytes = 4 sectors, all of it used
  EXPECT_EQ(s.c, 4u);
}

TEST(ch02_AccessPattern, StridedWarpTouchesThirtyTwoSectorsOfA) {
  const WarpSectors s = warp_sectors<Mapping::strided>(GemmProblem{4096, 4096, 4096});
  EXPECT_EQ(s.a, 32u);  // 32 rows of A, 16 KiB apart: a sector each, 4 of its 32 bytes used
  EXPECT_EQ(s.b, 1u);   // all lanes read the same B(k, j)
  EXPECT_EQ(s.c, 32u);  // and C is written one float per sector
}

// The naive kernel computes offsets only for elements inside the matrices (a thread outside C returns
// first), so the 32-bit rule allows exactly 2^31 elements per matrix, with no rounding to tiles.
TEST(ch02_NaiveGrid, RejectsOffsetsBeyond32Bits) {
  for (Mapping map : {Mapping::strided, Mapping::coalesced}) {
    EXPECT_EQ(mm::ch02::naive_rejects(GemmProblem{16384, 131072, 1}, map), "");  // C: 2^31 elements
    EXPECT_NE(mm::ch02::naive_rejects(GemmProblem{16385, 131072, 1}, map), "");
    EXPECT_EQ(mm::ch02::naive_rejects(GemmProblem{2, 1, 1073741824}, map), "");  // A: 2^31 elements
    EXPECT_NE(mm::ch02::naive_rejects(GemmProblem{2, 1, 1073741825}, map), "");
    EXPECT_EQ(mm::ch02::naive_rejects(GemmProblem{1, 1, 2147483647}, map), "");  // no K tiles to round
  }
}

}  // namespace
