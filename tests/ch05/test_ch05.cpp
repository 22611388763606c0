// Chapter 05: every step of the chapter's list (steps.cu: blocktile_1d, a column of 8 outputs per
// thread, and the 8×8 steps layout_unpadded and layout_padded) against the fp64 reference for every
// storage order (GPU), and on the CPU the claims the chapter makes about their layouts: which elements each thread
// computes and copies, that a warp's global reads and writes are coalesced, and how many bank conflicts
// its shared-memory accesses have. Every test name starts with "ch05", so that `ctest -R ch05` selects
// this chapter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "05_layout_matmul/layout_gemm.cuh"
#include "05_layout_matmul/steps.hpp"
#include "gpu_test.hpp"
#include "lds_wavefronts.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;
using mm::Order;
using GemmStep = mm::GemmKernel<float, float>;
using mm::test::step_named;

// The chapter's list: the steps the binary runs (with MM_APPENDIX_STEPS, the appendix's too).
const std::vector<GemmStep> kSteps = mm::ch05::steps();

// The four orders of the issue (C row-major) and the four with a column-major C.
const std::string kLayouts[] = {"RRR", "RCR", "CRR", "CCR", "RRC", "RCC", "CRC", "CCC"};

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;
using Param = std::tuple<GemmStep, std::string, Size>;

// ---- GPU: every kernel, every storage order, every size, against the fp64 reference ----
//
// The sizes are those around the 128×128×8 tile (gpu_test.hpp); "layout_padded_RCR_17x33x9" in ctest's list.
// 127, 129 and 257 are also one short of or past a multiple of blocktile_1d's 64, and 9, 33 and 65 of 8.

class LayoutGemm : public ::testing::TestWithParam<Param> {};

TEST_P(LayoutGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  const auto& [kernel, tag, size] = GetParam();
  mm::test::expect_matches_fp64(kernel, problem(size, tag));
}

INSTANTIATE_TEST_SUITE_P(ch05, LayoutGemm,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(mm::test::tile128_sizes())),
                         mm::test::param_name);

// blocktile_1d's own edges, around its 64×64×8 tile: exactly one tile, one past it, one short of it,
// primes in all three, a single row and a single column of C, and a tall, skinny C with a long K.
const Size kTile64Sizes[] = {{64, 64, 8},  {65, 65, 9},   {63, 127, 17}, {61, 67, 71},
                             {1, 131, 13}, {131, 1, 13}, {1031, 3, 257}};

class Blocktile1dEdges : public ::testing::TestWithParam<std::tuple<std::string, Size>> {};

TEST_P(Blocktile1dEdges, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  const auto& [tag, size] = GetParam();
  mm::test::expect_matches_fp64(step_named(kSteps, "blocktile_1d"), problem(size, tag));
}

INSTANTIATE_TEST_SUITE_P(ch05, Blocktile1dEdges,
                         ::testing::Combine(::testing::ValuesIn(kLayouts), ::testing::ValuesIn(kTile64Sizes)),
                         mm::test::param_name);

// A second seed, a size with every edge partial, the canonical and the tutorial's order.
TEST(ch05_LayoutGemm, MatchesFp64ReferenceWithAnotherSeed) {
  MM_REQUIRE_GPU();
  for (const char* tag : {"RRR", "RCR"})
    for (const GemmStep& step : kSteps) mm::test::expect_matches_fp64(step, problem({300, 200, 100}, tag), 7);
}

// More rows than 65535 blocks of 8 (the bug: the check itself failed to launch), and a wide C
// (N on grid y: 7813 tiles of 128).
TEST(ch05_LayoutGemm, TallAndWideMatricesPassTheCheck) {
  MM_REQUIRE_GPU();
  for (const GemmStep& step : kSteps) mm::test::expect_matches_fp64(step, problem(mm::test::tall_size));
  mm::test::expect_matches_fp64(step_named(kSteps, "layout_padded"), problem(mm::test::wide_size, "RCR"));
  mm::test::expect_matches_fp64(step_named(kSteps, "blocktile_1d"), problem(mm::test::wide_size, "CRC"));
}

// ---- CPU: the rejects and the grid ----

// The 8×8 steps' grid and size rule (layout_unpadded's and layout_padded's are the same).
using Padded = mm::ch05::LayoutPaddedCfg;
using Blocktile1d = mm::ch05::Blocktile1dCfg;

TEST(ch05_Launch, GridHasOneBlockPerTileOfC) {
  const dim3 g = mm::ch05::layout_gemm_grid<Padded>(GemmProblem{300, 129, 5});
  EXPECT_EQ(g.x, 3u);  // ceil(300 / 128) tiles along M
  EXPECT_EQ(g.y, 2u);  // ceil(129 / 128) tiles along N
}

TEST(ch05_Launch, RejectsWhatTheGridOrTheIndicesCannotHold) {
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{1, 65535 * 128, 1}), "");
  EXPECT_NE(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{1, 65535 * 128 + 1, 1}), "");
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{std::int64_t(1) << 30, 1, 1}), "");  // M is on x
  EXPECT_NE(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{65536, 65536, 1}), "");              // C has 2^32 elements
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{16384, 131072, 1}), "");  // C: 2^31 elements in whole tiles
  EXPECT_NE(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{16385, 131072, 1}), "");  // one more tile of rows
  // A of 16909320 x 127 has fewer than 2^31 elements, but its last tile of rows overhangs to
  // 16909440 rows, whose offsets (up to 16909440 * 127) do not fit; one tile fewer of rows does.
  EXPECT_NE(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{16909320, 1, 127}), "");
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{16909312, 1, 127}), "");
  EXPECT_THROW(step_named(kSteps, "layout_padded").launch(GemmProblem{65536, 65536, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

TEST(ch05_Launch, Blocktile1dHasOneBlockPerTileOf64AndRejectsWhatItsGridCannotHold) {
  const dim3 g = mm::ch05::layout_gemm_grid<Blocktile1d>(GemmProblem{300, 129, 5});
  EXPECT_EQ(g.x, 5u);  // ceil(300 / 64) tiles along M
  EXPECT_EQ(g.y, 3u);  // ceil(129 / 64) tiles along N
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Blocktile1d>(GemmProblem{1, 65535 * 64, 1}), "");
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Blocktile1d>(GemmProblem{1, 65535 * 64 + 1, 1}),
            "needs N <= 4194240 (65535 tiles of 64 columns along grid y)");
  EXPECT_NE(mm::ch05::layout_gemm_rejects<Blocktile1d>(GemmProblem{65536, 65536, 1}), "");  // C has 2^32 elements
  EXPECT_THROW(step_named(kSteps, "blocktile_1d").launch(GemmProblem{1, 65535 * 64 + 1, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
  // The 8×8 step's message is what it was before the steps shared tile_rejects (chapter 06 compares).
  EXPECT_EQ(mm::ch05::layout_gemm_rejects<Padded>(GemmProblem{1, 65535 * 128 + 1, 1}),
            "needs N <= 8388480 (65535 tiles of 128 columns along grid y)");
}

// ---- CPU: which elements each thread owns, from the kernel's own layouts and partitions ----

using namespace mm;  // the layout library's names, as in the kernel

// The steps' configurations (layout_gemm.cuh): the 8×8 steps share their thread layouts, and
// blocktile_1d has its own.
using Cfg8x8 = ch05::LayoutUnpaddedCfg;
using Cfg1d = ch05::Blocktile1dCfg;
constexpr int kThreads8x8 = ch05::kThreadsOf<Cfg8x8>;  // 256
constexpr int kThreads1d = ch05::kThreadsOf<Cfg1d>;    // 512

// Thread t's coordinates of a (rows, cols) identity tile partitioned like the kernel does.
struct RowCol {
  int r, c;
  friend bool operator<(const RowCol& a, const RowCol& b) { return std::tie(a.r, a.c) < std::tie(b.r, b.c); }
  friend bool operator==(const RowCol& a, const RowCol& b) { return a.r == b.r && a.c == b.c; }
};
template <class T>
RowCol rc(const T& coord) {
  return {int(get<0>(coord)), int(get<1>(coord))};
}

// The compute partition: thread t of tC owns rows tm + 16i and columns tn + 16j of the 128×128 tile,
// with (tm, tn) = (t / 16, t % 16) for a row-major C and (t % 16, t / 16) for a column-major C; its
// slice of sA (Step<_1,X>) is rows tm + 16i for every k, its slice of sB (Step<X,_1>) columns tn + 16j.
template <Order OC>
void check_compute_partition() {
  const auto tC = ch05::compute_thread_layout<Cfg8x8, OC>();
  const auto cC = make_identity_tensor(make_shape(_128{}, _128{}));  // (BM,BN) -> (m,n)
  const auto cA = make_identity_tensor(make_shape(_128{}, _8{}));    // (BM,BK) -> (m,k)
  std::map<RowCol, int> owners;
  for (int t = 0; t < kThreads8x8; ++t) {
    const int tm = OC == Order::row ? t / 16 : t % 16;
    const int tn = OC == Order::row ? t % 16 : t / 16;
    const auto tCcC = local_partition(cC, tC, t, Step<_1, _1>{});  // (THR_M,THR_N)
    const auto tCcA = local_partition(cA, tC, t, Step<_1, X>{});   // (THR_M,BK)
    const auto tCcB = local_partition(cA, tC, t, Step<X, _1>{});   // (THR_N,BK)
    ASSERT_EQ(int(size(tCcC)), 64);
    ASSERT_EQ(int(size<0>(tCcA)), 8);
    ASSERT_EQ(int(size<1>(tCcA)), 8);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        const RowCol e = rc(tCcC(i, j));
        EXPECT_EQ(e, (RowCol{tm + 16 * i, tn + 16 * j})) << "thread " << t << " element (" << i << "," << j << ")";
        ++owners[e];
      }
    for (int i = 0; i < 8; ++i)
      for (int k = 0; k < 8; ++k) {
        EXPECT_EQ(rc(tCcA(i, k)), (RowCol{tm + 16 * i, k})) << "thread " << t;
        EXPECT_EQ(rc(tCcB(i, k)), (RowCol{tn + 16 * i, k})) << "thread " << t;
      }
  }
  EXPECT_EQ(owners.size(), 128u * 128u);  // every element of the tile of C ...
  for (const auto& [e, n] : owners) ASSERT_EQ(n, 1) << "(" << e.r << "," << e.c << ")";  // ... exactly once
}

TEST(ch05_Partition, ComputeThreadsOwnRowsAndColumns16ApartRowMajorC) { check_compute_partition<Order::row>(); }
TEST(ch05_Partition, ComputeThreadsOwnRowsAndColumns16ApartColMajorC) { check_compute_partition<Order::col>(); }

// The copy partition: 256 threads × 4 elements cover the (128,8) tile exactly once; MN-major thread t
// copies (t % 32 + 32v, t / 32), K-major thread t copies (t / 8 + 32v, t % 8). blocktile_1d: 512
// threads × 1 element cover (64,8) once, (t % 64, t / 64) and (t / 8, t % 8).
template <ch05::Major major, int Threads = kThreads8x8, int Rows = Cfg8x8::BM::value>
void check_copy_partition() {
  constexpr int thr_mn = Threads / 8, values = Rows * 8 / Threads;
  const auto tA = ch05::copy_thread_layout<major, Threads>();
  const auto cA = make_identity_tensor(make_shape(Int<Rows>{}, _8{}));  // (BM,BK) -> (m,k)
  std::map<RowCol, int> owners;
  for (int t = 0; t < Threads; ++t) {
    const auto tAcA = local_partition(cA, tA, t);  // (THR_M,THR_K)
    ASSERT_EQ(int(size(tAcA)), values);
    for (int v = 0; v < values; ++v) {
      const RowCol e = rc(tAcA(v));
      const RowCol want = major == ch05::Major::mn ? RowCol{t % thr_mn + thr_mn * v, t / thr_mn}
                                                   : RowCol{t / 8 + thr_mn * v, t % 8};
      EXPECT_EQ(e, want) << "thread " << t << " value " << v;
      ++owners[e];
    }
  }
  EXPECT_EQ(owners.size(), std::size_t(Rows) * 8u);
  for (const auto& [e, n] : owners) ASSERT_EQ(n, 1) << "(" << e.r << "," << e.c << ")";
}

TEST(ch05_Partition, CopyThreadsCoverTheTileOnceMNMajor) { check_copy_partition<ch05::Major::mn>(); }
TEST(ch05_Partition, CopyThreadsCoverTheTileOnceKMajor) { check_copy_partition<ch05::Major::k>(); }
TEST(ch05_Partition, Blocktile1dCopyThreadsCoverTheTileOnceMNMajor) {
  check_copy_partition<ch05::Major::mn, kThreads1d, Cfg1d::BM::value>();
}
TEST(ch05_Partition, Blocktile1dCopyThreadsCoverTheTileOnceKMajor) {
  check_copy_partition<ch05::Major::k, kThreads1d, Cfg1d::BM::value>();
}

// blocktile_1d's compute partition. Row-major C: thread t is (tm, tn) = (t / 64, t % 64) and owns rows
// tm + 8i of column tn, i = 0..7 (a column of 8 outputs); its slice of sA is those 8 rows for every k,
// its slice of sB the one column tn. Column-major C: (tm, tn) = (t % 64, t / 64), columns tn + 8j of
// row tm, and the roles of sA and sB swap. The 512 threads cover the 64×64 tile exactly once.
template <Order OC>
void check_blocktile_1d_compute_partition() {
  constexpr bool column = OC == Order::row;  // each thread a column of C (a row when C is column-major)
  const auto tC = ch05::compute_thread_layout<Cfg1d, OC>();
  const auto cC = make_identity_tensor(make_shape(_64{}, _64{}));  // (BM,BN) -> (m,n)
  const auto cS = make_identity_tensor(make_shape(_64{}, _8{}));   // (BM,BK) -> (m,k), and (BN,BK)
  std::map<RowCol, int> owners;
  for (int t = 0; t < kThreads1d; ++t) {
    const int tm = column ? t / 64 : t % 64;
    const int tn = column ? t % 64 : t / 64;
    const auto tCcC = local_partition(cC, tC, t, Step<_1, _1>{});  // (8,1) or (1,8)
    const auto tCcA = local_partition(cS, tC, t, Step<_1, X>{});   // (8,8) or (1,8)
    const auto tCcB = local_partition(cS, tC, t, Step<X, _1>{});   // (1,8) or (8,8)
    ASSERT_EQ(int(size(tCcC)), 8);
    ASSERT_EQ(int(size<0>(tCcA)), column ? 8 : 1);
    ASSERT_EQ(int(size<0>(tCcB)), column ? 1 : 8);
    ASSERT_EQ(int(size<1>(tCcA)), 8);
    for (int v = 0; v < 8; ++v) {
      const RowCol e = rc(tCcC(v));
      const RowCol want = column ? RowCol{tm + 8 * v, tn} : RowCol{tm, tn + 8 * v};
      EXPECT_EQ(e, want) << "thread " << t << " value " << v;
      ++owners[e];
    }
    for (int k = 0; k < 8; ++k) {
      for (int i = 0; i < int(size<0>(tCcA)); ++i) EXPECT_EQ(rc(tCcA(i, k)), (RowCol{tm + 8 * i, k})) << "thread " << t;
      for (int j = 0; j < int(size<0>(tCcB)); ++j) EXPECT_EQ(rc(tCcB(j, k)), (RowCol{tn + 8 * j, k})) << "thread " << t;
    }
  }
  EXPECT_EQ(owners.size(), 64u * 64u);
  for (const auto& [e, n] : owners) ASSERT_EQ(n, 1) << "(" << e.r << "," << e.c << ")";
}

TEST(ch05_Partition, Blocktile1dThreadsOwnAColumnOf8RowsRowMajorC) {
  check_blocktile_1d_compute_partition<Order::row>();
}
TEST(ch05_Partition, Blocktile1dThreadsOwnARowOf8ColumnsColMajorC) {
  check_blocktile_1d_compute_partition<Order::col>();
}

// ---- CPU: global coalescing of the copies ----

// 32-byte sectors that one warp's load touches, for every (warp, value) of the copy of one (Rows,8) tile
// of an (MN,K) operand with the given strides, worst case over the block. 32 floats in 4 sectors is the
// ideal.
template <int Rows = Cfg8x8::BM::value, class ThrLayout, class GStride>
int worst_sectors_per_warp(ThrLayout tA, GStride dA, int mn, int k) {
  const auto mA = make_identity_tensor(make_shape(mn, k));                            // (MN,K) -> (mn,k)
  const auto gA = local_tile(mA, make_shape(Int<Rows>{}, _8{}), make_coord(1, _));    // (BM,BK,k): tile row 1
  const auto global = make_layout(make_shape(mn, k), dA);                            // (mn,k) -> offset
  constexpr int values = Rows * 8 / size_v<ThrLayout>;
  int worst = 0;
  for (int k_tile = 0; k_tile < 2; ++k_tile)
    for (int warp = 0; warp < size_v<ThrLayout> / 32; ++warp)
      for (int v = 0; v < values; ++v) {
        std::set<std::int64_t> sectors;
        for (int lane = 0; lane < 32; ++lane) {
          const auto tAgA = local_partition(gA, tA, warp * 32 + lane);  // (THR_M,THR_K,k)
          const auto c = tAgA(v, 0, k_tile);
          sectors.insert(std::int64_t(global(int(get<0>(c)), int(get<1>(c)))) * 4 / 32);
        }
        worst = std::max(worst, int(sectors.size()));
      }
  return worst;
}

TEST(ch05_Coalescing, EveryOperandOrderReadsFourSectorsPerWarp) {
  const int mn = 1024, k = 1024;
  // The thread layout the host picks for each majorness: 32 floats per warp in 4 sectors.
  EXPECT_EQ(worst_sectors_per_warp(ch05::copy_thread_layout<ch05::Major::mn, kThreads8x8>(), ch05::operand_stride<ch05::Major::mn>(mn), mn, k), 4);
  EXPECT_EQ(worst_sectors_per_warp(ch05::copy_thread_layout<ch05::Major::k, kThreads8x8>(), ch05::operand_stride<ch05::Major::k>(k), mn, k), 4);
  // The other choice: a K-major operand read with lanes along MN lands in 32 different rows (32
  // sectors); an MN-major operand read with lanes along K touches 8 columns × 4 floats (8 sectors).
  EXPECT_EQ(worst_sectors_per_warp(ch05::copy_thread_layout<ch05::Major::mn, kThreads8x8>(), ch05::operand_stride<ch05::Major::k>(k), mn, k), 32);
  EXPECT_EQ(worst_sectors_per_warp(ch05::copy_thread_layout<ch05::Major::k, kThreads8x8>(), ch05::operand_stride<ch05::Major::mn>(mn), mn, k), 8);
}

TEST(ch05_Coalescing, Blocktile1dCopiesReadFourSectorsPerWarp) {
  constexpr Order R = Order::row, Cm = Order::col;
  const int mn = 1024, k = 1024;
  const auto mn_major = ch05::operand_stride<ch05::Major::mn>(mn);
  const auto k_major = ch05::operand_stride<ch05::Major::k>(k);
  // The (64,8) copy, one float per thread: a column-major A (M-major) is read 32 consecutive m of one
  // k per warp, a row-major A (K-major) 4 rows × 8 k; 4 sectors either way.
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, Cm, R, R>::thread_a(), mn_major, mn, k), 4);
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, R, R, R>::thread_a(), k_major, mn, k), 4);
  // And B: row-major B is N-major, column-major B K-major.
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, R, R, R>::thread_b(), mn_major, mn, k), 4);
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, R, Cm, R>::thread_b(), k_major, mn, k), 4);
  // The thread layouts swapped cost what they cost at 256 threads: 32 and 8 sectors.
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, Cm, R, R>::thread_a(), k_major, mn, k), 32);
  EXPECT_EQ(worst_sectors_per_warp<64>(ch05::Layouts<Cfg1d, R, R, R>::thread_a(), mn_major, mn, k), 8);
}

// 32-byte sectors that one warp's store of C touches, for every (warp, value) of one (BM,BN) tile of an
// m×n matrix C with strides dC, worst case over the block.
template <class ThrLayout, class Tile, class CStride>
int worst_c_store_sectors(ThrLayout tC, Tile tile, CStride dC, int m, int n) {
  const auto mC = make_identity_tensor(make_shape(m, n));  // (M,N) -> (m,n)
  const auto gC = local_tile(mC, tile, make_coord(1, 1));  // (BM,BN)
  const auto global = make_layout(make_shape(m, n), dC);   // (m,n) -> offset
  int worst = 0;
  for (int warp = 0; warp < size_v<ThrLayout> / 32; ++warp) {
    const int values = int(size(local_partition(gC, tC, warp * 32)));
    for (int v = 0; v < values; ++v) {
      std::set<std::int64_t> sectors;
      for (int lane = 0; lane < 32; ++lane) {
        const auto c = local_partition(gC, tC, warp * 32 + lane)(v);
        sectors.insert(std::int64_t(global(int(get<0>(c)), int(get<1>(c)))) * 4 / 32);
      }
      worst = std::max(worst, int(sectors.size()));
    }
  }
  return worst;
}

TEST(ch05_Coalescing, EveryStoreOfCIsFourSectorsPerWarp) {
  const int m = 1024, n = 1024;
  const auto row_c = ch05::c_stride<Order::row>(m, n);
  const auto col_c = ch05::c_stride<Order::col>(m, n);
  const auto tile64 = make_shape(_64{}, _64{});
  const auto tile128 = make_shape(_128{}, _128{});
  // blocktile_1d: a warp stores 32 consecutive floats of a row (a column, when C is column-major).
  EXPECT_EQ(worst_c_store_sectors(ch05::compute_thread_layout<Cfg1d, Order::row>(), tile64, row_c, m, n), 4);
  EXPECT_EQ(worst_c_store_sectors(ch05::compute_thread_layout<Cfg1d, Order::col>(), tile64, col_c, m, n), 4);
  // Columns of 8 outputs for a column-major C too: the 32 lanes would land in 32 columns, 32 sectors.
  EXPECT_EQ(worst_c_store_sectors(ch05::compute_thread_layout<Cfg1d, Order::row>(), tile64, col_c, m, n), 32);
  // The 8×8 step: 2 rows (columns) × 16 consecutive floats.
  EXPECT_EQ(worst_c_store_sectors(ch05::compute_thread_layout<Cfg8x8, Order::row>(), tile128, row_c, m, n), 4);
  EXPECT_EQ(worst_c_store_sectors(ch05::compute_thread_layout<Cfg8x8, Order::col>(), tile128, col_c, m, n), 4);
}

TEST(ch05_Coalescing, ConfigPicksTheCoalescedThreadLayoutForEveryOrder) {
  // A row-major A is K-major, a row-major B (K×N, seen as (N,K)) is N-major; the config follows.
  EXPECT_EQ((ch05::Layouts<Cfg8x8, Order::row, Order::row, Order::row>::a_major), ch05::Major::k);
  EXPECT_EQ((ch05::Layouts<Cfg8x8, Order::row, Order::row, Order::row>::b_major), ch05::Major::mn);
  EXPECT_EQ((ch05::Layouts<Cfg8x8, Order::row, Order::col, Order::row>::b_major), ch05::Major::k);
  EXPECT_EQ((ch05::Layouts<Cfg8x8, Order::col, Order::col, Order::row>::a_major), ch05::Major::mn);
  // And the strides are those of the storage: A row-major (M,K):(K,1), B row-major (N,K):(1,N).
  const GemmProblem p{300, 200, 100};
  using RRR = ch05::Layouts<Cfg8x8, Order::row, Order::row, Order::row>;
  EXPECT_EQ(int(get<0>(RRR::stride_a(p))), 100);
  EXPECT_EQ(int(get<1>(RRR::stride_b(p))), 200);
  EXPECT_EQ(int(get<0>(RRR::stride_c(p))), 200);
  using CCC = ch05::Layouts<Cfg8x8, Order::col, Order::col, Order::col>;
  EXPECT_EQ(int(get<1>(CCC::stride_a(p))), 300);
  EXPECT_EQ(int(get<0>(CCC::stride_b(p))), 100);
  EXPECT_EQ(int(get<1>(CCC::stride_c(p))), 300);
}

// ---- CPU: the kernel's tiling, partitioning and predication, run thread by thread ----
//
// The kernel body again, on the host, with the same layouts and the same library calls, one phase at a
// time for all threads of a block (a phase ends where the kernel has a barrier). It cannot catch a
// race, but it checks that the tiles, partitions, identity tensors and predicates the kernel builds
// compute the right product for every storage order and every partial tile, without a GPU. Cfg is a
// step's layouts for one set of storage orders (ch05::Layouts<StepCfg, OA, OB, OC>).
template <class Cfg>
void emulate_layout_gemm(const GemmProblem& p, const float* A, const float* B, float* C) {
  using Tiler = typename Cfg::Tiler;
  const auto shape_MNK = make_shape(int(p.m), int(p.n), int(p.k));
  const auto cta_tiler = Tiler{};
  constexpr int bm = size<0>(Tiler{}), bn = size<1>(Tiler{}), bk = size<2>(Tiler{});
  const auto tA = Cfg::thread_a();
  const auto tB = Cfg::thread_b();
  const auto tC = Cfg::thread_c();
  auto mA = make_tensor(A, select<0, 2>(shape_MNK), Cfg::stride_a(p));  // (M,K)
  auto mB = make_tensor(B, select<1, 2>(shape_MNK), Cfg::stride_b(p));  // (N,K)
  auto mC = make_tensor(C, select<0, 1>(shape_MNK), Cfg::stride_c(p));  // (M,N)
  auto cA = make_identity_tensor(shape(mA));
  auto cB = make_identity_tensor(shape(mB));
  auto cC = make_identity_tensor(shape(mC));
  const dim3 grid = mm::tile_grid(p, bm, bn);
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned by = 0; by < grid.y; ++by) {
      auto cta_coord = make_coord(int(bx), int(by), _);
      auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});   // (BM,BK,k)
      auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});   // (BN,BK,k)
      auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});   // (BM,BN)
      auto cgA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
      auto cgB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
      auto cgC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
      // Shared memory starts as garbage: every element the FMAs read must be written by the copy.
      std::vector<float> smemA(cosize_v<decltype(Cfg::smem_a())>, std::nanf(""));
      std::vector<float> smemB(cosize_v<decltype(Cfg::smem_b())>, std::nanf(""));
      auto sA = make_tensor(smemA.data(), Cfg::smem_a());  // (BM,BK)
      auto sB = make_tensor(smemB.data(), Cfg::smem_b());  // (BN,BK)
      using Accumulators = decltype(make_tensor_like(local_partition(gC, tC, 0, Step<_1, _1>{})));
      std::vector<Accumulators> acc(std::size_t(Cfg::threads));  // (THR_M,THR_N) per thread
      for (auto& r : acc) clear(r);
      const bool a_rows_inside = (int(bx) + 1) * bm <= int(p.m);  // as in the kernel
      const bool b_rows_inside = (int(by) + 1) * bn <= int(p.n);
      for (int k_tile = 0; k_tile < int(size<2>(gA)); ++k_tile) {
        const bool k_inside = (k_tile + 1) * bk <= int(p.k);
        for (int t = 0; t < Cfg::threads; ++t) {  // copy phase
          auto tAgA = local_partition(gA, tA, t);
          auto tAcA = local_partition(cgA, tA, t);
          auto tAsA = local_partition(sA, tA, t);
          auto tBgB = local_partition(gB, tB, t);
          auto tBcB = local_partition(cgB, tB, t);
          auto tBsB = local_partition(sB, tB, t);
          if (a_rows_inside && k_inside) copy(tAgA(_, _, k_tile), tAsA);
          else mm::copy_or_zero(tAgA(_, _, k_tile), tAsA, tAcA(_, _, k_tile), shape(mA));
          if (b_rows_inside && k_inside) copy(tBgB(_, _, k_tile), tBsB);
          else mm::copy_or_zero(tBgB(_, _, k_tile), tBsB, tBcB(_, _, k_tile), shape(mB));
        }
        for (int t = 0; t < Cfg::threads; ++t) {  // compute phase
          auto tCsA = local_partition(sA, tC, t, Step<_1, X>{});
          auto tCsB = local_partition(sB, tC, t, Step<X, _1>{});
          gemm(tCsA, tCsB, acc[std::size_t(t)]);
        }
      }
      for (int t = 0; t < Cfg::threads; ++t) {  // epilogue
        auto tCgC = local_partition(gC, tC, t, Step<_1, _1>{});
        auto tCcC = local_partition(cgC, tC, t, Step<_1, _1>{});
        if (a_rows_inside && b_rows_inside) copy(acc[std::size_t(t)], tCgC);
        else copy_if([&](int i) { return bool(elem_less(tCcC(i), shape(mC))); }, acc[std::size_t(t)], tCgC);
      }
    }
}

template <class Cfg>
void check_emulation(const GemmProblem& p, const char* step) {
  std::vector<float> a(std::size_t(p.m * p.k)), b(std::size_t(p.k * p.n));
  // Small integers: every product and sum is exact in fp32, so the comparison is exact.
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 11) - 5);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 13) - 6);
  std::vector<float> c(std::size_t(p.m * p.n), std::nanf(""));  // poisoned: an unwritten element fails
  emulate_layout_gemm<Cfg>(p, a.data(), b.data(), c.data());
  const MatrixShape sa = p.shape_a(), sb = p.shape_b(), sc = p.shape_c();
  int bad = 0;
  for (std::int64_t m = 0; m < p.m; ++m)
    for (std::int64_t n = 0; n < p.n; ++n) {
      double want = 0;
      for (std::int64_t k = 0; k < p.k; ++k) want += double(a[std::size_t(sa.offset(m, k))]) * b[std::size_t(sb.offset(k, n))];
      const float got = c[std::size_t(sc.offset(m, n))];
      if (!(got == float(want)) && bad++ < 3)
        ADD_FAILURE() << step << " " << p.layout_tag() << " " << size_name(p) << ": C(" << m << "," << n
                      << ") = " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0) << step << " " << p.layout_tag() << " " << size_name(p);
}

/// check_emulation for the eight storage orders of step StepCfg (a configuration of layout_gemm.cuh).
template <class StepCfg>
void check_emulation_all_orders(const Size& s, const char* step) {
  constexpr Order R = Order::row, Cm = Order::col;
  const auto run = [&]<Order OA, Order OB, Order OC>() {
    check_emulation<ch05::Layouts<StepCfg, OA, OB, OC>>(GemmProblem{s.m, s.n, s.k, OA, OB, OC}, step);
  };
  run.template operator()<R, R, R>();
  run.template operator()<R, Cm, R>();
  run.template operator()<Cm, R, R>();
  run.template operator()<Cm, Cm, R>();
  run.template operator()<R, R, Cm>();
  run.template operator()<R, Cm, Cm>();
  run.template operator()<Cm, R, Cm>();
  run.template operator()<Cm, Cm, Cm>();
}

class LayoutGemmOnCpu : public ::testing::TestWithParam<Size> {};

TEST_P(LayoutGemmOnCpu, EveryOrderMatchesTheExactProduct) {
  check_emulation_all_orders<ch05::Blocktile1dCfg>(GetParam(), "blocktile_1d");
  check_emulation_all_orders<ch05::LayoutUnpaddedCfg>(GetParam(), "unpadded");
  check_emulation_all_orders<ch05::LayoutPaddedCfg>(GetParam(), "padded");
}

// The sizes of the GPU test but 1024³ (too slow thread by thread), plus one with two K steps, and
// blocktile_1d's exact tile and one past it.
const Size kCpuSizes[] = {{1, 1, 1},     {17, 33, 9},  {127, 129, 65}, {128, 128, 8},
                          {129, 257, 33}, {128, 128, 16}, {64, 64, 8},   {65, 65, 9}};

INSTANTIATE_TEST_SUITE_P(ch05, LayoutGemmOnCpu, ::testing::ValuesIn(kCpuSizes), mm::test::param_name);

// ---- CPU: shared-memory bank conflicts ----

// Wavefronts one warp request needs: the 32-bit bank rule of tests/lds_wavefronts.hpp.
int wavefronts(const std::vector<int>& word_offsets) { return mm::test::lds32_wavefronts(word_offsets); }

// The words a warp request reads: 1 is a broadcast, 32 one word per lane.
int distinct_words(const std::vector<int>& word_offsets) {
  return int(std::set<int>(word_offsets.begin(), word_offsets.end()).size());
}

// The warp stores of the copy of a (Rows,8) tile into shared layout sL with copy threads tA: the 32
// lanes' word offsets, one request per (warp, value).
template <int Rows, class SL, class TL>
std::vector<std::vector<int>> copy_store_requests(SL sL, TL tA) {
  const auto cS = make_identity_tensor(make_shape(Int<Rows>{}, _8{}));
  std::vector<std::vector<int>> requests;
  for (int warp = 0; warp < size_v<TL> / 32; ++warp)
    for (int v = 0; v < Rows * 8 / size_v<TL>; ++v) {
      std::vector<int>& offs = requests.emplace_back();
      for (int lane = 0; lane < 32; ++lane) {
        const auto c = local_partition(cS, tA, warp * 32 + lane)(v);
        offs.push_back(int(sL(int(get<0>(c)), int(get<1>(c)))));
      }
    }
  return requests;
}

// The warp loads of the inner loop for one k tile of one operand: tCsA (Step<_1,X>) or tCsB
// (Step<X,_1>) of compute threads tC over a (Rows,8) shared tile, one request per (warp, value, k).
template <int Rows, class SL, class TL, class Proj>
std::vector<std::vector<int>> inner_loop_requests(SL sL, TL tC, Proj proj) {
  const auto cS = make_identity_tensor(make_shape(Int<Rows>{}, _8{}));
  std::vector<std::vector<int>> requests;
  for (int warp = 0; warp < size_v<TL> / 32; ++warp) {
    const int values = int(size<0>(local_partition(cS, tC, warp * 32, proj)));
    for (int i = 0; i < values; ++i)
      for (int k = 0; k < 8; ++k) {
        std::vector<int>& offs = requests.emplace_back();
        for (int lane = 0; lane < 32; ++lane) {
          const auto c = local_partition(cS, tC, warp * 32 + lane, proj)(i, k);
          offs.push_back(int(sL(int(get<0>(c)), int(get<1>(c)))));
        }
      }
  }
  return requests;
}

// The worst request of a list, by `cost` (wavefronts or distinct_words).
int worst(const std::vector<std::vector<int>>& requests, int (*cost)(const std::vector<int>&)) {
  int w = 0;
  for (const auto& r : requests) w = std::max(w, cost(r));
  return w;
}

// The fewest of a list, by `cost`.
int fewest(const std::vector<std::vector<int>>& requests, int (*cost)(const std::vector<int>&)) {
  int f = 1 << 30;
  for (const auto& r : requests) f = std::min(f, cost(r));
  return f;
}

template <class SL, class TL>
int copy_store_wavefronts(SL sL, TL tA) {
  return worst(copy_store_requests<128>(sL, tA), wavefronts);
}

template <class SL, class TL, class Proj>
int compute_load_wavefronts(SL sL, TL tC, Proj proj) {
  return worst(inner_loop_requests<128>(sL, tC, proj), wavefronts);
}

TEST(ch05_BankConflicts, KMajorCopyStoresAre8WayUnpaddedAnd4WayPadded) {
  const auto unpadded = ch05::smem_layout<false, _128>();
  const auto padded = ch05::smem_layout<true, _128>();
  const auto t_k = ch05::copy_thread_layout<ch05::Major::k, kThreads8x8>();
  const auto t_mn = ch05::copy_thread_layout<ch05::Major::mn, kThreads8x8>();
  // K-major: a warp writes 4 rows × 8 k. Unpadded, word m + 128k: bank m, 8 words per bank.
  // Padded, m + 129k: bank (m + k) % 32, sums 0..10, at most 4 pairs (m,k) per sum.
  EXPECT_EQ(copy_store_wavefronts(unpadded, t_k), 8);
  EXPECT_EQ(copy_store_wavefronts(padded, t_k), 4);
  // MN-major: 32 consecutive m of one k, 32 consecutive words: conflict-free either way.
  EXPECT_EQ(copy_store_wavefronts(unpadded, t_mn), 1);
  EXPECT_EQ(copy_store_wavefronts(padded, t_mn), 1);
}

TEST(ch05_BankConflicts, InnerLoopLoadsAreConflictFreeEitherWay) {
  for (bool pad : {false, true})
    for (bool row_c : {false, true}) {
      const auto check = [&](auto sL, auto tC) {
        EXPECT_EQ(compute_load_wavefronts(sL, tC, Step<_1, X>{}), 1) << "sA, padded " << pad << ", row-major C " << row_c;
        EXPECT_EQ(compute_load_wavefronts(sL, tC, Step<X, _1>{}), 1) << "sB, padded " << pad << ", row-major C " << row_c;
      };
      const auto with_tc = [&](auto sL) {
        if (row_c) check(sL, ch05::compute_thread_layout<Cfg8x8, Order::row>());
        else check(sL, ch05::compute_thread_layout<Cfg8x8, Order::col>());
      };
      if (pad) with_tc(ch05::smem_layout<true, _128>());
      else with_tc(ch05::smem_layout<false, _128>());
    }
}

TEST(ch05_BankConflicts, Blocktile1dKMajorCopyStoresAre8WayMNMajor1) {
  // (64,8):(1,64): a K-major warp writes 4 rows × 8 k, word m + 64k, bank m: 8 words in each of 4 banks.
  const auto t_k = ch05::copy_thread_layout<ch05::Major::k, kThreads1d>();
  const auto t_mn = ch05::copy_thread_layout<ch05::Major::mn, kThreads1d>();
  EXPECT_EQ(worst(copy_store_requests<64>(ch05::smem_layout<false, _64>(), t_k), wavefronts), 8);
  EXPECT_EQ(worst(copy_store_requests<64>(ch05::smem_layout<false, _64>(), t_mn), wavefronts), 1);
  EXPECT_EQ(int(copy_store_requests<64>(ch05::smem_layout<false, _64>(), t_k).size()), 16);  // one store per warp
}

// The inner loop of blocktile_1d, per warp and k tile, for a row-major C: 64 loads of sA, each one word
// for the whole warp (a broadcast), and 8 of sB, 32 consecutive words; all one wavefront. That is 72
// loads for the 64 FFMA a warp issues per k tile (8 accumulators × 8 k): 9 per 8. The 8×8 step issues
// 128 loads for 512 FFMA: 1 per 4. A column-major C swaps the roles of sA and sB.
TEST(ch05_BankConflicts, Blocktile1dInnerLoopIsOneBroadcastPerFmaAndConflictFree) {
  const auto sL = ch05::smem_layout<false, _64>();
  for (bool row_c : {true, false}) {
    // broadcast_proj: the operand whose 8 values a thread loads per k (sA for a row-major C).
    const auto check = [&](auto tC, auto broadcast_proj, auto spread_proj) {
      const auto broadcast = inner_loop_requests<64>(sL, tC, broadcast_proj);
      const auto spread = inner_loop_requests<64>(sL, tC, spread_proj);
      const int warps = kThreads1d / 32;
      EXPECT_EQ(int(broadcast.size()), warps * 8 * 8) << "row-major C " << row_c;  // 8 values × 8 k
      EXPECT_EQ(int(spread.size()), warps * 1 * 8) << "row-major C " << row_c;     // 1 value × 8 k
      EXPECT_EQ(worst(broadcast, distinct_words), 1) << "row-major C " << row_c;
      EXPECT_EQ(fewest(spread, distinct_words), 32) << "row-major C " << row_c;
      EXPECT_EQ(worst(broadcast, wavefronts), 1) << "row-major C " << row_c;
      EXPECT_EQ(worst(spread, wavefronts), 1) << "row-major C " << row_c;
    };
    if (row_c) check(ch05::compute_thread_layout<Cfg1d, Order::row>(), Step<_1, X>{}, Step<X, _1>{});
    else check(ch05::compute_thread_layout<Cfg1d, Order::col>(), Step<X, _1>{}, Step<_1, X>{});
  }
  // The 8×8 step for comparison: 8 + 8 values × 8 k = 128 loads per warp and k tile.
  const auto tC = ch05::compute_thread_layout<Cfg8x8, Order::row>();
  const auto sA = inner_loop_requests<128>(ch05::smem_layout<false, _128>(), tC, Step<_1, X>{});
  const auto sB = inner_loop_requests<128>(ch05::smem_layout<false, _128>(), tC, Step<X, _1>{});
  EXPECT_EQ(int(sA.size() + sB.size()), kThreads8x8 / 32 * 128);
}

}  // namespace
