// Chapter 10: every kernel against the fp64 reference in RRR and RCR (GPU, sm_90a) at degenerate,
// ragged, tile-edge, cluster-edge, large, tall and wide sizes, and at sizes where each persistent
// block (or cluster) loops over several tiles; the sizes TMA cannot describe rejected with the rule.
// Every test name starts with "ch10", so `ctest -R ch10` selects it.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "10_hopper_persistent/persistent.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"

namespace {

namespace ch10 = mm::ch10;
using bf16 = __nv_bfloat16;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;

struct Kernel {
  const char* name;                                                                  ///< "persistent"
  void (*launch)(const GemmProblem&, const bf16*, const bf16*, bf16*, cudaStream_t);  ///< prepare + run
  std::string (*rejects)(const GemmProblem&);                                         ///< the size rule
};
void PrintTo(const Kernel& k, std::ostream* os) { *os << k.name; }

#define MM_CH10_TEST_KERNEL(name, Cfg) {name, ch10::launch_persistent<ch10::Cfg>, ch10::persistent_rejects<ch10::Cfg>}
const Kernel kKernels[] = {
    MM_CH10_TEST_KERNEL("warp_specialized", WarpSpecializedCfg),
    MM_CH10_TEST_KERNEL("persistent", PersistentCfg),
    MM_CH10_TEST_KERNEL("tma_store", TmaStoreCfg),
    MM_CH10_TEST_KERNEL("cluster_multicast", ClusterCfg),
};
#undef MM_CH10_TEST_KERNEL

// Sizes every kernel takes in both storage orders (K and N multiples of 8): the smallest (1×8×8),
// smaller than a tile, one short of / exactly / one past the 128×256 tile and the K step of 64 (by 8:
// the pitch rule), 128×128×64 and 128×128×72 (one tile, one K step and one past it), a K shorter than
// one step; M = 129 and 300 leave the second block of a cluster partly or wholly outside C; 4096×2048
// and 2048×4096 have 256 tiles, so a persistent block (132 on an H200) or cluster (66) runs two or
// more; tall and skinny, wide and short, one row, 1024³.
const std::vector<Size> kSizes = {
    {1, 8, 8},        {17, 40, 16},     {127, 248, 64},   {128, 256, 64},   {129, 264, 72},
    {128, 128, 64},   {128, 128, 72},   {65, 264, 200},   {300, 512, 8},    {256, 512, 256},
    {4096, 2048, 64}, {2048, 4096, 72}, {1024, 1024, 1024}, {3000, 8, 136}, {8, 2000, 320},
    {1, 304, 264},
};
// Sizes only RCR takes (N not a multiple of 8: B's rows are K long there; C's rows are not 16-byte
// aligned, so the TMA-store step falls back to its register epilogue): odd N, one past the tiles.
const std::vector<Size> kRcrOnlySizes = {{127, 129, 64}, {129, 257, 72}, {5, 1, 8}, {1000, 1001, 96}};
const char* const kLayouts[] = {"RRR", "RCR"};

void expect_matches_fp64(const Kernel& kernel, const GemmProblem& p, std::uint64_t seed = 1) {
  ASSERT_EQ(kernel.rejects(p), "") << kernel.name << " " << p.layout_tag() << " " << mm::test::size_name(p);
  const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, kernel.launch, mm::DType::bf16, seed);
  EXPECT_TRUE(r.ok) << kernel.name << " " << p.layout_tag() << " at " << mm::test::size_name(p) << ": " << r.summary;
}

// ---- GPU: every kernel, both storage orders, every size ----

using Param = std::tuple<Kernel, const char*, Size>;
class Persistent : public ::testing::TestWithParam<Param> {};
TEST_P(Persistent, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // wgmma, setmaxnreg, TMA, clusters
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch10, Persistent,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);
INSTANTIATE_TEST_SUITE_P(ch10_rcr, Persistent,
                         ::testing::Combine(::testing::ValuesIn(kKernels), ::testing::Values("RCR"),
                                            ::testing::ValuesIn(kRcrOnlySizes)),
                         mm::test::param_name);

TEST(ch10_Gemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const char* tag : kLayouts)
    for (const auto& k : kKernels) expect_matches_fp64(k, problem({1000, 1096, 520}, tag), 7);
}

TEST(ch10_Gemm, RepeatedLaunchesAgree) {
  // The same prepared launch run again and again must give the same C: a race between the producer
  // and the consumers, or between the blocks of a cluster, shows up as results that move.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GemmProblem p = problem({2048, 4096, 512}, "RCR");
  mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n), c(p.m * p.n);
  mm::fill_random(a, 3);
  mm::fill_random(b, 4);
  for (const auto& k : kKernels) {
    k.launch(p, a.data(), b.data(), c.data(), nullptr);
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<bf16> first = c.download();
    for (int i = 0; i < 10; ++i) k.launch(p, a.data(), b.data(), c.data(), nullptr);
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<bf16> last = c.download();
    ASSERT_EQ(first.size(), last.size());
    EXPECT_EQ(0, std::memcmp(first.data(), last.data(), first.size() * sizeof(bf16))) << k.name;
  }
}

// ---- The sizes TMA cannot describe: rejected up front, with the rule ----

TEST(ch10_Launch, RejectsWhatTmaCannotDescribe) {
  for (const auto& k : kKernels) {
    EXPECT_NE(k.rejects(problem({1, 1, 1}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 33, 9}, "RRR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({127, 129, 64}, "RRR")).find("N % 8 == 0 in RRR"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({127, 129, 64}, "RCR")), "") << k.name;
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "CRR")).find("row-major A"), std::string::npos) << k.name;
  }
}

TEST(ch10_Launch, PrepareThrowsTheRuleInsteadOfLaunching) {
  // No GPU needed: the size rules are checked before anything touches the device.
  try {
    ch10::prepare_persistent<ch10::TmaStoreCfg>(problem({17, 33, 9}, "RRR"), nullptr, nullptr, nullptr);
    ADD_FAILURE() << "17x33x9 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K % 8 == 0"), std::string::npos) << e.what();
  }
}

// ---- The configurations fit the hardware (no GPU needed) ----

TEST(ch10_Config, SharedMemoryAndRegistersFit) {
  // 227 KB of shared memory per block on sm_90 (sharedMemPerBlockOptin), 64 K registers per SM.
  constexpr int kOptin = 227 * 1024;
  EXPECT_LE(ch10::WarpSpecializedCfg::kSmemBytes, kOptin);
  EXPECT_LE(ch10::TmaStoreCfg::kSmemBytes, kOptin);
  EXPECT_LE(ch10::ClusterCfg::kSmemBytes, kOptin);
  EXPECT_EQ(ch10::TmaStoreCfg::kThreads, 384);
  EXPECT_LE(ch10::TmaStoreCfg::kProducerRegs * 128 + 2 * ch10::TmaStoreCfg::kConsumerRegs * 128, 65536);
}

}  // namespace
