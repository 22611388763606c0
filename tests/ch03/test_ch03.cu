// Chapter 03: the steps of the chapter's list against the fp64 reference (GPU), and the launch
// arithmetic of its configurations on the CPU (no GPU needed). Every test name starts with "ch03",
// so that `ctest -R ch03` selects this chapter. (Chapter 02's coalesced kernel, listed first as the
// step before, is tested in tests/ch02.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "02_naive_gpu/steps.hpp"
#include "03_tiled_shared_memory/steps.hpp"
#include "03_tiled_shared_memory/tiled_gemm.cuh"
#include "gpu_test.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;
using mm::ch03::Tiled16Cfg;
using mm::ch03::Tiled32Cfg;
using Step = mm::GemmKernel<float, float>;

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;

// The chapter's own steps: its list without the step before (chapter 02's best, tested there).
std::vector<Step> own_steps() {
  std::vector<Step> steps = mm::ch03::steps();
  const std::string before = mm::ch02::best().name;
  steps.erase(std::remove_if(steps.begin(), steps.end(), [&](const Step& s) { return s.name == before; }), steps.end());
  return steps;
}

// ---- GPU: every step, every size, against the fp64 reference (output poisoned first) ----

// Every step at every size of the first GPU chapters (gpu_test.hpp: one short of / equal to / one past a
// tile of 32, K too, so a partial last K step must load zeros), named "tiled_32_33x65x129" in ctest's list.
class TiledGemm : public ::testing::TestWithParam<std::tuple<Step, Size>> {};

TEST_P(TiledGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  mm::test::expect_matches_fp64(std::get<0>(GetParam()), problem(std::get<1>(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(ch03, TiledGemm,
                         ::testing::Combine(::testing::ValuesIn(own_steps()),
                                            ::testing::ValuesIn(mm::test::first_gpu_sizes())),
                         mm::test::param_name);

// Non-square tiles of C and a K that is not a multiple of the tile, with a second seed.
TEST(ch03_TiledGemm, MatchesFp64ReferenceWithAnotherSeed) {
  MM_REQUIRE_GPU();
  const GemmProblem p{100, 257, 63};
  for (const Step& step : own_steps()) mm::test::expect_matches_fp64(step, p, 7);
}

// More rows than 65535 blocks of 8 (the bug: the check itself failed to launch), and a wide C.
TEST(ch03_TiledGemm, TallAndWideMatricesPassTheCheck) {
  MM_REQUIRE_GPU();
  for (const Step& step : own_steps()) mm::test::expect_matches_fp64(step, problem(mm::test::tall_size));
  mm::test::expect_matches_fp64(mm::test::step_named(mm::ch03::steps(), "tiled_32"), problem(mm::test::wide_size));
}

// The step before is chapter 02's best, first in the list; the chapter's best is tiled_32.
TEST(ch03_Steps, ListTheStepBeforeFirstAndExportTiled32) {
  const std::vector<Step> steps = mm::ch03::steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].name, "ch02_naive_coalesced");
  EXPECT_EQ(steps[1].name, "tiled_16");
  EXPECT_EQ(steps[2].name, "tiled_32");
  EXPECT_EQ(mm::ch03::best().name, "ch03_tiled_32");
}

// ---- CPU: the grid covers C exactly once, the K loop covers K ----

template <class Cfg>
std::vector<int> hits_per_element(const GemmProblem& p) {
  std::vector<int> hits(std::size_t(p.m * p.n), 0);
  const dim3 grid = mm::ch03::tiled_grid<Cfg>(p), block = mm::ch03::tiled_block<Cfg>();
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx)
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx) {
          const mm::ch03::RowCol e = mm::ch03::tiled_element<Cfg>(dim3(bx, by), dim3(tx, ty));
          if (e.row < p.m && e.col < p.n) ++hits[std::size_t(e.row * p.n + e.col)];
        }
  return hits;
}

// One configuration of the kernel (a tile size) as a test parameter, named as the step that uses it.
struct Tiling {
  const char* name;
  std::vector<int> (*hits)(const GemmProblem&);
};
void PrintTo(const Tiling& t, std::ostream* os) { *os << t.name; }
const Tiling kTilings[] = {{"tiled_16", hits_per_element<Tiled16Cfg>}, {"tiled_32", hits_per_element<Tiled32Cfg>}};

class TiledGridCover : public ::testing::TestWithParam<std::tuple<Tiling, Size>> {};

TEST_P(TiledGridCover, CoversEveryElementOfCExactlyOnce) {
  const Tiling& tiling = std::get<0>(GetParam());
  const GemmProblem p = problem(std::get<1>(GetParam()));
  const std::vector<int> hits = tiling.hits(p);
  std::int64_t missed = 0, twice = 0;
  for (int h : hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0) << tiling.name << " at " << size_name(p);
  EXPECT_EQ(twice, 0) << tiling.name << " at " << size_name(p);
}

INSTANTIATE_TEST_SUITE_P(ch03, TiledGridCover,
                         ::testing::Combine(::testing::ValuesIn(kTilings),
                                            ::testing::ValuesIn(mm::test::first_gpu_sizes())),
                         mm::test::param_name);

TEST(ch03_TiledGrid, XCountsTileColumnsYCountsTileRows) {
  const GemmProblem p{100, 3000, 7};
  EXPECT_EQ(mm::ch03::tiled_grid<Tiled32Cfg>(p).x, 94u);  // ceil(3000 / 32)
  EXPECT_EQ(mm::ch03::tiled_grid<Tiled32Cfg>(p).y, 4u);   // ceil(100 / 32)
  EXPECT_EQ(mm::ch03::tiled_grid<Tiled16Cfg>(p).x, 188u);
  EXPECT_EQ(mm::ch03::tiled_grid<Tiled16Cfg>(p).y, 7u);
  EXPECT_EQ(mm::ch03::tiled_block<Tiled32Cfg>().x * mm::ch03::tiled_block<Tiled32Cfg>().y, 1024u);  // the most a block may have
  EXPECT_EQ(mm::ch03::tiled_block<Tiled16Cfg>().x * mm::ch03::tiled_block<Tiled16Cfg>().y, 256u);
}

TEST(ch03_TiledGrid, KStepsCoverKWithAtMostOnePartialStep) {
  for (std::int64_t k : {1, 5, 15, 16, 17, 31, 32, 33, 129, 1000, 1024}) {
    const GemmProblem p{1, 1, k};
    const std::int64_t s16 = mm::ch03::tiled_k_steps<Tiled16Cfg>(p), s32 = mm::ch03::tiled_k_steps<Tiled32Cfg>(p);
    EXPECT_GE(s16 * 16, k);
    EXPECT_LT((s16 - 1) * 16, k);
    EXPECT_GE(s32 * 32, k);
    EXPECT_LT((s32 - 1) * 32, k);
  }
}

TEST(ch03_TiledGrid, RejectsWhatTheGridCannotHold) {
  // grid.y holds at most 65535 tiles of rows.
  EXPECT_EQ(mm::ch03::tiled_rejects<Tiled32Cfg>(GemmProblem{65535 * 32, 1, 1}), "");
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled32Cfg>(GemmProblem{65535 * 32 + 1, 1, 1}), "");
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled16Cfg>(GemmProblem{65535 * 16 + 1, 1, 1}), "");
  EXPECT_EQ(mm::ch03::tiled_rejects<Tiled16Cfg>(GemmProblem{1, 1 << 26, 1}), "");  // N is on x: 2^22 blocks allowed
  GemmProblem col_major_a{64, 64, 64};
  col_major_a.a = mm::Order::col;
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled32Cfg>(col_major_a), "");
  EXPECT_THROW(mm::ch03::launch_tiled<Tiled32Cfg>(col_major_a, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

// The tiled kernel covers every matrix with whole TILE×TILE tiles (its K loop steps past K to the next
// multiple of TILE), so the 32-bit rule counts the rounded-up matrices.
TEST(ch03_TiledGrid, RejectsOffsetsBeyond32Bits) {
  EXPECT_EQ(mm::ch03::tiled_rejects<Tiled32Cfg>(GemmProblem{16384, 131072, 1}), "");  // C: 2^31 elements, whole tiles
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled32Cfg>(GemmProblem{16385, 131072, 1}), "");  // one more tile of rows
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled16Cfg>(GemmProblem{16385, 131072, 1}), "");
  // A of 1 x (2^31 - 1) fits, but not rounded up to a 32-row tile (the naive kernel of chapter 02 takes it).
  EXPECT_NE(mm::ch03::tiled_rejects<Tiled32Cfg>(GemmProblem{1, 1, 2147483647}), "");
  EXPECT_THROW(mm::ch03::launch_tiled<Tiled32Cfg>(GemmProblem{16385, 131072, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

}  // namespace
