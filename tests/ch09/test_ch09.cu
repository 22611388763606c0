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

#include "09_hopper_wgmma_tma/wgmma_tma.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"

namespace {

namespace ch09 = mm::ch09;
using bf16 = __nv_bfloat16;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;

struct Kernel {
  const char* name;                                                                  ///< "tma"
  void (*launch)(const GemmProblem&, const bf16*, const bf16*, bf16*, cudaStream_t);  ///< prepare + run
  std::string (*rejects)(const GemmProblem&);                                         ///< the size rule
};
void PrintTo(const Kernel& k, std::ostream* os) { *os << k.name; }

#define MM_CH09_TEST_KERNEL(name, Cfg) {name, ch09::launch_wgmma<ch09::Cfg>, ch09::wgmma_rejects<ch09::Cfg>}
const Kernel kKernels[] = {
    MM_CH09_TEST_KERNEL("wgmma_cp_async", WgmmaCpAsyncCfg), MM_CH09_TEST_KERNEL("tma", TmaCfg),
    MM_CH09_TEST_KERNEL("two_consumers", TwoConsumersCfg),  MM_CH09_TEST_KERNEL("big_tile", BigTileCfg),
    MM_CH09_TEST_KERNEL("wgmma_in_flight", InFlightCfg),
};
#undef MM_CH09_TEST_KERNEL

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

void expect_matches_fp64(const Kernel& kernel, const GemmProblem& p, std::uint64_t seed = 1) {
  ASSERT_EQ(kernel.rejects(p), "") << kernel.name << " " << p.layout_tag() << " " << mm::test::size_name(p);
  const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, kernel.launch, mm::DType::bf16, seed);
  EXPECT_TRUE(r.ok) << kernel.name << " " << p.layout_tag() << " at " << mm::test::size_name(p) << ": " << r.summary;
}

// ---- GPU: every kernel, both storage orders, every size ----

using Param = std::tuple<Kernel, const char*, Size>;
class Wgmma : public ::testing::TestWithParam<Param> {};
TEST_P(Wgmma, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // wgmma, TMA
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch09, Wgmma,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);
INSTANTIATE_TEST_SUITE_P(ch09_rcr, Wgmma,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::Values("RCR"),
                                            ::testing::ValuesIn(kRcrOnlySizes)),
                         mm::test::param_name);

TEST(ch09_Gemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const char* tag : kLayouts)
    for (const auto& k : kKernels) expect_matches_fp64(k, problem({1000, 1096, 520}, tag), 7);
}

// ---- The sizes TMA cannot describe: rejected up front, with the rule ----

TEST(ch09_Launch, RejectsWhatTmaCannotDescribe) {
  for (const auto& k : kKernels) {
    EXPECT_NE(k.rejects(problem({1, 1, 1}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 33, 9}, "RRR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({127, 129, 64}, "RRR")).find("N % 8 == 0 in RRR"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({127, 129, 64}, "RCR")), "") << k.name;
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "CRR")).find("row-major A"), std::string::npos) << k.name;
  }
}

TEST(ch09_Launch, PrepareThrowsTheRuleInsteadOfLaunching) {
  // No GPU needed: the size rules are checked before anything touches the device.
  try {
    ch09::prepare_wgmma<ch09::TmaCfg>(problem({17, 33, 9}, "RRR"), nullptr, nullptr, nullptr);
    ADD_FAILURE() << "17x33x9 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K % 8 == 0"), std::string::npos) << e.what();
  }
}

TEST(ch09_Launch, MisalignedPointerIsAClearError) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GemmProblem p = problem({128, 128, 64}, "RCR");
  mm::DeviceBuffer<bf16> a(p.m * p.k + 1), b(p.k * p.n), c(p.m * p.n);
  try {
    ch09::prepare_wgmma<ch09::TmaCfg>(p, a.data() + 1, b.data(), c.data());
    ADD_FAILURE() << "a pointer 2 bytes past a 16-byte boundary was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << e.what();
  }
}

// ---- The watchdog: a deadlock is a failure, not a hang ----

// One thread waits on a barrier that expects one arrival which never comes.
__global__ void wait_forever_kernel() {
  if constexpr (mm::arch::compiled_for(mm::arch::sm90a)) {
    __shared__ std::uint64_t bar;
    mm::mbarrier_init(&bar, 1);
    mm::fence_mbarrier_init();
    mm::mbarrier_wait(&bar, 0);
  }
}

// Launches it and exits 3 when the launch ends in an error (the trap), 0 if it ever returns cleanly.
[[noreturn]] void run_wait_forever() {
  wait_forever_kernel<<<1, 1>>>();
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

}  // namespace
