// Chapter 09: every wgmma kernel against the fp64 reference in RRR and RCR (GPU, sm_90a) at degenerate,
// ragged, tile-edge, large, tall and wide sizes; the sizes TMA cannot describe rejected with the rule;
// and the mbarrier watchdog: a wait that can never complete fails the launch instead of hanging. Every
// test name starts with "ch09", so `ctest -R ch09` selects it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "09_hopper_wgmma_tma/steps.hpp"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "layout/arch.hpp"
#include "gemm/watchdog.hpp"
#include "watchdog_kernels.hpp"

namespace {

namespace ch09 = mm::ch09;
using bf16 = __nv_bfloat16;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;

// The chapter's steps (steps.cu), as the binary runs them.
const std::vector<mm::GemmKernel<bf16, bf16>> kSteps = ch09::steps();

// Sizes every kernel takes in both storage orders (K and N multiples of 8): the smallest (1×8×8),
// smaller than a tile everywhere, one short of and exactly one 128×128×64 tile, one past the 64- and
// 128-row tiles and the 128- and 256-column tiles and the K step of 64 (by 8: the pitch rule), a K
// shorter than one K step, several tiles, many blocks, tall and skinny, wide and short, one row.
const std::vector<Size> kSizes = {
    {1, 8, 8},       {17, 40, 16},     {127, 120, 64},     {128, 128, 64},  {129, 136, 72},
    {65, 264, 200},  {257, 512, 8},    {256, 256, 256},    {1024, 1024, 1024}, {3000, 8, 136},
    {8, 2000, 320},  {1, 304, 264},
};
// Sizes only RCR takes (N not a multiple of 8: B's rows are K long there): odd N, one past the tiles.
const std::vector<Size> kRcrOnlySizes = {{127, 129, 64}, {129, 257, 72}, {5, 1, 8}};
const char* const kLayouts[] = {"RRR", "RCR"};

using mm::test::expect_matches_fp64;

// ---- GPU: every kernel, both storage orders, every size ----

using Param = std::tuple<mm::GemmKernel<bf16, bf16>, const char*, Size>;
class Wgmma : public ::testing::TestWithParam<Param> {};
TEST_P(Wgmma, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // wgmma, TMA
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch09, Wgmma,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);
INSTANTIATE_TEST_SUITE_P(ch09_rcr, Wgmma,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::Values("RCR"),
                                            ::testing::ValuesIn(kRcrOnlySizes)),
                         mm::test::param_name);

TEST(ch09_Gemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const char* tag : kLayouts)
    for (const auto& k : kSteps) expect_matches_fp64(k, problem({1000, 1096, 520}, tag), 7);
}

// ---- The sizes TMA cannot describe: rejected up front, with the rule ----

TEST(ch09_Launch, RejectsWhatTmaCannotDescribe) {
  for (const auto& k : kSteps) {
    EXPECT_NE(k.rejects(problem({1, 1, 1}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 33, 9}, "RRR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({127, 129, 64}, "RRR")).find("N % 8 == 0 in RRR"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({127, 129, 64}, "RCR")), "") << k.name;
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "CRR")).find("row-major A"), std::string::npos) << k.name;
  }
}

TEST(ch09_Launch, EveryStepThrowsTheRuleInsteadOfLaunching) {
  // No GPU needed: the size rules are checked before anything touches the device.
  for (const auto& k : kSteps) {
    try {
      k.launch(problem({17, 33, 9}, "RRR"), nullptr, nullptr, nullptr, nullptr);
      ADD_FAILURE() << k.name << ": 17x33x9 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("K % 8 == 0"), std::string::npos) << k.name << ": " << e.what();
    }
  }
}

// A or B 2 bytes past a 16-byte boundary: cp.async (16-byte chunks) and TMA (a 16-byte aligned base)
// cannot read it. Every step must refuse with a message naming the rule, before any launch (a
// misaligned 16-byte cp.async would fault). The pointers are never dereferenced.
TEST(ch09_Launch, EveryStepRefusesAMisalignedA) {
  const GemmProblem p = problem({128, 128, 64}, "RCR");
  const auto* a = reinterpret_cast<const bf16*>(std::uintptr_t(0x10000) + 2);
  const auto* b = reinterpret_cast<const bf16*>(std::uintptr_t(0x20000));
  auto* c = reinterpret_cast<bf16*>(std::uintptr_t(0x30000));
  for (const auto& k : kSteps) {
    try {
      k.launch(p, a, b, c, nullptr);
      ADD_FAILURE() << k.name << ": a pointer 2 bytes past a 16-byte boundary was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << k.name << ": " << e.what();
    }
  }
}

TEST(ch09_Launch, EveryStepRefusesAMisalignedB) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // A's tensor map is built first, through the driver
  for (const char* tag : kLayouts) {
    const GemmProblem p = problem({128, 128, 64}, tag);
    mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n + 8), c(p.m * p.n);
    for (const auto& k : kSteps) {
      try {
        k.launch(p, a.data(), b.data() + 1, c.data(), nullptr);
        ADD_FAILURE() << k.name << " " << tag << ": a B 2 bytes past a 16-byte boundary was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << k.name << ": " << e.what();
      }
    }
  }
}

// ---- The watchdog: a deadlock is a failure, not a hang ----

// Launches it and exits 3 when the launch ends in an error (the trap), 0 if it ever returns cleanly.
[[noreturn]] void run_wait_forever() {
  mm::test::launch_wait_forever();  // watchdog_kernels.cu: one thread waits for an arrival that never comes
  const cudaError_t e = cudaDeviceSynchronize();
  std::fprintf(stderr, "launch ended: %s\n", cudaGetErrorString(e));
  std::exit(e == cudaSuccess ? 0 : 3);
}

TEST(ch09_Watchdog, ADeadlockedWaitTrapsInsteadOfHanging) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  // The trap leaves this process's CUDA context unusable: run it in a fresh process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_wait_forever(), ::testing::ExitedWithCode(3), "launch ended");
}

// Launches it and prints what the host reads after the trap: the watchdog's line.
[[noreturn]] void run_consumer_waits_forever() {
  mm::Watchdog config = mm::host_watchdog();
  config.bound_ns = 1'000'000'000ull;
  mm::test::launch_consumer_waits_forever(config);  // a consumer's wait, given up after 1 s
  const cudaError_t e = cudaDeviceSynchronize();
  std::fprintf(stderr, "launch ended: %s; %s\n", cudaGetErrorString(e), mm::watchdog_report().c_str());
  std::exit(e == cudaSuccess ? 0 : 3);
}

TEST(ch09_Watchdog, TheHostNamesTheWaitThatGaveUpAfterTheTrap) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_consumer_waits_forever(), ::testing::ExitedWithCode(3),
              "block 0, thread 0 .a consumer waiting for stage 5 to land, parity 0");
}

}  // namespace
