// Chapter 06: the TiledCopy/TiledMMA kernels against the fp64 reference in every storage order (GPU),
// and the partitions themselves on the CPU: every element owned once, float4s contiguous, warps
// coalesced (or, for the counter-example, not), 8 rows of A per thread in two runs of 4.
// Every test name starts with "ch06", so that `ctest -R ch06` selects this chapter.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <numeric>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "06_tiled_copy_mma/tiled_copy_mma.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using mm::GemmProblem;
using mm::test::NamedKernel;

const NamedKernel kKernels[] = {
    {"tiled_vec128", mm::ch06::launch_tiled_vec128},
    {"tiled_vec128_uncoalesced", mm::ch06::launch_tiled_vec128_uncoalesced},
    {"tiled_prefetch", mm::ch06::launch_tiled_prefetch},
};

using mm::test::problem;
using mm::test::Size;
using mm::test::size_name;

// The sizes around the 128×128×8 tile (gpu_test.hpp: degenerate, smaller than a tile, one short of /
// equal to / one past a tile, many blocks), then sizes for the scalar path: K = 4k+1 and 4k+2 (no
// row-major A row is 16-byte aligned), M and N not multiples of 4 (same for column-major A, row-major
// B), partial tiles with aligned K, and several full tiles in every direction (vector path only).
const std::vector<Size> kSizes = [] {
  std::vector<Size> sizes = mm::test::tile128_sizes();
  sizes.insert(sizes.end(),
               {{64, 64, 13}, {130, 66, 18}, {131, 133, 36}, {200, 136, 40}, {256, 384, 96}, {1, 300, 257}});
  return sizes;
}();

// The four storage orders of the chapter, and two with a column-major C.
const char* const kLayouts[] = {"RRR", "RCR", "CRR", "CCR", "RRC", "CCC"};

using Param = std::tuple<NamedKernel, const char*, Size>;

// ---- GPU: every kernel, every storage order, every size, against the fp64 reference ----
//
// "tiled_prefetch_RCR_129x257x33" (kernel, storage order, size) in ctest's list.

class TiledCopyMmaGemm : public ::testing::TestWithParam<Param> {};

TEST_P(TiledCopyMmaGemm, MatchesFp64Reference) {
  MM_REQUIRE_GPU();
  const auto& [kernel, tag, size] = GetParam();
  mm::test::expect_matches_fp64(kernel, problem(size, tag));
}

INSTANTIATE_TEST_SUITE_P(ch06, TiledCopyMmaGemm,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

// A second seed, at a size with partial tiles in M and N and whole K steps.
TEST(ch06_TiledCopyMmaGemm, AnotherSeed) {
  MM_REQUIRE_GPU();
  for (const NamedKernel& kernel : kKernels)
    for (const char* tag : {"RRR", "RCR"}) mm::test::expect_matches_fp64(kernel, problem({300, 260, 72}, tag), 7);
}

// More rows than 65535 blocks of 8 (the bug: the check itself failed to launch), and a wide C
// (N on grid y: 7813 tiles of 128).
TEST(ch06_TiledCopyMmaGemm, TallAndWideMatricesPassTheCheck) {
  MM_REQUIRE_GPU();
  for (const NamedKernel& kernel : kKernels) mm::test::expect_matches_fp64(kernel, problem(mm::test::tall_size));
  mm::test::expect_matches_fp64(kKernels[2], problem(mm::test::wide_size, "RCR"));
}

TEST(ch06_TiledCopyMmaGemm, MisalignedPointerTakesTheScalarPath) {
  MM_REQUIRE_GPU();
  for (const NamedKernel& kernel : kKernels) {
    // A and B one float past a 16-byte boundary: the kernel must see it and take the scalar path for
    // every tile; a 128-bit load there would fault.
    const mm::CheckResult r = mm::check_gemm_kernel<float, float>(
        problem({256, 256, 64}, "RRR"), mm::test::shifted_by_one_float(kernel.launch), mm::DType::f32, 3);
    EXPECT_TRUE(r.ok) << kernel.name << ": " << r.summary;
  }
}

// ---- CPU: the kernel's own code, run by 256 host threads per block ----
//
// tiled_gemm_block is the whole kernel body (__host__ __device__); here each block runs on 256
// std::threads with a std::barrier for __syncthreads(). Same partitions, same predicates, same
// vector/scalar decisions, same 128-bit copies (as 16-byte host loads): a GPU-free check of every
// storage order and the ragged and unaligned paths.

template <bool kPrefetch, class Args>
void emulate_grid(const Args& args, const GemmProblem& p) {
  struct alignas(16) Smem {
    float a[mm::cosize_v<mm::ch06::SmemLayoutA>];
    float b[mm::cosize_v<mm::ch06::SmemLayoutB>];
  };
  const dim3 grid = mm::ch06::tiled_grid(p);
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      auto smem = std::make_unique<Smem>();
      std::barrier<> barrier(mm::ch06::kThreads);
      auto sync_threads = [&barrier] { barrier.arrive_and_wait(); };
      std::vector<std::thread> threads;
      for (int t = 0; t < mm::ch06::kThreads; ++t)
        threads.emplace_back([&, t] {
          mm::ch06::tiled_gemm_block<kPrefetch>(args, int(bx), int(by), t, smem->a, smem->b, sync_threads);
        });
      for (std::thread& th : threads) th.join();
    }
}

// Runs `kernel` on the CPU for p (A and B shifted by `shift` floats from a 16-byte boundary) and
// compares with a double-precision product. Returns an empty string when every element matches.
std::string emulate_and_check(const std::string& kernel, const GemmProblem& p, int shift) {
  return mm::test::run_on_host_and_check(p, shift, [&](const float* A, const float* B, float* C) {
    auto run = [&](auto const& args) {
      if (kernel == "tiled_prefetch") emulate_grid<true>(args, p);
      else emulate_grid<false>(args, p);
    };
    if (kernel == "tiled_vec128_uncoalesced") mm::ch06::with_tiled_gemm_args<true>(p, A, B, C, run);
    else mm::ch06::with_tiled_gemm_args<false>(p, A, B, C, run);
  });
}

// Few sizes (each block costs 256 thread starts): one element, ragged everything, several blocks with
// ragged edges, K = 4k+1 (no 16-byte aligned rows of a row-major A), aligned full tiles.
const Size kEmulatedSizes[] = {{1, 1, 1}, {17, 33, 9}, {129, 257, 33}, {64, 64, 13}, {130, 66, 18}, {128, 256, 24}};

class TiledCopyMmaEmulated : public ::testing::TestWithParam<std::tuple<NamedKernel, const char*>> {};

TEST_P(TiledCopyMmaEmulated, MatchesDoubleOnTheCpu) {
  const auto& [kernel, tag] = GetParam();
  for (const Size& size : kEmulatedSizes) {
    const std::string err = emulate_and_check(kernel.name, problem(size, tag), 0);
    EXPECT_EQ(err, "") << kernel.name << " " << tag << " at " << size_name(size);
  }
}

// A and B one float past a 16-byte boundary: the kernel must see it and take the scalar path.
TEST_P(TiledCopyMmaEmulated, MisalignedPointersTakeTheScalarPath) {
  const auto& [kernel, tag] = GetParam();
  const std::string err = emulate_and_check(kernel.name, problem({128, 128, 16}, tag), 1);
  EXPECT_EQ(err, "") << kernel.name << " " << tag;
}

INSTANTIATE_TEST_SUITE_P(ch06, TiledCopyMmaEmulated,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(kLayouts)),
                         mm::test::param_name);  // "tiled_vec128_RCR"

// ---- CPU: the partitions ----

// Coordinates (mn, k) of every value of every thread of a (128,8) operand copy.
template <class TiledCopy>
std::vector<int> copy_hits(TiledCopy const& tiled_copy) {
  std::vector<int> hits(128 * 8, 0);
  auto tile = mm::make_identity_tensor(mm::make_shape(mm::_128{}, mm::_8{}));  // (MN,K) -> (mn,k)
  for (int t = 0; t < mm::ch06::kThreads; ++t) {
    auto part = tiled_copy.get_slice(t).partition_S(tile);  // (CPY,CPY_MN,CPY_K) -> (mn,k)
    for (int i = 0; i < int(mm::size(part)); ++i) {
      auto c = part(i);
      ++hits[std::size_t(int(mm::get<0>(c)) + 128 * int(mm::get<1>(c)))];
    }
  }
  return hits;
}

template <bool kKMajor, bool kStrided>
void expect_copy_covers_tile_once() {
  const std::vector<int> hits = copy_hits(mm::ch06::operand_copy<kKMajor, kStrided>());
  int missed = 0, twice = 0;
  for (int h : hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0) << "k_major " << kKMajor << " strided " << kStrided;
  EXPECT_EQ(twice, 0) << "k_major " << kKMajor << " strided " << kStrided;
}

TEST(ch06_TiledCopy, EveryElementOfTheTileIsCopiedExactlyOnce) {
  expect_copy_covers_tile_once<false, false>();
  expect_copy_covers_tile_once<false, true>();
  expect_copy_covers_tile_once<true, false>();
  expect_copy_covers_tile_once<true, true>();
}

// Offsets (in floats) that each thread of `tiled_copy` reads from a matrix tile with stride `dA`:
// a tensor whose element is its own offset, partitioned like the real one.
template <class TiledCopy, class Stride>
std::vector<std::vector<int>> thread_offsets(TiledCopy const& tiled_copy, Stride const& stride, int cosize) {
  std::vector<int> offset(static_cast<std::size_t>(cosize));
  std::iota(offset.begin(), offset.end(), 0);
  auto tile = mm::make_tensor(offset.data(), mm::make_layout(mm::make_shape(mm::_128{}, mm::_8{}), stride));
  std::vector<std::vector<int>> result;
  for (int t = 0; t < mm::ch06::kThreads; ++t) {
    auto part = tiled_copy.get_slice(t).partition_S(tile);  // (CPY,CPY_MN,CPY_K)
    std::vector<int> v;
    for (int i = 0; i < int(mm::size(part)); ++i) v.push_back(part(i));
    result.push_back(v);
  }
  return result;
}

// Each thread's 4 values are one 16-byte-aligned float4 (given a leading dimension % 4 == 0), and
// warp 0's request touches `sectors` 32-byte sectors.
template <bool kKMajor, bool kStrided>
void expect_float4s_and_sectors(int sectors) {
  const int ld = 1000;  // a leading dimension % 4 == 0 that is not a power of two
  const auto tiled_copy = mm::ch06::operand_copy<kKMajor, kStrided>();
  const auto offsets = kKMajor ? thread_offsets(tiled_copy, mm::make_stride(ld, mm::_1{}), 128 * ld)
                               : thread_offsets(tiled_copy, mm::make_stride(mm::_1{}, ld), 8 * ld);
  std::set<int> warp0_sectors;
  for (int t = 0; t < mm::ch06::kThreads; ++t) {
    const std::vector<int>& v = offsets[std::size_t(t)];
    ASSERT_EQ(v.size(), 4u) << "thread " << t;
    EXPECT_EQ(v[0] % 4, 0) << "thread " << t << ": not 16-byte aligned";
    for (int i = 1; i < 4; ++i) EXPECT_EQ(v[std::size_t(i)], v[0] + i) << "thread " << t << ": not contiguous";
    if (t < 32) warp0_sectors.insert(v[0] * 4 / 32);
  }
  EXPECT_EQ(int(warp0_sectors.size()), sectors) << "k_major " << kKMajor << " strided " << kStrided;
}

TEST(ch06_TiledCopy, ValuesAreContiguousFloat4sAndWarpsCoalesce) {
  expect_float4s_and_sectors<false, false>(16);  // 512 contiguous bytes
  expect_float4s_and_sectors<true, false>(16);   // 16 rows × 32 bytes
  expect_float4s_and_sectors<false, true>(32);   // every lane alone in its sector
  expect_float4s_and_sectors<true, true>(32);
}

TEST(ch06_TiledMma, EveryElementOfCIsOwnedExactlyOnce) {
  const mm::ch06::TiledMmaT mma;
  auto tile = mm::make_identity_tensor(mm::make_shape(mm::_128{}, mm::_128{}));  // (BM,BN) -> (m,n)
  std::vector<int> hits(128 * 128, 0);
  for (int t = 0; t < mm::ch06::kThreads; ++t) {
    auto part = mma.get_slice(t).partition_C(tile);  // (MMA,MMA_M,MMA_N) -> (m,n)
    ASSERT_EQ(int(mm::size(part)), 64) << "thread " << t;
    for (int i = 0; i < 64; ++i) {
      auto c = part(i);
      ++hits[std::size_t(int(mm::get<0>(c)) + 128 * int(mm::get<1>(c)))];
    }
  }
  int missed = 0, twice = 0;
  for (int h : hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0);
  EXPECT_EQ(twice, 0);
}

// For each k, thread (tm, tn) reads rows 4tm..4tm+3 and 64+4tm..64+4tm+3 of sA (two LDS.128), and the
// same columns of sB; in shared memory (stride 1 along M) each run is one aligned float4.
TEST(ch06_TiledMma, EachThreadReadsTwoRunsOfFourRowsOfAAndOfB) {
  const mm::ch06::TiledMmaT mma;
  std::vector<int> offset(static_cast<std::size_t>(mm::cosize_v<mm::ch06::SmemLayoutA>));
  std::iota(offset.begin(), offset.end(), 0);
  auto sA = mm::make_tensor(offset.data(), mm::ch06::SmemLayoutA{});  // (BM,BK) -> offset
  auto sB = mm::make_tensor(offset.data(), mm::ch06::SmemLayoutB{});  // (BN,BK) -> offset
  for (int t = 0; t < mm::ch06::kThreads; ++t) {
    const int tm = t % 16, tn = t / 16;
    auto tCsA = mma.get_slice(t).partition_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCsB = mma.get_slice(t).partition_B(sB);  // (MMA,MMA_N,MMA_K)
    ASSERT_EQ(int(mm::size(tCsA)), 64) << "thread " << t;
    ASSERT_EQ(int(mm::size(tCsB)), 64) << "thread " << t;
    for (int k = 0; k < 8; ++k) {
      auto a = tCsA(mm::_, mm::_, k);  // (MMA,MMA_M)
      auto b = tCsB(mm::_, mm::_, k);  // (MMA,MMA_N)
      for (int i = 0; i < 8; ++i) {
        const int row = (i < 4 ? 4 * tm + i : 64 + 4 * tm + i - 4);
        const int col = (i < 4 ? 4 * tn + i : 64 + 4 * tn + i - 4);
        EXPECT_EQ(a(i), row + 132 * k) << "thread " << t << " k " << k << " value " << i;
        EXPECT_EQ(b(i), col + 132 * k) << "thread " << t << " k " << k << " value " << i;
      }
      EXPECT_EQ(a(0) % 4, 0);
      EXPECT_EQ(a(4) % 4, 0);
    }
  }
}

// ---- CPU: grid and rejects ----

TEST(ch06_TiledGrid, XCountsTilesOfMYTilesOfN) {
  const GemmProblem p{100, 3000, 7};
  EXPECT_EQ(mm::ch06::tiled_grid(p).x, 1u);   // ceil(100 / 128)
  EXPECT_EQ(mm::ch06::tiled_grid(p).y, 24u);  // ceil(3000 / 128)
}

TEST(ch06_TiledGrid, TakesAnySizeUpToTheGridLimitAnd32BitOffsets) {
  EXPECT_EQ(mm::ch06::tiled_rejects(GemmProblem{1, 1, 1}), "");
  EXPECT_EQ(mm::ch06::tiled_rejects(GemmProblem{1, 65535 * 128, 1}), "");  // the most tiles grid y holds
  EXPECT_NE(mm::ch06::tiled_rejects(GemmProblem{1, 65535 * 128 + 1, 1}), "");
  // C of 2^20 x 65535*128 has 8.8e12 elements: within the grid, far beyond int offsets.
  EXPECT_NE(mm::ch06::tiled_rejects(GemmProblem{1 << 20, 65535 * 128, 1}), "");
  EXPECT_EQ(mm::ch06::tiled_rejects(GemmProblem{16384, 131072, 1}), "");  // C: 2^31 elements in whole tiles
  EXPECT_NE(mm::ch06::tiled_rejects(GemmProblem{16385, 131072, 1}), "");  // one more tile of rows
  // Chapter 05's kernels have the same tile and int offsets: the same answer, in every storage order.
  for (const char* tag : {"RRR", "RCR", "CRR", "CCC"})
    for (const mm::ProblemSize& s : {mm::ProblemSize{16909320, 1, 127}, {16909312, 1, 127}, {131072, 16385, 1},
                                     {1, 1, 300000000}, {300, 200, 100}}) {
      const GemmProblem p = problem(s, tag);
      EXPECT_EQ(mm::ch06::tiled_rejects(p), mm::ch05::layout_gemm_rejects(p)) << tag << " " << size_name(p);
    }
  EXPECT_THROW(mm::ch06::launch_tiled_prefetch(GemmProblem{1, 65535 * 128 + 1, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

TEST(ch06_TiledGrid, VectorPathNeedsAlignedRows) {
  alignas(16) static float buffer[8];
  EXPECT_TRUE(mm::ch06::vector_aligned(buffer, 1024));
  EXPECT_FALSE(mm::ch06::vector_aligned(buffer, 1025));  // row 1 starts 4 bytes past a 16-byte boundary
  EXPECT_FALSE(mm::ch06::vector_aligned(buffer + 1, 1024));
}

}  // namespace
