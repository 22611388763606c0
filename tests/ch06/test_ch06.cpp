// Chapter 06: every step of the chapter's list (steps.cu) against the fp64 reference in every storage
// order (GPU),
// and the partitions themselves on the CPU: every element owned once, float4s contiguous, warps
// coalesced (or, for the counter-example, not), 8 rows of A per thread in two runs of 4 (or, unpermuted,
// 16 apart), and the shared-memory wavefronts that each step's layouts predict.
// Every test name starts with "ch06", so that `ctest -R ch06` selects this chapter.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <numeric>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "05_layout_matmul/steps.hpp"
#include "06_tiled_copy_mma/steps.hpp"
#include "06_tiled_copy_mma/tiled.cuh"
#include "06_tiled_copy_mma/tiled_prefetch.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "lds_wavefronts.hpp"

namespace {

namespace ch06 = mm::ch06;
using mm::GemmProblem;
using GemmStep = mm::GemmKernel<float, float>;
using mm::test::step_named;

// The chapter's list, in the page's order (with MM_APPENDIX_STEPS, the appendix's steps too).
const std::vector<GemmStep> kSteps = ch06::steps();

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

using Param = std::tuple<GemmStep, const char*, Size>;

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
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

// A second seed, at a size with partial tiles in M and N and whole K steps.
TEST(ch06_TiledCopyMmaGemm, AnotherSeed) {
  MM_REQUIRE_GPU();
  for (const GemmStep& step : kSteps)
    for (const char* tag : {"RRR", "RCR"}) mm::test::expect_matches_fp64(step, problem({300, 260, 72}, tag), 7);
}

// More rows than 65535 blocks of 8 (the bug: the check itself failed to launch), and a wide C
// (N on grid y: 7813 tiles of 128).
TEST(ch06_TiledCopyMmaGemm, TallAndWideMatricesPassTheCheck) {
  MM_REQUIRE_GPU();
  for (const GemmStep& step : kSteps) mm::test::expect_matches_fp64(step, problem(mm::test::tall_size));
  mm::test::expect_matches_fp64(step_named(kSteps, "tiled_prefetch"), problem(mm::test::wide_size, "RCR"));
}

TEST(ch06_TiledCopyMmaGemm, MisalignedPointerTakesTheScalarPath) {
  MM_REQUIRE_GPU();
  for (const GemmStep& step : kSteps) {
    // A and B one float past a 16-byte boundary: the kernel must see it and take the scalar path for
    // every tile; a 128-bit load there would fault.
    const mm::CheckResult r = mm::check_gemm_kernel<float, float>(
        problem({256, 256, 64}, "RRR"), mm::test::shifted_by_one_float(step.launch), mm::DType::f32, 3);
    EXPECT_TRUE(r.ok) << step.name << ": " << r.summary;
  }
}

// ---- CPU: the kernel's own code, run by 256 host threads per block ----
//
// tiled_gemm_block and tiled_prefetch_gemm_block are the whole kernel bodies (__host__ __device__); here each
// block runs on 256 std::threads with a std::barrier for __syncthreads(). Same partitions, same
// predicates, same vector/scalar decisions, same 128-bit copies (as 16-byte host loads): a GPU-free
// check of every storage order and the ragged and unaligned paths.

/// Which kernel body a step is: tiled.cuh's or tiled_prefetch.cuh's.
enum class Body { tiled, tiled_prefetch };

template <Body kBody, class Cfg, class Args>
void emulate_grid(const Args& args, const GemmProblem& p) {
  struct Smem {  // as the kernel's: two arrays, each 16-byte aligned
    alignas(16) float a[mm::cosize_v<ch06::SmemLayoutAOf<Cfg>>];
    alignas(16) float b[mm::cosize_v<ch06::SmemLayoutBOf<Cfg>>];
  };
  // One set of 256 threads runs the grid's blocks one after the other: between two blocks every thread waits
  // and shared memory is zeroed again, so each block starts as if alone. (A set of threads per block spent
  // most of the test's time in the kernel, starting 256 threads a block: CI time.)
  const dim3 grid = mm::ch06::tiled_grid(p);
  auto smem = std::make_unique<Smem>();
  std::barrier<> barrier(mm::ch06::kThreads);
  auto sync_threads = [&barrier] { barrier.arrive_and_wait(); };
  std::vector<std::thread> threads;
  for (int t = 0; t < mm::ch06::kThreads; ++t)
    threads.emplace_back([&, t] {
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          if constexpr (kBody == Body::tiled)
            ch06::tiled_gemm_block<Cfg>(args, int(bx), int(by), t, smem->a, smem->b, sync_threads);
          else ch06::tiled_prefetch_gemm_block<Cfg>(args, int(bx), int(by), t, smem->a, smem->b, sync_threads);
          barrier.arrive_and_wait();  // the block is done
          if (t == 0) *smem = Smem{};
          barrier.arrive_and_wait();  // the next block's shared memory is fresh
        }
    });
  for (std::thread& th : threads) th.join();
}

// Runs step Cfg's block function on host threads for p (A and B `shift` floats past a 16-byte
// boundary) and compares with a double-precision product: empty when every element matches.
template <Body kBody, class Cfg>
std::string emulate_and_check(const GemmProblem& p, int shift) {
  return mm::test::run_on_host_and_check(p, shift, [&](const float* A, const float* B, float* C) {
    ch06::with_tiled_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) { emulate_grid<kBody, Cfg>(args, p); });
  });
}

// The CPU emulation of each step of the list, by its name (a step without one fails the tests below).
using Emulation = std::string (*)(const GemmProblem&, int);
const std::map<std::string, Emulation> kEmulations = {
    {"tiled_ldg128", emulate_and_check<Body::tiled, ch06::TiledLdg128Cfg>},
    {"tiled_ldg128_pad4", emulate_and_check<Body::tiled, ch06::TiledLdg128Pad4Cfg>},
    {"tiled_vec128", emulate_and_check<Body::tiled, ch06::TiledVec128Cfg>},
    {"tiled_vec128_uncoalesced", emulate_and_check<Body::tiled, ch06::TiledVec128UncoalescedCfg>},
    {"tiled_prefetch", emulate_and_check<Body::tiled_prefetch, ch06::TiledPrefetchCfg>},
    {"tiled_prefetch_pairs_share_a", emulate_and_check<Body::tiled_prefetch, ch06::TiledPrefetchPairsShareACfg>},
};

// The step's emulation run at p; fails (and returns an error) for a step that has none.
std::string emulate_step(const GemmStep& step, const GemmProblem& p, int shift) {
  const auto it = kEmulations.find(step.name);
  if (it == kEmulations.end()) return "no CPU emulation for step " + step.name;
  return it->second(p, shift);
}

// Few sizes (each block costs 256 threads' barriers): one element, ragged everything, several blocks with
// ragged edges, K = 4k+1 (no 16-byte aligned rows of a row-major A), aligned full tiles.
const Size kEmulatedSizes[] = {{1, 1, 1}, {17, 33, 9}, {129, 257, 33}, {64, 64, 13}, {130, 66, 18}, {128, 256, 24}};

class TiledCopyMmaEmulated : public ::testing::TestWithParam<std::tuple<GemmStep, const char*>> {};

TEST_P(TiledCopyMmaEmulated, MatchesDoubleOnTheCpu) {
  const auto& [step, tag] = GetParam();
  for (const Size& size : kEmulatedSizes) {
    const std::string err = emulate_step(step, problem(size, tag), 0);
    EXPECT_EQ(err, "") << step.name << " " << tag << " at " << size_name(size);
  }
}

// A and B one float past a 16-byte boundary: the kernel must see it and take the scalar path.
TEST_P(TiledCopyMmaEmulated, MisalignedPointersTakeTheScalarPath) {
  const auto& [step, tag] = GetParam();
  const std::string err = emulate_step(step, problem({128, 128, 16}, tag), 1);
  EXPECT_EQ(err, "") << step.name << " " << tag;
}

INSTANTIATE_TEST_SUITE_P(ch06, TiledCopyMmaEmulated,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts)),
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

// The copy thread layouts of the coalesced steps, or of the counter-example.
template <bool kStrided>
using CopyThreads = std::conditional_t<kStrided, ch06::StridedCopyThreads, ch06::CoalescedCopyThreads>;

template <bool kKMajor, bool kStrided>
void expect_copy_covers_tile_once() {
  const std::vector<int> hits = copy_hits(mm::ch06::operand_copy<kKMajor, CopyThreads<kStrided>>());
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
  const auto tiled_copy = mm::ch06::operand_copy<kKMajor, CopyThreads<kStrided>>();
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

template <class TiledMma>
void expect_every_element_of_c_owned_once() {
  const TiledMma mma;
  auto tile = mm::make_identity_tensor(mm::make_shape(mm::_128{}, mm::_128{}));  // (BM,BN) -> (m,n)
  std::vector<int> hits(128 * 128, 0);
  for (int t = 0; t < ch06::kThreads; ++t) {
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

TEST(ch06_TiledMma, EveryElementOfCIsOwnedExactlyOnce) {
  expect_every_element_of_c_owned_once<ch06::TiledMmaT>();
  expect_every_element_of_c_owned_once<ch06::TiledMmaUnpermuted>();
  expect_every_element_of_c_owned_once<ch06::TiledMmaPairsShareA>();
}

// Row i (0..7) of thread index x along M (or N): permuted, 4x..4x+3 and 64+4x..64+4x+3; unpermuted,
// x + 16i.
int owned_row(bool permuted, int x, int i) {
  if (!permuted) return x + 16 * i;
  return i < 4 ? 4 * x + i : 64 + 4 * x + i - 4;
}

// Thread t is (tm, tn) = (t % 16, t / 16) with M fastest, (t / 16, t % 16) with N fastest; for each k
// it reads rows owned_row(tm, ·) of sA and columns owned_row(tn, ·) of sB, `pitch` floats per k.
template <class TiledMma, class SmemLayout>
void expect_thread_reads(bool n_fastest, bool permuted, int pitch) {
  const TiledMma mma;
  std::vector<int> offset(static_cast<std::size_t>(mm::cosize_v<SmemLayout>));
  std::iota(offset.begin(), offset.end(), 0);
  auto sA = mm::make_tensor(offset.data(), SmemLayout{});  // (BM,BK) -> offset
  auto sB = mm::make_tensor(offset.data(), SmemLayout{});  // (BN,BK) -> offset
  for (int t = 0; t < ch06::kThreads; ++t) {
    const int tm = n_fastest ? t / 16 : t % 16, tn = n_fastest ? t % 16 : t / 16;
    auto tCsA = mma.get_slice(t).partition_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCsB = mma.get_slice(t).partition_B(sB);  // (MMA,MMA_N,MMA_K)
    ASSERT_EQ(int(mm::size(tCsA)), 64) << "thread " << t;
    ASSERT_EQ(int(mm::size(tCsB)), 64) << "thread " << t;
    for (int k = 0; k < 8; ++k) {
      auto a = tCsA(mm::_, mm::_, k);  // (MMA,MMA_M)
      auto b = tCsB(mm::_, mm::_, k);  // (MMA,MMA_N)
      for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(a(i), owned_row(permuted, tm, i) + pitch * k) << "thread " << t << " k " << k << " value " << i;
        EXPECT_EQ(b(i), owned_row(permuted, tn, i) + pitch * k) << "thread " << t << " k " << k << " value " << i;
      }
    }
  }
}

// For each k, thread (tm, tn) reads rows 4tm..4tm+3 and 64+4tm..64+4tm+3 of sA (two LDS.128), and the
// same columns of sB; in shared memory (stride 1 along M, 132 per k) each run is one aligned float4.
TEST(ch06_TiledMma, EachThreadReadsTwoRunsOfFourRowsOfAAndOfB) {
  expect_thread_reads<ch06::TiledMmaT, ch06::SmemLayoutA>(false, true, 132);
  expect_thread_reads<ch06::TiledMmaPairsShareA, ch06::SmemLayoutA>(true, true, 132);
}

// The first two steps: thread (tm, tn) reads rows tm + 16i: 8 scalar loads per operand and k, with
// chapter 05's pitch of 129 (tiled_ldg128) or 132 (tiled_ldg128_pad4).
TEST(ch06_TiledMma, UnpermutedThreadsReadRowsSixteenApart) {
  expect_thread_reads<ch06::TiledMmaUnpermuted, ch06::SmemLayoutPadded<ch06::BM, 1>>(false, false, 129);
  expect_thread_reads<ch06::TiledMmaUnpermuted, ch06::SmemLayoutPadded<ch06::BM, 4>>(false, false, 132);
}

// A lane pair (2i, 2i+1) reads the same A (or B) of every k when the two threads have the same tm (tn).
// M fastest, the pair shares B and never A; N fastest, A and never B. Both at once would be two
// threads owning the same elements of C, which EveryElementOfCIsOwnedExactlyOnce rules out.
template <class TiledMma>
std::pair<bool, bool> every_pair_shares_a_b() {
  const TiledMma mma;
  std::vector<int> offset(static_cast<std::size_t>(mm::cosize_v<ch06::SmemLayoutA>));
  std::iota(offset.begin(), offset.end(), 0);
  auto sA = mm::make_tensor(offset.data(), ch06::SmemLayoutA{});  // (BM,BK) -> offset, also (BN,BK)
  bool share_a = true, share_b = true;
  for (int t = 0; t < ch06::kThreads; t += 2) {
    auto a0 = mma.get_slice(t).partition_A(sA), a1 = mma.get_slice(t + 1).partition_A(sA);
    auto b0 = mma.get_slice(t).partition_B(sA), b1 = mma.get_slice(t + 1).partition_B(sA);
    for (int i = 0; i < int(mm::size(a0)); ++i) {
      share_a = share_a && a0(i) == a1(i);
      share_b = share_b && b0(i) == b1(i);
    }
  }
  return {share_a, share_b};
}

TEST(ch06_TiledMma, ALanePairSharesItsBOrItsA) {
  EXPECT_EQ(every_pair_shares_a_b<ch06::TiledMmaT>(), std::make_pair(false, true));
  EXPECT_EQ(every_pair_shares_a_b<ch06::TiledMmaPairsShareA>(), std::make_pair(true, false));
}

// ---- CPU: shared-memory wavefronts, by the rules of lds_wavefronts.hpp ----

/// One k of the inner loop for one warp: how many shared loads of A and of B each lane issues, and
/// what they cost in wavefronts.
struct InnerLoopK {
  int loads_a = 0, loads_b = 0;            ///< shared-load instructions per lane
  int wavefronts_a = 0, wavefronts_b = 0;  ///< their wavefronts for the warp
};

// The values of one k that lane `lane` of warp w reads of A (or B), as offsets into SmemLayout; a load
// is kWidth consecutive values (4: an LDS.128, 1: an LDS), costed by the 128-bit rule or the bank rule.
template <class TiledMma, class SmemLayout, int kWidth>
InnerLoopK inner_loop_k(int w, int k) {
  static_assert(kWidth == 1 || kWidth == 4, "LDS or LDS.128");
  const TiledMma mma;
  std::vector<int> offset(static_cast<std::size_t>(mm::cosize_v<SmemLayout>));
  std::iota(offset.begin(), offset.end(), 0);
  auto s = mm::make_tensor(offset.data(), SmemLayout{});  // (MN,BK) -> offset, for A and B alike
  InnerLoopK r;
  for (bool operand_a : {true, false}) {
    std::vector<std::vector<int>> values(32);  // lane -> its 8 offsets of this k
    for (int lane = 0; lane < 32; ++lane) {
      auto thr = mma.get_slice(32 * w + lane);
      auto push = [&](auto const& part) {  // (MMA,MMA_MN)
        for (int i = 0; i < 8; ++i) values[std::size_t(lane)].push_back(part(i));
      };
      if (operand_a) push(thr.partition_A(s)(mm::_, mm::_, k));
      else push(thr.partition_B(s)(mm::_, mm::_, k));
    }
    for (int i = 0; i < 8; i += kWidth) {
      std::vector<int> starts;
      for (const std::vector<int>& v : values) {
        for (int j = 1; j < kWidth; ++j) EXPECT_EQ(v[std::size_t(i + j)], v[std::size_t(i)] + j) << "not a float4";
        starts.push_back(v[std::size_t(i)]);
      }
      const int wavefronts = kWidth == 4 ? mm::test::lds128_wavefronts(starts) : mm::test::lds32_wavefronts(starts);
      (operand_a ? r.loads_a : r.loads_b) += 1;
      (operand_a ? r.wavefronts_a : r.wavefronts_b) += wavefronts;
    }
  }
  return r;
}

// Chapter 03's wavefront rule, per k and warp. Unpermuted (tiled_ldg128, tiled_ldg128_pad4): 8 + 8 LDS,
// one wavefront each, with either pad: 16. Permuted, 2 + 2 LDS.128: pairs sharing B cost A 4 + 4,
// B 2 + 2; pairs sharing A cost A 2 + 2, B 4 + 4: 12 either way, never the 8 of both sharing.
TEST(ch06_Wavefronts, SixteenScalarOrTwelvePerKWhicheverOperandThePairsShare) {
  using ch06::BM;
  for (int w = 0; w < 8; ++w)
    for (int k : {0, 3, 7}) {
      const InnerLoopK pad1 = inner_loop_k<ch06::TiledMmaUnpermuted, ch06::SmemLayoutPadded<BM, 1>, 1>(w, k);
      const InnerLoopK pad4 = inner_loop_k<ch06::TiledMmaUnpermuted, ch06::SmemLayoutPadded<BM, 4>, 1>(w, k);
      const InnerLoopK share_b = inner_loop_k<ch06::TiledMmaT, ch06::SmemLayoutA, 4>(w, k);
      const InnerLoopK share_a = inner_loop_k<ch06::TiledMmaPairsShareA, ch06::SmemLayoutA, 4>(w, k);
      for (const InnerLoopK& scalar : {pad1, pad4}) {
        EXPECT_EQ(scalar.loads_a + scalar.loads_b, 16) << "warp " << w << " k " << k;
        EXPECT_EQ(scalar.wavefronts_a + scalar.wavefronts_b, 16) << "warp " << w << " k " << k;
      }
      EXPECT_EQ(share_b.loads_a, 2);
      EXPECT_EQ(share_b.loads_b, 2);
      EXPECT_EQ(share_b.wavefronts_a, 8) << "warp " << w << " k " << k;
      EXPECT_EQ(share_b.wavefronts_b, 4) << "warp " << w << " k " << k;
      EXPECT_EQ(share_a.loads_a, 2);
      EXPECT_EQ(share_a.loads_b, 2);
      EXPECT_EQ(share_a.wavefronts_a, 4) << "warp " << w << " k " << k;
      EXPECT_EQ(share_a.wavefronts_b, 8) << "warp " << w << " k " << k;
    }
}

// Wavefronts of warp w's stores of one K step into a (128,8) tile with a pad of kPad. An MN-major
// copy's float4 on a 16-byte aligned column start is one STS.128 (the 128-bit rule: 4 when its 32
// vectors are distinct and conflict-free); otherwise the thread stores its 4 values with 4 STS, each
// costed by the bank rule.
template <bool kKMajor, int kPad>
int copy_store_wavefronts(int w) {
  using Smem = ch06::SmemLayoutPadded<ch06::BM, kPad>;
  std::vector<int> offset(static_cast<std::size_t>(mm::cosize_v<Smem>));
  std::iota(offset.begin(), offset.end(), 0);
  auto s = mm::make_tensor(offset.data(), Smem{});  // (MN,BK) -> offset
  const auto tiled_copy = ch06::operand_copy<kKMajor, ch06::CoalescedCopyThreads>();
  auto lane_value = [&](int lane, int v) { return int(tiled_copy.get_slice(32 * w + lane).partition_D(s)(v)); };
  if constexpr (!kKMajor && kPad % 4 == 0) {
    std::vector<int> starts;
    for (int lane = 0; lane < 32; ++lane) starts.push_back(lane_value(lane, 0));
    return mm::test::lds128_wavefronts(starts);
  } else {
    int total = 0;
    for (int v = 0; v < 4; ++v) {
      std::vector<int> words;
      for (int lane = 0; lane < 32; ++lane) words.push_back(lane_value(lane, v));
      total += mm::test::lds32_wavefronts(words);
    }
    return total;
  }
}

// tiled_ldg128 keeps chapter 05's pad of 1 under the 128-bit copies: a K-major copy (16 rows × k 0-3
// and 4-7) meets itself 2-way, an MN-major one (4 floats apart per lane) 4-way: 8 and 16 wavefronts
// for 4 STS. The pad of 4 makes the K-major stores conflict-free and the MN-major float4 one
// STS.128: 4 wavefronts each.
TEST(ch06_SharedMemory, CopyStoresConflictWithAPadOfOneNotFour) {
  for (int w = 0; w < 8; ++w) {
    EXPECT_EQ((copy_store_wavefronts<true, 1>(w)), 8) << "warp " << w;
    EXPECT_EQ((copy_store_wavefronts<false, 1>(w)), 16) << "warp " << w;
    EXPECT_EQ((copy_store_wavefronts<true, 4>(w)), 4) << "warp " << w;
    EXPECT_EQ((copy_store_wavefronts<false, 4>(w)), 4) << "warp " << w;
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
  // Chapter 05's best step (the step before) has the same tile and int offsets: the same answer, in
  // every storage order; and so has every step of the list.
  const GemmStep ch05_best = mm::ch05::best();
  for (const char* tag : {"RRR", "RCR", "CRR", "CCC"})
    for (const mm::ProblemSize& s : {mm::ProblemSize{16909320, 1, 127}, {16909312, 1, 127}, {131072, 16385, 1},
                                     {1, 1, 300000000}, {300, 200, 100}}) {
      const GemmProblem p = problem(s, tag);
      EXPECT_EQ(mm::ch06::tiled_rejects(p), ch05_best.rejects(p)) << tag << " " << size_name(p);
      for (const GemmStep& step : kSteps) EXPECT_EQ(step.rejects(p), mm::ch06::tiled_rejects(p)) << step.name;
    }
  EXPECT_THROW(step_named(kSteps, "tiled_prefetch").launch(GemmProblem{1, 65535 * 128 + 1, 1}, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

TEST(ch06_TiledGrid, VectorPathNeedsAlignedRows) {
  alignas(16) static float buffer[8];
  EXPECT_TRUE(mm::vector_aligned(buffer, 1024));
  EXPECT_FALSE(mm::vector_aligned(buffer, 1025));  // row 1 starts 4 bytes past a 16-byte boundary
  EXPECT_FALSE(mm::vector_aligned(buffer + 1, 1024));
}

}  // namespace
