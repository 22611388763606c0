// Chapter 04: every step of the chapter's list against the source, element by element (GPU),
// and the layouts the README describes, computed with the layout library on the CPU (no GPU
// needed): which elements a thread owns, which bank a warp's shared-memory access hits.
// Every test name starts with "ch04", so that `ctest -R ch04` selects this chapter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "04_copy_and_transpose/copy_cp_async.cuh"
#include "04_copy_and_transpose/copy_smem.cuh"
#include "04_copy_and_transpose/copy_vec128.cuh"
#include "04_copy_and_transpose/layouts.hpp"
#include "04_copy_and_transpose/steps.hpp"
#include "04_copy_and_transpose/transpose_naive.cuh"
#include "04_copy_and_transpose/transpose_smem.cuh"
#include "gpu_test.hpp"
#include "harness/copy_runner.hpp"

namespace mm {
/// gtest prints a copy step (a parameter of the tests below) as its name.
void PrintTo(const CopyKernel& step, std::ostream* os) { *os << step.name; }
}  // namespace mm

namespace {

namespace ch = mm::ch04;

struct Size {
  std::int64_t m, n;
};
void PrintTo(const Size& s, std::ostream* os) { *os << s.m << "x" << s.n; }

// One element; smaller than a tile with N % 4 != 0 (the float4 kernels fall back); exactly
// one tile; one row and one column past a tile, N % 4 == 1; many whole tiles; N not a
// multiple of 32 or 64 but of 4 (partial float4 tiles).
const Size kSizes[] = {{1, 1}, {31, 33}, {32, 32}, {33, 4097}, {2048, 2048}, {4096, 1000}};

// "transpose_smem_padded_33x4097": the step and the size, readable in ctest's list.
std::string case_name(const ::testing::TestParamInfo<std::tuple<mm::CopyKernel, Size>>& info) {
  const Size s = std::get<1>(info.param);
  return std::get<0>(info.param).name + "_" + std::to_string(s.m) + "x" + std::to_string(s.n);
}

// ---- GPU: every step, every size, bit for bit (destination poisoned first) ----

class CopyKernels : public ::testing::TestWithParam<std::tuple<mm::CopyKernel, Size>> {};

TEST_P(CopyKernels, MatchesTheSourceExactly) {
  const mm::CopyKernel& k = std::get<0>(GetParam());
  MM_REQUIRE_ARCH(k.needs);
  const Size s = std::get<1>(GetParam());
  ASSERT_EQ(k.rejects(s.m, s.n), "") << k.name << " at " << s.m << "x" << s.n;
  const mm::CopyCheck r = mm::check_copy_kernel(s.m, s.n, k.launch, k.transposes);
  EXPECT_TRUE(r.ok) << k.name << " at " << s.m << "x" << s.n << ": " << r.summary;
}

INSTANTIATE_TEST_SUITE_P(ch04, CopyKernels,
                         ::testing::Combine(::testing::ValuesIn(ch::steps()), ::testing::ValuesIn(kSizes)), case_name);

// A rectangular matrix whose tiles overhang in both directions, with another seed.
TEST(ch04_CopyKernels, MatchTheSourceWithAnotherSeed) {
  MM_REQUIRE_GPU();
  for (const mm::CopyKernel& k : ch::steps()) {
    if (!mm::arch::unmet(k.needs).empty()) continue;
    const mm::CopyCheck r = mm::check_copy_kernel(100, 260, k.launch, k.transposes, 11);
    EXPECT_TRUE(r.ok) << k.name << ": " << r.summary;
  }
}

// The list is the page's eight steps, in its order; the chapter's best is copy_vec128.
TEST(ch04_Steps, AreThePagesEightInItsOrder) {
  std::vector<std::string> names;
  for (const mm::CopyKernel& k : ch::steps()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"copy_smem", "copy_cp_async", "copy_vec128", "copy_vec128_64x64",
                                             "transpose_naive", "transpose_smem", "transpose_smem_padded",
                                             "transpose_smem_padded_64x64"}));
  EXPECT_EQ(ch::best().name, "ch04_copy_vec128");
  EXPECT_FALSE(ch::best().transposes);
}

// ---- CPU: the partition the README draws ----

// Thread t of ThreadLayout (8,32):(32,1) sits at row t/32, column t%32 of the thread grid.
TEST(ch04_Layouts, ThreadLayoutPutsAWarpOnOneRow) {
  const ch::ThreadLayout thr{};
  for (int t = 0; t < ch::kThreads; ++t) {
    const auto c = thr.get_hier_coord(t);
    EXPECT_EQ(int(mm::get<0>(c)), t / 32) << "thread " << t;
    EXPECT_EQ(int(mm::get<1>(c)), t % 32) << "thread " << t;
  }
}

// parallelize(32x32 tile, (8,32) threads, t) is (4,1): rows t/32 + 8i, column t%32, i = 0..3.
TEST(ch04_Layouts, EachThreadOwnsFourElementsEightRowsApart) {
  const auto tileC = mm::make_identity_tensor(mm::Shape<mm::_32, mm::_32>{});  // (32,32) -> (m,n)
  std::vector<int> owner(32 * 32, -1);
  for (int t = 0; t < ch::kThreads; ++t) {
    auto mine = mm::parallelize(tileC, ch::ThreadLayout{}, t);  // (4,1) -> (m,n)
    ASSERT_EQ(int(mm::size(mine)), 4);
    EXPECT_EQ(int(mm::size<0>(mine)), 4);
    EXPECT_EQ(int(mm::size<1>(mine)), 1);
    for (int i = 0; i < 4; ++i) {
      const auto mn = mine(i);
      const int m = int(mm::get<0>(mn)), n = int(mm::get<1>(mn));
      EXPECT_EQ(m, t / 32 + 8 * i) << "thread " << t << " element " << i;
      EXPECT_EQ(n, t % 32) << "thread " << t << " element " << i;
      EXPECT_EQ(owner[m * 32 + n], -1) << "element (" << m << "," << n << ") owned twice";
      owner[m * 32 + n] = t;
    }
  }
  for (int e = 0; e < 32 * 32; ++e) EXPECT_NE(owner[e], -1) << "element " << e << " owned by nobody";
}

// The same thread layout over a 64x64 tile: (8,2) elements per thread, 16 in all.
TEST(ch04_Layouts, OnA64x64TileEachThreadOwnsSixteen) {
  const auto tileC = mm::make_identity_tensor(mm::Shape<mm::_64, mm::_64>{});
  for (int t : {0, 1, 31, 32, 255}) {
    auto mine = mm::parallelize(tileC, ch::ThreadLayout{}, t);  // (8,2) -> (m,n)
    EXPECT_EQ(int(mm::size<0>(mine)), 8);
    EXPECT_EQ(int(mm::size<1>(mine)), 2);
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 2; ++b) {
        const auto mn = mine(a, b);
        EXPECT_EQ(int(mm::get<0>(mn)), t / 32 + 8 * a);
        EXPECT_EQ(int(mm::get<1>(mn)), t % 32 + 32 * b);
      }
  }
}

// The float4 thread layout (32,8):(8,1) gives thread t the float4 at (t/8, t%8) of a 32x8 tile.
TEST(ch04_Layouts, VecThreadLayoutGivesOneFloat4PerThread) {
  const auto tileC = mm::make_identity_tensor(mm::Shape<mm::_32, mm::_8>{});
  for (int t = 0; t < ch::kThreads; ++t) {
    auto mine = mm::parallelize(tileC, ch::VecThreadLayout{}, t);
    ASSERT_EQ(int(mm::size(mine)), 1);
    EXPECT_EQ(int(mm::get<0>(mine(0))), t / 8);
    EXPECT_EQ(int(mm::get<1>(mine(0))), t % 8);
  }
}

// ---- CPU: shared-memory banks of one warp access ----

// The bank of each lane's word when warp `warp` accesses element i of its partition of a
// shared tile with layout `smem` (32 banks of 4-byte words: bank = offset % 32).
template <class SmemLayout>
std::vector<int> banks_of_warp(SmemLayout smem, int warp, int i) {
  static float storage[mm::cosize_v<SmemLayout>];
  auto s = mm::make_tensor(mm::make_smem_ptr(storage), smem);
  std::vector<int> banks;
  for (int lane = 0; lane < 32; ++lane) {
    auto mine = mm::parallelize(s, ch::ThreadLayout{}, warp * 32 + lane);
    banks.push_back(int((&mine(i) - storage) % 32));
  }
  return banks;
}
int distinct(const std::vector<int>& v) { return int(std::set<int>(v.begin(), v.end()).size()); }

TEST(ch04_Banks, StoringARowOfTheTileHits32Banks) {
  for (int warp = 0; warp < 8; ++warp)
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(distinct(banks_of_warp(ch::TransposeSmemCfg::SmemLayout{}, warp, i)), 32);
      EXPECT_EQ(distinct(banks_of_warp(ch::TransposeSmemPaddedCfg::SmemLayout{}, warp, i)), 32);
    }
}

TEST(ch04_Banks, ReadingAColumnOfTheUnpaddedTileHitsOneBank) {
  const auto transposed = mm::select<1, 0>(ch::TransposeSmemCfg::SmemLayout{});  // (32,32):(1,32)
  EXPECT_EQ(mm::to_string(transposed), "(_32,_32):(_1,_32)");
  for (int warp = 0; warp < 8; ++warp)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(distinct(banks_of_warp(transposed, warp, i)), 1);  // 32-way conflict
}

TEST(ch04_Banks, ReadingAColumnOfThePaddedTileHits32Banks) {
  const auto transposed = mm::select<1, 0>(ch::TransposeSmemPaddedCfg::SmemLayout{});  // (32,32):(1,33)
  EXPECT_EQ(mm::to_string(transposed), "(_32,_32):(_1,_33)");
  for (int warp = 0; warp < 8; ++warp)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(distinct(banks_of_warp(transposed, warp, i)), 32);
  // The 64x64 tile with rows of 65: a column read is conflict-free as well.
  const auto big = mm::select<1, 0>(ch::TransposeSmemPadded64x64Cfg::SmemLayout{});
  for (int i = 0; i < 16; ++i) EXPECT_EQ(distinct(banks_of_warp(big, 3, i)), 32);
}

// Transposing is a composition: the layout composed with the row-major (32,32) layout reads
// it with the modes swapped, the same function as select<1,0>.
TEST(ch04_Layouts, TransposedViewIsACompositionWithTheTransposition) {
  const auto transposition = mm::make_layout(mm::Shape<mm::_32, mm::_32>{}, mm::LayoutRight{});  // (32,32):(32,1)
  const auto padded = ch::TransposeSmemPaddedCfg::SmemLayout{};
  const auto composed = mm::composition(padded, transposition);
  const auto selected = mm::select<1, 0>(padded);
  for (int a = 0; a < 32; ++a)
    for (int b = 0; b < 32; ++b) EXPECT_EQ(int(composed(a, b)), int(selected(a, b))) << a << "," << b;
}


// ---- CPU: the kernels' tile / parallelize / predicate expressions, run on the host ----
//
// These repeat the tensor expressions of copy_smem_kernel and transpose_smem_kernel, block by
// block and thread by thread, on host arrays (the load leg of every thread, then the store leg:
// the barrier). They check, without a GPU, that tiles overhanging M and N are predicated right
// and that the transposed shared view puts every element in its place.

template <class Cfg>
std::vector<float> emulate_transpose(int M, int N, const std::vector<float>& src) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  using SmemLayout = typename Cfg::SmemLayout;
  std::vector<float> dst(std::size_t(M) * N, -1.0f);
  std::vector<float> smem(mm::cosize_v<SmemLayout>);
  auto mS = ch::row_major(src.data(), M, N);                               // (M,N)
  auto mD = ch::row_major(dst.data(), N, M);                               // (N,M)
  auto cMS = mm::make_identity_tensor(mm::make_shape(M, N));
  auto cMD = mm::make_identity_tensor(mm::make_shape(N, M));
  auto sS = mm::make_tensor(mm::make_smem_ptr(smem.data()), SmemLayout{});            // (BM,BN)
  auto sD = mm::make_tensor(mm::make_smem_ptr(smem.data()), mm::select<1, 0>(SmemLayout{}));  // (BN,BM)
  const dim3 grid = ch::tile_grid<BM, BN>(M, N);
  for (int by = 0; by < int(grid.y); ++by)
    for (int bx = 0; bx < int(grid.x); ++bx) {
      std::fill(smem.begin(), smem.end(), -2.0f);
      auto gS = mm::tile(mS, mm::Shape<mm::Int<BM>, mm::Int<BN>>{}, mm::make_coord(by, bx));
      auto cS = mm::tile(cMS, mm::Shape<mm::Int<BM>, mm::Int<BN>>{}, mm::make_coord(by, bx));
      auto gD = mm::tile(mD, mm::Shape<mm::Int<BN>, mm::Int<BM>>{}, mm::make_coord(bx, by));
      auto cD = mm::tile(cMD, mm::Shape<mm::Int<BN>, mm::Int<BM>>{}, mm::make_coord(bx, by));
      for (int t = 0; t < ch::kThreads; ++t) {  // load leg
        auto tSgS = mm::parallelize(gS, ch::ThreadLayout{}, t);
        auto tSsS = mm::parallelize(sS, ch::ThreadLayout{}, t);
        auto tSp = mm::make_predicate(mm::parallelize(cS, ch::ThreadLayout{}, t), mm::make_shape(M, N));
        auto tSrS = mm::make_fragment_like(tSsS);
        mm::clear(tSrS);
        mm::copy_if(tSp, tSgS, tSrS);
        mm::copy(tSrS, tSsS);
      }
      for (int t = 0; t < ch::kThreads; ++t) {  // store leg, after the barrier
        auto tDsD = mm::parallelize(sD, ch::ThreadLayout{}, t);
        auto tDgD = mm::parallelize(gD, ch::ThreadLayout{}, t);
        auto tDp = mm::make_predicate(mm::parallelize(cD, ch::ThreadLayout{}, t), mm::make_shape(N, M));
        mm::copy_if(tDp, tDsD, tDgD);
      }
    }
  return dst;
}

// For the kernels without a barrier: runs body(part, t) for every thread t of every block (by, bx)
// of `grid`, one thread after another, where part(m) is what thread t takes of tile (by, bx) of m
// (tiles of shape `tiler`, threads laid out as Thr), as the kernel computes it.
template <class Thr, class Tiler, class Body>
void for_each_thread(dim3 grid, Tiler tiler, Body body) {
  for (int by = 0; by < int(grid.y); ++by)
    for (int bx = 0; bx < int(grid.x); ++bx)
      for (int t = 0; t < ch::kThreads; ++t)
        body([&](auto& m) { return mm::parallelize(mm::tile(m, tiler, mm::make_coord(by, bx)), Thr{}, t); }, t);
}

template <class Cfg>
std::vector<float> emulate_naive_transpose(int M, int N, const std::vector<float>& src) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  std::vector<float> dst(std::size_t(M) * N, -1.0f);
  auto mS = ch::row_major(src.data(), M, N);                                                   // (M,N)
  auto mDt = mm::make_tensor(dst.data(), mm::make_shape(M, N), mm::make_stride(mm::_1{}, std::int64_t(M)));  // (M,N)
  auto cM = mm::make_identity_tensor(mm::make_shape(M, N));
  const auto tiler = mm::Shape<mm::Int<BM>, mm::Int<BN>>{};
  for_each_thread<ch::ThreadLayout>(ch::tile_grid<BM, BN>(M, N), tiler, [&](auto part, int) {
    auto tSgS = part(mS);
    auto tSgDt = part(mDt);
    auto tSp = mm::make_predicate(part(cM), mm::make_shape(M, N));
    auto tSr = mm::make_fragment_like(tSgS);
    mm::copy_if(tSp, tSgS, tSr);
    mm::copy_if(tSp, tSr, tSgDt);
  });
  return dst;
}

// The float4 copy on host float4 arrays (N % 4 == 0).
template <class Cfg>
std::vector<float4> emulate_vec128_copy(int M, int N, const std::vector<float4>& src) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  constexpr int BN4 = BN / 4;
  const int N4 = N / 4;
  std::vector<float4> dst(src.size(), float4{-1, -1, -1, -1});
  std::vector<float4> smem(BM * BN4);
  auto mS = ch::row_major(src.data(), M, N4);
  auto mD = ch::row_major(dst.data(), M, N4);
  auto cM = mm::make_identity_tensor(mm::make_shape(M, N4));
  auto sS = mm::make_tensor(mm::make_smem_ptr(smem.data()), ch::SmemRowMajor<BM, BN4>{});
  const auto tiler = mm::Shape<mm::Int<BM>, mm::Int<BN4>>{};
  for_each_thread<ch::VecThreadLayout>(ch::tile_grid<BM, BN>(M, N), tiler, [&](auto part, int t) {
    auto tSgS = part(mS);
    auto tSgD = part(mD);
    auto tSsS = mm::parallelize(sS, ch::VecThreadLayout{}, t);
    auto tSp = mm::make_predicate(part(cM), mm::make_shape(M, N4));
    auto tSrS = mm::make_fragment_like(tSsS);
    mm::clear(tSrS);
    mm::copy_if(tSp, tSgS, tSrS);
    mm::copy(tSrS, tSsS);
    mm::copy_if(tSp, tSsS, tSgD);
  });
  return dst;
}

// copy_cp_async's load leg on the host: the cp.async atom is a plain copy there (zeros where
// the predicate is false), so this checks its partitioning and predication.
template <class Cfg>
std::vector<float> emulate_cp_async_copy(int M, int N, const std::vector<float>& src) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  using SmemLayout = typename Cfg::SmemLayout;
  std::vector<float> dst(src.size(), -1.0f);
  std::vector<float> smem(mm::cosize_v<SmemLayout>);
  auto mS = ch::row_major(src.data(), M, N);
  auto mD = ch::row_major(dst.data(), M, N);
  auto cM = mm::make_identity_tensor(mm::make_shape(M, N));
  auto sS = mm::make_tensor(mm::make_smem_ptr(smem.data()), SmemLayout{});
  const auto tiler = mm::Shape<mm::Int<BM>, mm::Int<BN>>{};
  for_each_thread<ch::ThreadLayout>(ch::tile_grid<BM, BN>(M, N), tiler, [&](auto part, int t) {
    auto tSgS = part(mS);
    auto tSgD = part(mD);
    auto tSsS = mm::parallelize(sS, ch::ThreadLayout{}, t);
    auto tSp = mm::make_predicate(part(cM), mm::make_shape(M, N));
    // Host code, but nvcc instantiates this generic lambda in its device passes too, where an sm_75
    // pass must not see cp.async: the same guard as the kernel's (true on the host).
    if constexpr (mm::arch::compiled_for(mm::arch::sm80)) {
      mm::copy_if(mm::Copy_Atom<mm::SM80_CP_ASYNC_CACHEALWAYS<float>, float>{}, tSp, tSgS, tSsS);
      mm::copy_if(tSp, tSsS, tSgD);
    }
  });
  return dst;
}

std::vector<float> iota_matrix(int M, int N) {
  std::vector<float> v(std::size_t(M) * N);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return v;
}

template <class F>
void expect_transposed(int M, int N, F emulate, const char* what) {
  const std::vector<float> src = iota_matrix(M, N);
  const std::vector<float> dst = emulate(M, N, src);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      if (dst[std::size_t(j) * M + i] != src[std::size_t(i) * N + j] && bad++ < 3)
        ADD_FAILURE() << what << " " << M << "x" << N << ": dst(" << j << "," << i << ") = " << dst[std::size_t(j) * M + i]
                      << ", want " << src[std::size_t(i) * N + j];
  EXPECT_EQ(bad, 0) << what << " " << M << "x" << N;
}

const Size kEmulatedSizes[] = {{1, 1}, {31, 33}, {32, 32}, {33, 70}, {65, 4}, {100, 129}};

TEST(ch04_HostEmulation, TransposeSmemPutsEveryElementInItsPlace) {
  for (const Size& s : kEmulatedSizes) {
    expect_transposed(int(s.m), int(s.n), emulate_transpose<ch::TransposeSmemCfg>, "transpose_smem");
    expect_transposed(int(s.m), int(s.n), emulate_transpose<ch::TransposeSmemPaddedCfg>, "transpose_smem_padded");
    expect_transposed(int(s.m), int(s.n), emulate_transpose<ch::TransposeSmemPadded64x64Cfg>,
                      "transpose_smem_padded_64x64");
  }
}

TEST(ch04_HostEmulation, TransposeNaivePutsEveryElementInItsPlace) {
  for (const Size& s : kEmulatedSizes)
    expect_transposed(int(s.m), int(s.n), emulate_naive_transpose<ch::TransposeNaiveCfg>, "transpose_naive");
}

TEST(ch04_HostEmulation, CpAsyncCopyCopiesEveryElement) {
  for (const Size& s : kEmulatedSizes) {
    const int M = int(s.m), N = int(s.n);
    const std::vector<float> src = iota_matrix(M, N);
    EXPECT_EQ(emulate_cp_async_copy<ch::CopyCpAsyncCfg>(M, N, src), src) << "copy_cp_async " << M << "x" << N;
  }
}

TEST(ch04_HostEmulation, Vec128CopyCopiesEveryFloat4) {
  for (const Size& s : {Size{1, 4}, Size{31, 36}, Size{33, 100}, Size{64, 64}, Size{65, 260}}) {
    const int M = int(s.m), N = int(s.n);
    std::vector<float4> src(std::size_t(M) * N / 4);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = float4{float(4 * i), float(4 * i + 1), float(4 * i + 2), float(4 * i + 3)};
    for (auto dst : {emulate_vec128_copy<ch::CopyVec128Cfg>(M, N, src), emulate_vec128_copy<ch::CopyVec128_64x64Cfg>(M, N, src)}) {
      int bad = 0;
      for (std::size_t i = 0; i < src.size(); ++i)
        bad += dst[i].x != src[i].x || dst[i].y != src[i].y || dst[i].z != src[i].z || dst[i].w != src[i].w;
      EXPECT_EQ(bad, 0) << "copy_vec128 " << M << "x" << N;
    }
  }
}

// ---- CPU: launch arithmetic and size limits ----

TEST(ch04_Launch, GridCoversTheMatrixWithTiles) {
  const dim3 small = ch::tile_grid<32, 32>(33, 4097);
  EXPECT_EQ(small.x, 129u);  // ceil(4097 / 32)
  EXPECT_EQ(small.y, 2u);    // ceil(33 / 32)
  const dim3 big = ch::tile_grid<64, 64>(4096, 1000);
  EXPECT_EQ(big.x, 16u);  // ceil(1000 / 64)
  EXPECT_EQ(big.y, 64u);
  const dim3 one = ch::tile_grid<32, 32>(1, 1);
  EXPECT_EQ(one.x * one.y, 1u);
}

TEST(ch04_Launch, RejectsWhatTheGridCannotHold) {
  EXPECT_EQ(ch::tile_rejects<ch::CopySmemCfg>(65535 * 32, 1), "");
  EXPECT_NE(ch::tile_rejects<ch::CopySmemCfg>(65535 * 32 + 1, 1), "");
  EXPECT_NE(ch::tile_rejects<ch::CopyVec128_64x64Cfg>(65535 * 64 + 1, 1), "");
  EXPECT_EQ(ch::tile_rejects<ch::CopySmemCfg>(1, 1 << 30), "");
  EXPECT_THROW(ch::launch_copy_smem<ch::CopySmemCfg>(65535 * 32 + 1, 1, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

// The copies' offsets are 64-bit: more than 2^31 elements is fine; M and N themselves are ints.
TEST(ch04_Launch, TakesMoreThan2To31ElementsButNotIndicesBeyond32Bits) {
  EXPECT_EQ(ch::tile_rejects<ch::CopySmemCfg>(65536, 65536), "");  // 2^32 elements
  EXPECT_EQ(ch::tile_rejects<ch::TransposeSmemPadded64x64Cfg>(1, 2147483647), "");
  EXPECT_NE(ch::tile_rejects<ch::CopySmemCfg>(1, 2147483648), "");
}

TEST(ch04_Launch, Float4PathOnlyForRowsOfWholeFloat4) {
  alignas(16) static float buf[8];
  EXPECT_TRUE(ch::vec128_ok(4096, buf, buf));
  EXPECT_FALSE(ch::vec128_ok(4097, buf, buf));  // rows start at 4-byte, not 16-byte, boundaries
  EXPECT_FALSE(ch::vec128_ok(4096, buf + 1, buf));
}

}  // namespace
