// Chapter 03: the tiled kernels against the fp64 reference (GPU), and the launch arithmetic on
// the CPU (no GPU needed). Every test name starts with "ch03", so that `ctest -R ch03` selects
// this chapter. (Chapter 02's coalesced kernel, also run by the ch03 binary, is tested in tests/ch02.)
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "03_tiled_shared_memory/tiled_shared_memory.cuh"
#include "gpu_test.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;

struct NamedKernel {
  const char* name;
  mm::test::GemmLaunchFn launch;
  int tile;
};
void PrintTo(const NamedKernel& k, std::ostream* os) { *os << k.name; }

const NamedKernel kKernels[] = {
    {"tiled_16", mm::ch03::launch_tiled_16, 16},
    {"tiled_32", mm::ch03::launch_tiled_32, 32},
};

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;

// Every kernel at every size of the first GPU chapters (gpu_test.hpp: one short of / equal to / one past a tile of
// 32, K too, so a partial last K step must load zeros), named "tiled_32_33x65x129" in ctest's list.
const auto kKernelsAndSizes =
    ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(mm::test::first_gpu_sizes()));

// ---- GPU: every kernel, every size, against the fp64 reference (output poisoned first) ----

class TiledGemm : public ::testing::TestWithParam<std::tuple<NamedKernel, Size>> {};

TEST_P(TiledGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  mm::test::expect_matches_fp64(std::get<0>(GetParam()), problem(std::get<1>(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(ch03, TiledGemm, kKernelsAndSizes, mm::test::param_name);

// Non-square tiles of C and a K that is not a multiple of the tile, with a second seed.
TEST(ch03_TiledGemm, MatchesFp64ReferenceWithAnotherSeed) {
  MM_REQUIRE_GPU();
  const GemmProblem p{100, 257, 63};
  for (const NamedKernel& kernel : kKernels) mm::test::expect_matches_fp64(kernel, p, 7);
}

// More rows than 65535 blocks of 8 (the bug: the check itself failed to launch), and a wide C.
TEST(ch03_TiledGemm, TallAndWideMatricesPassTheCheck) {
  MM_REQUIRE_GPU();
  for (const NamedKernel& kernel : kKernels) mm::test::expect_matches_fp64(kernel, problem(mm::test::tall_size));
  mm::test::expect_matches_fp64(kKernels[1], problem(mm::test::wide_size));
}

// ---- CPU: the grid covers C exactly once, the K loop covers K ----

template <int TILE>
std::vector<int> hits_per_element(const GemmProblem& p) {
  std::vector<int> hits(std::size_t(p.m * p.n), 0);
  const dim3 grid = mm::ch03::tiled_grid<TILE>(p), block = mm::ch03::tiled_block<TILE>();
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx)
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx) {
          const mm::ch03::RowCol e = mm::ch03::tiled_element<TILE>(dim3(bx, by), dim3(tx, ty));
          if (e.row < p.m && e.col < p.n) ++hits[std::size_t(e.row * p.n + e.col)];
        }
  return hits;
}

class TiledGridCover : public ::testing::TestWithParam<std::tuple<NamedKernel, Size>> {};

TEST_P(TiledGridCover, CoversEveryElementOfCExactlyOnce) {
  const NamedKernel& kernel = std::get<0>(GetParam());
  const GemmProblem p = problem(std::get<1>(GetParam()));
  const std::vector<int> hits = kernel.tile == 16 ? hits_per_element<16>(p) : hits_per_element<32>(p);
  std::int64_t missed = 0, twice = 0;
  for (int h : hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0) << kernel.name << " at " << size_name(p);
  EXPECT_EQ(twice, 0) << kernel.name << " at " << size_name(p);
}

INSTANTIATE_TEST_SUITE_P(ch03, TiledGridCover, kKernelsAndSizes, mm::test::param_name);

TEST(ch03_TiledGrid, XCountsTileColumnsYCountsTileRows) {
  const GemmProblem p{100, 3000, 7};
  EXPECT_EQ(mm::ch03::tiled_grid<32>(p).x, 94u);  // ceil(3000 / 32)
  EXPECT_EQ(mm::ch03::tiled_grid<32>(p).y, 4u);   // ceil(100 / 32)
  EXPECT_EQ(mm::ch03::tiled_grid<16>(p).x, 188u);
  EXPECT_EQ(mm::ch03::tiled_grid<16>(p).y, 7u);
  EXPECT_EQ(mm::ch03::tiled_block<32>().x * mm::ch03::tiled_block<32>().y, 1024u);  // the most a block may have
  EXPECT_EQ(mm::ch03::tiled_block<16>().x * mm::ch03::tiled_block<16>().y, 256u);
}

TEST(ch03_TiledGrid, KStepsCoverKWithAtMostOnePartialStep) {
  for (std::int64_t k : {1, 5, 15, 16, 17, 31, 32, 33, 129, 1000, 1024}) {
    const GemmProblem p{1, 1, k};
    const std::int64_t s16 = mm::ch03::tiled_k_steps<16>(p), s32 = mm::ch03::tiled_k_steps<32>(p);
    EXPECT_GE(s16 * 16, k);
    EXPECT_LT((s16 - 1) * 16, k);
    EXPECT_GE(s32 * 32, k);
    EXPECT_LT((s32 - 1) * 32, k);
  }
}

TEST(ch03_TiledGrid, RejectsWhatTheGridCannotHold) {
  // grid.y holds at most 65535 tiles of rows.
  EXPECT_EQ(mm::ch03::tiled_rejects<32>(GemmProblem{65535 * 32, 1, 1}), "");
  EXPECT_NE(mm::ch03::tiled_rejects<32>(GemmProblem{65535 * 32 + 1, 1, 1}), "");
  EXPECT_NE(mm::ch03::tiled_rejects<16>(GemmProblem{65535 * 16 + 1, 1, 1}), "");
  EXPECT_EQ(mm::ch03::tiled_rejects<16>(GemmProblem{1, 1 << 26, 1}), "");  // N is on x: 2^22 blocks allowed
  GemmProblem col_major_a{64, 64, 64};
  col_major_a.a = mm::Order::col;
  EXPECT_NE(mm::ch03::tiled_rejects<32>(col_major_a), "");
  EXPECT_THROW(mm::ch03::launch_tiled_32(col_major_a, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);
}

// The tiled kernel covers every matrix with whole TILE×TILE tiles (its K loop steps past K to the next
// multiple of TILE), so the 32-bit rule counts the rounded-up matrices.
TEST(ch03_TiledGrid, RejectsOffsetsBeyond32Bits) {
  EXPECT_EQ(mm::ch03::tiled_rejects<32>(GemmProblem{16384, 131072, 1}), "");  // C: 2^31 elements, whole tiles
  EXPECT_NE(mm::ch03::tiled_rejects<32>(GemmProblem{16385, 131072, 1}), "");  // one more tile of rows
  EXPECT_NE(mm::ch03::tiled_rejects<16>(GemmProblem{16385, 131072, 1}), "");
  // A of 1 x (2^31 - 1) fits, but not rounded up to a 32-row tile (the naive kernel of chapter 02 takes it).
  EXPECT_NE(mm::ch03::tiled_rejects<32>(GemmProblem{1, 1, 2147483647}), "");
  EXPECT_THROW(mm::ch03::launch_tiled_32(GemmProblem{16385, 131072, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

}  // namespace
