// Chapter 07: every step of the chapter's list (steps.cu) against the fp64 reference in every storage
// order (GPU); on the CPU, the kernels' own block functions run by host threads, and the properties the chapter claims
// of its layouts: each 128-bit shared load of a half-warp touches at most 8 distinct 16-byte vectors
// (one wavefront), the K-major copy writes 32 different banks, every element of C has one owner.
// Every test name starts with "ch07", so that `ctest -R ch07` selects this chapter.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "07_pipelined_simt/fragment_pipelined.cuh"
#include "07_pipelined_simt/pipelined.cuh"
#include "07_pipelined_simt/register_transpose.cuh"
#include "07_pipelined_simt/steps.hpp"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "lds_wavefronts.hpp"

namespace {

namespace ch07 = mm::ch07;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;
using mm::test::step_named;
using GemmStep = mm::GemmKernel<float, float>;
template <class Cfg>
using Traits = ch07::Traits<Cfg>;

// The chapter's list, in the page's order (with MM_APPENDIX_STEPS, the appendix's steps too).
const std::vector<GemmStep> kSteps = ch07::steps();

// The sizes around the 128×128×8 tile (gpu_test.hpp), one past the 128×256×16 tile in every
// direction, K not a multiple of 4 (no 16-byte row of a K-major operand... and a ragged last K step),
// M, N not multiples of 4 (MN-major operands take 4-byte copies), tall and skinny, wide and short.
const std::vector<Size> kSizes = [] {
  std::vector<Size> sizes = mm::test::tile128_sizes();
  sizes.insert(sizes.end(), {{129, 257, 17}, {130, 66, 18}, {131, 133, 36}, {256, 512, 48}, {3000, 7, 129},
                             {5, 2000, 300}, {1, 300, 257}});
  return sizes;
}();

// The four storage orders of the chapter, and two with a column-major C.
const char* const kLayouts[] = {"RRR", "RCR", "CRR", "CCR", "RRC", "CCC"};

// ---- GPU: every kernel, every storage order, every size, against the fp64 reference ----

using Param = std::tuple<GemmStep, const char*, Size>;
class PipelinedGemm : public ::testing::TestWithParam<Param> {};

TEST_P(PipelinedGemm, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // cp.async
  const auto& [kernel, tag, size] = GetParam();
  mm::test::expect_matches_fp64(kernel, problem(size, tag));
}

INSTANTIATE_TEST_SUITE_P(ch07, PipelinedGemm,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

TEST(ch07_PipelinedGemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const GemmStep& step : kSteps)
    for (const char* tag : {"RRR", "RCR"}) mm::test::expect_matches_fp64(step, problem({1000, 1100, 520}, tag), 7);
}

TEST(ch07_PipelinedGemm, MisalignedPointersTakeTheFourByteCopies) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const GemmStep& step : kSteps)
    for (const char* tag : {"CRR", "RRR"}) {
      // A and B one float past a 16-byte boundary: a 16-byte cp.async there would fault.
      const mm::CheckResult r = mm::check_gemm_kernel<float, float>(
          problem({256, 256, 64}, tag), mm::test::shifted_by_one_float(step.launch), mm::DType::f32, 3);
      EXPECT_TRUE(r.ok) << step.name << " " << tag << ": " << r.summary;
    }
}

// ---- CPU: the kernel's block function on host threads ----
//
// pipelined_gemm_block and fragment_pipelined_gemm_block are the whole kernel bodies (__host__ __device__): each
// block runs on Traits<Cfg>::kThreads std::threads with a std::barrier for __syncthreads(). On the host a cp.async is a
// plain copy and cp_async_wait does nothing, so the ring's stage indices, the predicates, the
// zero fill and the path choices are checked here; the asynchrony is the GPU tests' job.

/// Which kernel body a step is: pipelined.cuh's, fragment_pipelined.cuh's or register_transpose.cuh's.
enum class Body { pipelined, fragment_pipelined, register_transpose };

// One set of threads runs the grid's blocks one after the other: between two blocks every thread waits and
// shared memory is zeroed again, so each block starts as if alone. (A set of threads per block spent most of
// the test's time in the kernel, starting 256 threads a block: CI time.)
template <Body kBody, class Cfg, class Args>
void emulate_grid(const Args& args, const GemmProblem& p) {
  const dim3 grid = ch07::gemm_grid<Cfg>(p);
  std::vector<mm::uint128_t> smem(Traits<Cfg>::kSmemBytes / 16);  // 16-byte aligned, as the kernel's
  std::barrier<> barrier(Traits<Cfg>::kThreads);
  auto sync_threads = [&barrier] { barrier.arrive_and_wait(); };
  std::vector<std::thread> threads;
  for (int t = 0; t < Traits<Cfg>::kThreads; ++t)
    threads.emplace_back([&, t] {
      float* smem_f = reinterpret_cast<float*>(smem.data());
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          if constexpr (kBody == Body::pipelined)
            ch07::pipelined_gemm_block<Cfg>(args, int(bx), int(by), t, smem_f, sync_threads);
          else if constexpr (kBody == Body::fragment_pipelined)
            ch07::fragment_pipelined_gemm_block<Cfg>(args, int(bx), int(by), t, smem_f, sync_threads);
          else ch07::register_transpose_gemm_block<Cfg>(args, int(bx), int(by), t, smem_f, sync_threads);
          barrier.arrive_and_wait();  // the block is done
          if (t == 0) std::fill(smem.begin(), smem.end(), mm::uint128_t{});
          barrier.arrive_and_wait();  // the next block's shared memory is fresh
        }
    });
  for (std::thread& th : threads) th.join();
}

template <Body kBody, class Cfg>
std::string emulate_and_check(const GemmProblem& p, int shift) {
  return mm::test::run_on_host_and_check(p, shift, [&](const float* A, const float* B, float* C) {
    ch07::with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) { emulate_grid<kBody, Cfg>(args, p); });
  });
}

template <Body kBody, class Cfg>
void expect_host_emulation_matches(const char* name) {
  // Partial tiles in M, N and K; one whole tile; shifted pointers (4-byte copies of an MN-major operand).
  for (const char* tag : kLayouts)
    for (Size s : {Size{130, 260, 20}, Size{Cfg::BM::value, Cfg::BN::value, 3 * Cfg::BK::value}})
      for (int shift : {0, 1}) {
        const std::string err = emulate_and_check<kBody, Cfg>(problem(s, tag), shift);
        EXPECT_EQ(err, "") << name << " " << tag << " " << mm::test::size_name(s) << " shift " << shift;
      }
}

constexpr Body kPipelined = Body::pipelined, kFragmentPipelined = Body::fragment_pipelined;
TEST(ch07_HostEmulation, PipelinedTwoStages) {
  expect_host_emulation_matches<kPipelined, ch07::PipelinedS2Cfg>("pipelined_s2");
}
TEST(ch07_HostEmulation, PipelinedFourStages) {
  expect_host_emulation_matches<kPipelined, ch07::PipelinedS4Cfg>("pipelined_s4");
}
TEST(ch07_HostEmulation, WarpTiled) { expect_host_emulation_matches<kPipelined, ch07::WarpTiledCfg>("warp_tiled"); }
TEST(ch07_HostEmulation, Swizzled) { expect_host_emulation_matches<kPipelined, ch07::SwizzledCfg>("swizzled"); }
TEST(ch07_HostEmulation, FragmentPipelined) {
  expect_host_emulation_matches<kFragmentPipelined, ch07::FragmentPipelinedCfg>("fragment_pipelined");
}
TEST(ch07_HostEmulation, DeepK) { expect_host_emulation_matches<kFragmentPipelined, ch07::DeepKCfg>("deep_k"); }
TEST(ch07_HostEmulation, BigTile) { expect_host_emulation_matches<kFragmentPipelined, ch07::BigTileCfg>("big_tile"); }
TEST(ch07_HostEmulation, RegisterTranspose) {
  expect_host_emulation_matches<Body::register_transpose, ch07::RegisterTransposeCfg>("register_transpose");
}

// ---- CPU: what the layouts promise ----

// The shared-memory offsets thread t reads for one k with its 128-bit loads: the start of each run of
// 4 (a float4) of A and of B.
template <class Cfg>
std::pair<std::vector<int>, std::vector<int>> vector_starts(int t, int k) {
  std::vector<int> offset(std::size_t(std::max(mm::cosize_v<typename Traits<Cfg>::SmemLayoutA>,
                                               mm::cosize_v<typename Traits<Cfg>::SmemLayoutB>)));
  for (std::size_t i = 0; i < offset.size(); ++i) offset[i] = int(i);
  auto sA = mm::make_tensor(offset.data(), typename Traits<Cfg>::SmemLayoutA{});  // (BM,BK,S) -> offset
  auto sB = mm::make_tensor(offset.data(), typename Traits<Cfg>::SmemLayoutB{});  // (BN,BK,S) -> offset
  typename Traits<Cfg>::TiledMma mma;
  auto a = mma.get_slice(t).partition_A(sA(mm::_, mm::_, 0))(mm::_, mm::_, k);  // (MMA,MMA_M)
  auto b = mma.get_slice(t).partition_B(sB(mm::_, mm::_, 0))(mm::_, mm::_, k);  // (MMA,MMA_N)
  std::pair<std::vector<int>, std::vector<int>> r;
  for (int i = 0; i < int(mm::size(a)); i += 4) {
    for (int j = 1; j < 4; ++j) EXPECT_EQ(a(i + j), a(i) + j) << "A: thread " << t << " value " << i + j;
    r.first.push_back(a(i));
  }
  for (int i = 0; i < int(mm::size(b)); i += 4) {
    for (int j = 1; j < 4; ++j) EXPECT_EQ(b(i + j), b(i) + j) << "B: thread " << t << " value " << i + j;
    r.second.push_back(b(i));
  }
  return r;
}

// Wavefronts of one LDS.128 instruction (run `run` of every lane of warp `w`, operand A or B), by the
// rule chapter 07 measured with ncu (README, "Wavefronts"; tests/lds_wavefronts.hpp): 4 per warp, or 2
// when the two lanes of every pair (2i, 2i+1) read the same address; no bank conflict allowed.
template <class Cfg>
int lds128_wavefronts(int w, int k, bool operand_a, int run) {
  std::vector<int> starts(32);
  for (int lane = 0; lane < 32; ++lane) {
    auto [a, b] = vector_starts<Cfg>(32 * w + lane, k);
    starts[std::size_t(lane)] = (operand_a ? a : b)[std::size_t(run)];
  }
  return mm::test::lds128_wavefronts(starts);
}

// Chapter 06's numbering (lane = M position, 16 of them) and the warp numbering (lane = lm + 8·ln) give
// the same counts: the lanes of a pair differ along M and share N, so a load of A costs 4 and a load
// of B 2. With 8×8 threads that is 12 per k (2 loads of each); with 8×16 (big_tile: 2 of A, 4 of B),
// 16 per k for twice the FMAs. No lane order does better: a pair cannot share both its A and its B.
TEST(ch07_Wavefronts, LoadsOfACostFourLoadsOfBTwo) {
  for (int w = 0; w < 8; ++w)
    for (int k : {0, 5})
      for (int run = 0; run < 2; ++run) {
        EXPECT_EQ(lds128_wavefronts<ch07::PipelinedS3Cfg>(w, k, true, run), 4) << "warp " << w << " k " << k;
        EXPECT_EQ(lds128_wavefronts<ch07::PipelinedS3Cfg>(w, k, false, run), 2) << "warp " << w << " k " << k;
        EXPECT_EQ(lds128_wavefronts<ch07::WarpTiledCfg>(w, k, true, run), 4) << "warp " << w << " k " << k;
        EXPECT_EQ(lds128_wavefronts<ch07::WarpTiledCfg>(w, k, false, run), 2) << "warp " << w << " k " << k;
        EXPECT_EQ(lds128_wavefronts<ch07::SwizzledCfg>(w, k, true, run), 4) << "warp " << w << " k " << k;
        EXPECT_EQ(lds128_wavefronts<ch07::SwizzledCfg>(w, k, false, run), 2) << "warp " << w << " k " << k;
      }
  for (int run = 0; run < 4; ++run) EXPECT_EQ(lds128_wavefronts<ch07::BigTileCfg>(3, 7, false, run), 2);
  for (int run = 0; run < 2; ++run) EXPECT_EQ(lds128_wavefronts<ch07::BigTileCfg>(3, 7, true, run), 4);
}

// A warp of the K-major copy writes 32 floats (4 MN × 8 k) to 32 different banks: no conflict.
template <class Cfg, int MN>
void expect_k_major_copy_conflict_free() {
  using T = Traits<Cfg>;
  std::vector<int> offset(std::size_t(mm::cosize_v<typename T::SmemLayoutA> + mm::cosize_v<typename T::SmemLayoutB>));
  for (std::size_t i = 0; i < offset.size(); ++i) offset[i] = int(i);
  using L = std::conditional_t<MN == T::BM::value, typename T::SmemLayoutA, typename T::SmemLayoutB>;
  auto s = mm::make_tensor(offset.data(), L{})(mm::_, mm::_, 1);  // (MN,BK) of stage 1
  const auto copy = T::template k_major_copy<MN>();
  for (int w = 0; w < T::kThreads / 32; ++w) {
    const int values = int(mm::size(copy.get_slice(0).partition_D(s)));
    for (int v = 0; v < values; ++v) {
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) banks.insert(copy.get_slice(32 * w + lane).partition_D(s)(v) % 32);
      EXPECT_EQ(banks.size(), 32u) << "warp " << w << " value " << v;
    }
  }
}

TEST(ch07_SharedMemory, KMajorCopyIsConflictFree) {
  expect_k_major_copy_conflict_free<ch07::PipelinedS3Cfg, 128>();
  expect_k_major_copy_conflict_free<ch07::SwizzledCfg, 128>();
  expect_k_major_copy_conflict_free<ch07::BigTileCfg, 128>();
  expect_k_major_copy_conflict_free<ch07::BigTileCfg, 256>();
}

// register_transpose's copy of a row-major A: each thread owns a 4×2 block of the (BM,BK) tile, every
// element once; its 16-byte stores (the 4 rows of one k) cost one wavefront per quarter-warp, i.e. 8
// lanes on 8 different bank groups of the padded tile (tests/lds_wavefronts.hpp's rule, which holds for
// STS.128 as for LDS.128), and its 8-byte global loads read whole 32-byte sectors.
TEST(ch07_SharedMemory, RegisterTransposeStoresAreConflictFree) {
  using Cfg = ch07::RegisterTransposeCfg;
  using T = Traits<Cfg>;
  constexpr int bm = Cfg::BM::value, bk = Cfg::BK::value;
  std::vector<int> offset(std::size_t(mm::cosize_v<typename T::SmemLayoutA>));
  for (std::size_t i = 0; i < offset.size(); ++i) offset[i] = int(i);
  auto s = mm::make_tensor(offset.data(), typename T::SmemLayoutA{})(mm::_, mm::_, 1);  // (BM,BK) of stage 1
  auto crd = mm::make_identity_tensor(mm::make_shape(mm::Int<bm>{}, mm::Int<bk>{}));  // (BM,BK) -> (m,k)
  const auto copy = ch07::detail::k_major_register_copy<Cfg, bm>();
  std::vector<int> hits(std::size_t(bm * bk), 0);
  for (int t = 0; t < T::kThreads; ++t) {
    auto c = copy.get_slice(t).partition_D(crd);
    ASSERT_EQ(int(mm::size(c)), 8) << "a 4×2 block per thread";
    for (int i = 0; i < 8; ++i) ++hits[std::size_t(int(mm::get<0>(c(i))) + bm * int(mm::get<1>(c(i))))];
    for (int i = 1; i < 4; ++i)  // values m + 4k: 4 consecutive rows of one k, then the next k
      EXPECT_EQ(mm::get<0>(c(i)), mm::get<0>(c(0)) + i) << "thread " << t;
    EXPECT_EQ(mm::get<1>(c(4)), mm::get<1>(c(0)) + 1) << "thread " << t;
    EXPECT_EQ(int(mm::get<1>(c(0))) % 2, 0) << "thread " << t << ": its k pair starts at an even k (8-byte loads)";
  }
  for (int h : hits) EXPECT_EQ(h, 1);
  for (int w = 0; w < T::kThreads / 32; ++w)
    for (int j = 0; j < 2; ++j) {  // the store of k = 2·pair + j
      std::vector<int> starts(32);
      std::set<int> sectors;  // the global loads of row offset i = 0: 32-byte sectors of a row-major A
      for (int lane = 0; lane < 32; ++lane) {
        auto d = copy.get_slice(32 * w + lane).partition_D(s);
        starts[std::size_t(lane)] = d(4 * j);
        auto c = copy.get_slice(32 * w + lane).partition_D(crd)(0);
        sectors.insert((int(mm::get<0>(c)) * bk + int(mm::get<1>(c))) / 8);
      }
      EXPECT_EQ(mm::test::lds128_wavefronts(starts), 4) << "warp " << w << " k " << j;  // 4 = no conflict
      EXPECT_EQ(sectors.size(), 8u) << "warp " << w << ": 32 lanes × 8 bytes in 8 whole sectors";
    }
}

template <class Cfg>
void expect_every_element_of_c_owned_once() {
  typename Traits<Cfg>::TiledMma mma;
  constexpr int bm = Cfg::BM::value, bn = Cfg::BN::value;
  auto tile = mm::make_identity_tensor(mm::make_shape(mm::Int<bm>{}, mm::Int<bn>{}));  // (BM,BN) -> (m,n)
  std::vector<int> hits(std::size_t(bm * bn), 0);
  for (int t = 0; t < Traits<Cfg>::kThreads; ++t) {
    auto part = mma.get_slice(t).partition_C(tile);  // (MMA,MMA_M,MMA_N) -> (m,n)
    for (int i = 0; i < int(mm::size(part)); ++i) {
      auto c = part(i);
      ++hits[std::size_t(int(mm::get<0>(c)) + bm * int(mm::get<1>(c)))];
    }
  }
  int missed = 0, twice = 0;
  for (int h : hits) missed += h == 0, twice += h > 1;
  EXPECT_EQ(missed, 0);
  EXPECT_EQ(twice, 0);
}

TEST(ch07_TiledMma, EveryElementOfCIsOwnedOnce) {
  expect_every_element_of_c_owned_once<ch07::PipelinedS2Cfg>();
  expect_every_element_of_c_owned_once<ch07::WarpTiledCfg>();
  expect_every_element_of_c_owned_once<ch07::BigTileCfg>();
}

// A warp of warp_tiled owns a 64×32 block of C (two runs of 32 rows, two of 16 columns).
TEST(ch07_TiledMma, AWarpOwnsA64x32BlockOfC) {
  Traits<ch07::WarpTiledCfg>::TiledMma mma;
  auto tile = mm::make_identity_tensor(mm::make_shape(mm::_128{}, mm::_128{}));
  for (int w = 0; w < 8; ++w) {
    std::set<int> rows, cols;
    for (int lane = 0; lane < 32; ++lane) {
      auto part = mma.get_slice(32 * w + lane).partition_C(tile);
      for (int i = 0; i < int(mm::size(part)); ++i) {
        rows.insert(int(mm::get<0>(part(i))));
        cols.insert(int(mm::get<1>(part(i))));
      }
    }
    EXPECT_EQ(rows.size(), 64u) << "warp " << w;
    EXPECT_EQ(cols.size(), 32u) << "warp " << w;
  }
}

// ---- CPU: grid, rejects, shared memory ----

TEST(ch07_Launch, GridAndRejects) {
  EXPECT_EQ(ch07::gemm_grid<ch07::BigTileCfg>(GemmProblem{300, 3000, 7}).x, 3u);   // ceil(300 / 128)
  EXPECT_EQ(ch07::gemm_grid<ch07::BigTileCfg>(GemmProblem{300, 3000, 7}).y, 12u);  // ceil(3000 / 256)
  EXPECT_EQ(ch07::pipelined_rejects<ch07::BigTileCfg>(GemmProblem{1, 1, 1}), "");
  EXPECT_NE(ch07::pipelined_rejects<ch07::BigTileCfg>(GemmProblem{1, 65535 * 256 + 1, 1}), "");
  // The 32-bit rule (gemm/launch.hpp): C of 2^20 × 2^12 rounds to 2^32 offsets; 2^18 × 2^12 fits.
  EXPECT_NE(ch07::pipelined_rejects<ch07::BigTileCfg>(GemmProblem{1 << 20, 1 << 12, 8}), "");
  EXPECT_EQ(ch07::pipelined_rejects<ch07::BigTileCfg>(GemmProblem{1 << 18, 1 << 12, 8}), "");
  EXPECT_THROW(step_named(kSteps, "big_tile").launch(GemmProblem{1, 65535 * 256 + 1, 1}, nullptr, nullptr, nullptr,
                                                     nullptr),
               std::invalid_argument);
}

// The shared memory of each configuration (a ring of S stages ends at the last k-row's MN-th float)
// is checked by static_asserts next to the configurations, in pipelined.cuh and fragment_pipelined.cuh.

}  // namespace
