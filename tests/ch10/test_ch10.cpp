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

#include "10_hopper_persistent/steps.hpp"
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

// The chapter's steps (steps.cu), as the binary runs them.
const std::vector<mm::GemmKernel<bf16, bf16>> kSteps = ch10::steps();

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
// Sizes only RCR takes (N not a multiple of 8: B's rows are K long there): odd N, one past the tiles.
// C's rows are then not 16-byte aligned, which the TMA-store steps refuse with the rule.
const std::vector<Size> kRcrOnlySizes = {{127, 129, 64}, {129, 257, 72}, {5, 1, 8}, {1000, 1001, 96}};
const char* const kLayouts[] = {"RRR", "RCR"};

using mm::test::expect_matches_fp64;

// ---- GPU: every kernel, both storage orders, every size ----

using Param = std::tuple<mm::GemmKernel<bf16, bf16>, const char*, Size>;
class Persistent : public ::testing::TestWithParam<Param> {};
TEST_P(Persistent, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // wgmma, setmaxnreg, TMA, clusters
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch10, Persistent,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);
class PersistentOddN : public ::testing::TestWithParam<Param> {};
TEST_P(PersistentOddN, MatchesFp64ReferenceOrRefusesTheTmaStore) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [kernel, tag, size] = GetParam();
  const GemmProblem p = problem(size, tag);
  if (const std::string why = kernel.rejects(p); !why.empty()) {
    // Only a step that stores C with TMA may refuse, and only with that rule.
    EXPECT_NE(why.find("N % 8 == 0: TMA stores rows"), std::string::npos) << kernel.name << ": " << why;
    return;
  }
  expect_matches_fp64(kernel, p);
}
INSTANTIATE_TEST_SUITE_P(ch10_rcr, PersistentOddN,
                         ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::Values("RCR"),
                                            ::testing::ValuesIn(kRcrOnlySizes)),
                         mm::test::param_name);

TEST(ch10_Gemm, FewBlocksLoopOverManyTilesAtDeepK) {
  // 3 blocks (1 cluster of 2) over 8 × 8 = 64 tiles of 128×256, K = 4096 (64 K steps, 16 rounds of the
  // 4-stage ring per tile): each block loops over ~20 tiles and the ring's states carry across tiles,
  // whatever the GPU's size.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const char* tag : kLayouts)
    for (const auto& k : ch10::persistent_steps_on_grid(3)) expect_matches_fp64(k, problem({1024, 2048, 4096}, tag), 5);
}

TEST(ch10_Gemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const char* tag : kLayouts)
    for (const auto& k : kSteps) expect_matches_fp64(k, problem({1000, 1096, 520}, tag), 7);
}

TEST(ch10_Gemm, RepeatedLaunchesAgree) {
  // The same prepared launch run again and again must give the same C: a race between the producer
  // and the consumers, or between the blocks of a cluster, shows up as results that move.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GemmProblem p = problem({2048, 4096, 512}, "RCR");
  mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n), c(p.m * p.n);
  mm::fill_random(a, 3);
  mm::fill_random(b, 4);
  for (const auto& k : kSteps) {
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
  for (const auto& k : kSteps) {
    EXPECT_NE(k.rejects(problem({1, 1, 1}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 33, 9}, "RRR")).find("K % 8 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({127, 129, 64}, "RRR")).find("N % 8 == 0 in RRR"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({127, 136, 64}, "RCR")), "") << k.name;
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "CRR")).find("row-major A"), std::string::npos) << k.name;
  }
}

TEST(ch10_Launch, EveryStepThrowsTheRuleInsteadOfLaunching) {
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

TEST(ch10_Launch, TheTmaStoreStepsNameTheirRuleForAnOddN) {
  // They used to fall back to the register epilogue under their own name; now they refuse.
  for (const auto& k : kSteps) {
    const std::string why = k.rejects(problem({127, 129, 64}, "RCR"));
    if (k.name == "tma_store" || k.name == "cluster_multicast")
      EXPECT_NE(why.find("N % 8 == 0: TMA stores rows"), std::string::npos) << k.name << ": " << why;
    else
      EXPECT_EQ(why, "") << k.name;
  }
}

// A, B or C 2 bytes past a 16-byte boundary: TMA cannot describe it (a 16-byte aligned base). Every
// step must refuse with the rule before any launch. A is checked first, with no GPU: the pointers
// are never dereferenced.
TEST(ch10_Launch, EveryStepRefusesAMisalignedA) {
  const GemmProblem p = problem({128, 256, 64}, "RCR");
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

TEST(ch10_Launch, EveryStepRefusesAMisalignedBAndTheTmaStoreStepsAMisalignedC) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);  // A's tensor map is built first, through the driver
  for (const char* tag : kLayouts) {
    const GemmProblem p = problem({128, 256, 64}, tag);
    mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n + 8), c(p.m * p.n + 8);
    for (const auto& k : kSteps) {
      for (int which = 0; which < 2; ++which) {
        const bool tma_store = k.name == "tma_store" || k.name == "cluster_multicast";
        if (which == 1 && !tma_store) continue;  // the register epilogue takes any C
        try {
          if (which == 0) k.launch(p, a.data(), b.data() + 1, c.data(), nullptr);
          else k.launch(p, a.data(), b.data(), c.data() + 1, nullptr);
          ADD_FAILURE() << k.name << " " << tag << ": a " << (which == 0 ? "B" : "C") << " 2 bytes past a 16-byte boundary was accepted";
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << k.name << ": " << e.what();
        }
      }
    }
  }
}

}  // namespace
