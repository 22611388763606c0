// Chapter 12: every step against the fp64 reference (GPU, sm_90a) at degenerate, skinny, ragged and
// tile-edge sizes; fp8 with scales of 1, powers of two and awkward values, and with inputs at e4m3's
// extremes (the largest finite value, subnormals); few blocks looping over many tiles; the problems
// the chapter does not take, refused with the rule (CPU). Every test name starts with "ch12".
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "12_hopper_datatypes/fp8_block_scaled.cuh"  // CollectiveMmaBlockScaledTmaBase::tma_scales_rejects
#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"  // choose_fp8_small_m
#include "12_hopper_datatypes/fp8_per_tensor_small_m.cuh"   // choose_fp8_per_tensor_small_m
#include "12_hopper_datatypes/steps.hpp"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"

namespace {

namespace ch12 = mm::ch12;
using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;

const std::vector<mm::GemmKernel<float, float>> kTf32 = ch12::tf32_steps();
// Every fp8 step: per-tensor and block-scaled (the check gives each the scales of its dtype).
std::vector<mm::GemmKernel<e4m3, bf16>> all_fp8(int max_blocks = 0) {
  auto steps = ch12::fp8_steps(max_blocks);
  for (auto& k : ch12::fp8_block_steps(max_blocks)) steps.push_back(k);
  return steps;
}
const std::vector<mm::GemmKernel<e4m3, bf16>> kFp8 = all_fp8();

// RCR sizes both types take (K a multiple of 16, N of 8): one row, fewer rows than a consumer's 64,
// one short of and one past the 128×256 tile, K of one fp8 step and shorter than one (16), K not a
// multiple of the K step (a short last step: 1040 = 8 × 128 + 16), many tiles, tall and wide.
const std::vector<Size> kSizes = {
    {1, 8, 16},     {1, 304, 272},     {17, 40, 16},     {63, 264, 208},   {65, 256, 128},    {127, 248, 64},
    {129, 264, 80}, {300, 512, 16},    {128, 8192, 1040}, {1000, 1000, 1008}, {2048, 4096, 80}, {3000, 8, 144},
    {8, 2000, 4096}, {256, 264, 16400},
};

using mm::test::expect_matches_fp64;

template <class K>
using Param = std::tuple<K, Size>;

// The storage order a tf32 step takes: RCR (tf32_wgmma), or RRR (tf32_transpose_b transposes B).
std::string tf32_layout(const mm::GemmKernel<float, float>& k) {
  return k.rejects(problem({64, 64, 64}, "RCR")).empty() ? "RCR" : "RRR";
}

class Tf32 : public ::testing::TestWithParam<Param<mm::GemmKernel<float, float>>> {};
TEST_P(Tf32, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [kernel, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tf32_layout(kernel)));
}
INSTANTIATE_TEST_SUITE_P(ch12, Tf32, ::testing::Combine(::testing::ValuesIn(kTf32), ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

class Fp8 : public ::testing::TestWithParam<Param<mm::GemmKernel<e4m3, bf16>>> {};
TEST_P(Fp8, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [kernel, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, "RCR"));
}
INSTANTIATE_TEST_SUITE_P(ch12, Fp8, ::testing::Combine(::testing::ValuesIn(kFp8), ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

TEST(ch12_Gemm, FewBlocksLoopOverManyTiles) {
  // 3 blocks for 8 × 8 = 64 tiles of 128×256: the ring's states and the C buffers carry across tiles.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GemmProblem p = problem({1024, 2048, 528}, "RCR");
  for (const auto& k : ch12::tf32_steps(3)) expect_matches_fp64(k, problem({1024, 2048, 528}, tf32_layout(k)));
  for (const auto& k : all_fp8(3)) expect_matches_fp64(k, p);
}

TEST(ch12_Fp8, ScalesOfOnePowersOfTwoAndAwkwardValues) {
  // The scales multiply the result once, in the epilogue; the reference multiplies the fp64 product of
  // the codes by the same two numbers. A scale read from the wrong place, or applied twice, fails.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GemmProblem p = problem({200, 264, 272}, "RCR");
  const mm::OperandScales scales[] = {{1.0f, 1.0f}, {0.25f, 8.0f}, {1.0f / 1024, 1.0f / 4096}, {0.3f, 1.7f},
                                      {1.0f / 448, 3.14159f}, {1.0f, 0.0f}};
  for (const auto& k : ch12::fp8_steps())
    for (const mm::OperandScales& s : scales) {
      const mm::CheckResult r = mm::check_gemm_kernel<e4m3, bf16>(p, k.launch, k.dtype, 7, s);
      EXPECT_TRUE(r.ok) << k.name << " scales " << s.a << ", " << s.b << ": " << r.summary;
    }
}

// Runs an fp8 step on given codes (A M×K, B N×K, row-major) with scales 1 (per tensor or every
// block) and returns C as floats.
std::vector<float> run_fp8(const mm::GemmKernel<e4m3, bf16>& k, const GemmProblem& problem_in, const std::vector<e4m3>& a,
                           const std::vector<e4m3>& b) {
  GemmProblem p = problem_in;
  mm::DeviceBuffer<e4m3> da(a.size()), db(b.size());
  mm::DeviceBuffer<bf16> dc(p.m * p.n);
  mm::DeviceScales scales;
  if (k.dtype == mm::DType::e4m3_block) {
    const std::int64_t kb = mm::scale_blocks_k(p.k), nb = (p.n + 127) / 128;
    scales.set(p, mm::BlockScales{std::vector<float>(std::size_t(p.m * kb), 1.0f),
                                  std::vector<float>(std::size_t(nb * mm::scale_blocks_k_padded(p.k)), 1.0f)});
  } else {
    scales.set(p, mm::OperandScales{1.0f, 1.0f});
  }
  MM_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), a.size(), cudaMemcpyHostToDevice));
  MM_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), b.size(), cudaMemcpyHostToDevice));
  mm::poison(dc);
  k.launch(p, da.data(), db.data(), dc.data(), nullptr);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<bf16> c = dc.download();
  std::vector<float> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) out[i] = __bfloat162float(c[i]);
  return out;
}

TEST(ch12_Fp8, InputsAtTheFormatsExtremes) {
  // Every A code ±448 (the largest finite e4m3) against B codes of ±448 in the first half of K and
  // subnormals (±2^-9, ±3·2^-9) in the second: products of 2e5 next to products of 1e-3, sums near
  // 448² · K. Exact in fp64; the kernel must land within the e4m3 tolerance of each element's sum|ab|.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const int M = 64, N = 256, K = 256;
  const GemmProblem p = problem({M, N, K}, "RCR");
  std::vector<e4m3> a(M * K), b(N * K);
  for (int i = 0; i < M * K; ++i) a[i] = e4m3(((i * 7) % 3 == 0) ? -448.0f : 448.0f);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      const float sign = ((n + 3 * k) % 5 < 2) ? -1.0f : 1.0f;
      b[n * K + k] = e4m3(k < K / 2 ? sign * 448.0f : sign * float((k % 2) ? 3 : 1) / 512.0f);
    }
  ASSERT_EQ(float(b[K - 1]) * 512.0f, float((K - 1) % 2 ? 3 : 1) * (((N - 1) * 0 + 3 * (K - 1)) % 5 < 2 ? -1 : 1))
      << "the subnormal codes are exact";
  for (const auto& k : kFp8) {
    const std::vector<float> c = run_fp8(k, p, a, b);
    int bad = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double ref = 0, mag = 0;
        for (int kk = 0; kk < K; ++kk) {
          const double prod = double(float(a[m * K + kk])) * double(float(b[n * K + kk]));
          ref += prod;
          mag += std::fabs(prod);
        }
        const double tol = mm::gemm_tolerance<bf16>(k.dtype) * mag;
        if (!(std::fabs(c[m * N + n] - ref) <= tol) && bad++ < 3)
          ADD_FAILURE() << k.name << " C(" << m << "," << n << ") = " << c[m * N + n] << ", want " << ref;
      }
    EXPECT_EQ(bad, 0) << k.name;
  }
}

TEST(ch12_Fp8, BlockScalesApplyToTheirOwnBlock) {
  // K of 3 blocks and a partial fourth, N of two column blocks and a partial third, M past a tile: the
  // random scales differ from block to block (0.5 to 2, over 448), so a scale read for the wrong
  // row, K block or column block is off by up to 4× and fails.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const auto& k : ch12::fp8_block_steps())
    for (const Size& s : {Size{130, 264, 400}, Size{1, 8, 16}, Size{257, 384, 1024}})
      for (std::uint64_t seed : {3u, 4u}) {
        const mm::CheckResult r = mm::check_gemm_kernel<e4m3, bf16>(problem(s, "RCR"), k.launch, k.dtype, seed);
        EXPECT_TRUE(r.ok) << k.name << " at " << mm::test::size_name(s) << " seed " << seed << ": " << r.summary;
      }
}

// fp8_block_scaled (issue 35's step 2) at the M that choose its two paths. M % 4 == 0: A's scales
// by TMA with the stage, the rows of the last tile past M read as zeros (M of 4, one past a tile + 3, past a multiple of 256); B's scales in registers
// 32 K blocks at a time, so K of 33 and 34 K blocks (a second chunk, a partial last K block) and 129.
// M % 4 != 0: A's scales by LDG (issue 35's step 1's loop; B's still from shared memory) (one row, 67, one past a tile, primes 131 and 1021). Random block
// scales from 0.5 to 2 (over 448): a row, K block or column block read for another fails; C poisoned
// first, so a tile never stored fails too.
TEST(ch12_Fp8, TmaScalesAtEveryKindOfM) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (int max_blocks : {0, 3}) {
    const auto steps = ch12::fp8_block_steps(max_blocks);
    const auto it = std::find_if(steps.begin(), steps.end(), [](const auto& k) { return k.name == "fp8_block_scaled"; });
    ASSERT_NE(it, steps.end());
    for (const Size& s : {Size{4, 8, 16}, Size{68, 136, 1040}, Size{132, 264, 400}, Size{1028, 264, 272},
                          Size{260, 520, 4112}, Size{512, 1024, 4240}, Size{132, 136, 16400},  // TMA
                          Size{1, 8, 16}, Size{67, 264, 256}, Size{129, 264, 400}, Size{131, 136, 4240},
                          Size{1021, 8, 144}})  // LDG
      for (std::uint64_t seed : {5u, 6u}) {
        if (max_blocks != 0 && s.m * s.n < 512 * 1024) continue;  // few blocks: only where there are many tiles
        const mm::CheckResult r = mm::check_gemm_kernel<e4m3, bf16>(problem(s, "RCR"), it->launch, it->dtype, seed);
        EXPECT_TRUE(r.ok) << it->name << " at " << mm::test::size_name(s) << " seed " << seed << " max_blocks "
                          << max_blocks << ": " << r.summary;
      }
  }
}

// fp8_block_scaled_small_m (issue 35's small-M path) with every plan forced: 64×256 tiles whole and
// with K in 2, 3 and 5 slices (the last slice short where K has a partial block), 64×128 tiles whole
// and in 3 slices, 128×128 tiles (two consumers taking turns) whole and in 3 slices (M % 4 != 0:
// the step runs 64×256 for both narrow tiles), whole 128×256 tiles, at
// ragged M on both of the main loop's scale paths (TMA for M % 4 == 0, LDG otherwise), rows past
// M in a 64-row tile and in a second row of 64-row tiles, N past a column block, one K block only
// (the slices clamp to 1), and few blocks looping over the units. Random block scales (0.5 to 2);
// C poisoned first.
TEST(ch12_Fp8, SmallMPlansAtRaggedSizes) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (auto [bm, bn, splits] : {std::tuple{64, 256, 1}, std::tuple{64, 256, 2}, std::tuple{64, 256, 3}, std::tuple{64, 256, 5},
                                std::tuple{64, 128, 1}, std::tuple{64, 128, 3}, std::tuple{128, 256, 1}, std::tuple{128, 128, 1},
                                std::tuple{128, 128, 3}})
    for (int max_blocks : {0, 3}) {
      const auto k = ch12::fp8_block_scaled_small_m_with(bm, bn, splits, max_blocks);
      for (const Size& s : {Size{4, 8, 16}, Size{1, 8, 16}, Size{64, 2112, 1664}, Size{68, 264, 2000},
                            Size{17, 520, 4240}, Size{130, 136, 4112}, Size{128, 384, 1040}})
        for (std::uint64_t seed : {7u, 8u}) {
          if (max_blocks != 0 && s.n < 500) continue;  // few blocks: only where there are many units
          const mm::CheckResult r = mm::check_gemm_kernel<e4m3, bf16>(problem(s, "RCR"), k.launch, k.dtype, seed);
          EXPECT_TRUE(r.ok) << k.name << " at " << mm::test::size_name(s) << " seed " << seed << " max_blocks "
                            << max_blocks << ": " << r.summary;
        }
    }
}

// fp8_per_tensor_small_m (step 5) with every plan forced: 64-row tiles 256, 128 and 64 wide, whole
// and split, and whole 128×256 tiles, at ragged M (every M takes every tile: no scale matrix), rows past M, N past a tile, one K
// step only, a short last K step, and few blocks looping over the units. Scales of 1 and awkward values
// come from check_gemm_kernel's per-tensor scales; C poisoned first.
TEST(ch12_Fp8, PerTensorSmallMPlansAtRaggedSizes) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (auto [bm, bn, splits] : {std::tuple{64, 256, 1}, std::tuple{64, 256, 3}, std::tuple{64, 128, 1}, std::tuple{64, 128, 2},
                                std::tuple{64, 64, 1}, std::tuple{64, 64, 3}, std::tuple{128, 256, 1}})
    for (int max_blocks : {0, 3}) {
      const auto k = ch12::fp8_per_tensor_small_m_with(bm, bn, splits, max_blocks);
      for (const Size& s : {Size{1, 8, 16}, Size{3, 8, 16}, Size{64, 2112, 1664}, Size{67, 264, 2000}, Size{17, 520, 4240},
                            Size{130, 136, 4112}, Size{128, 384, 1040}})
        for (std::uint64_t seed : {9u, 10u}) {
          if (max_blocks != 0 && s.n < 500) continue;  // few blocks: only where there are many units
          const mm::CheckResult r = mm::check_gemm_kernel<e4m3, bf16>(problem(s, "RCR"), k.launch, k.dtype, seed);
          EXPECT_TRUE(r.ok) << k.name << " at " << mm::test::size_name(s) << " seed " << seed << " max_blocks "
                            << max_blocks << ": " << r.summary;
        }
    }
}

// The choice of fp8_block_scaled_small_m (CPU): whole 128-row tiles where they fill half of 132 SMs
// and M > 64; whole 64×256 tiles where those do; otherwise 64×128 tiles with K split at slices of at
// least 24 K blocks and at most one unit per SM, or 128×128 tiles where M > 64 and they make as many
// units (64×256 and 12 K blocks where TMA cannot read A's scales).
TEST(ch12_Launch, SmallMChoosesTheTileAndTheSlices) {
  const auto plan = [](int m, int n, int k, bool narrow = true) {
    const auto c = ch12::choose_fp8_small_m(problem({m, n, k}, "RCR"), 132, narrow);
    return std::to_string(c.bm) + "x" + std::to_string(c.bn) + "/" + std::to_string(c.splits);
  };
  EXPECT_EQ(plan(64, 2112, 7168), "64x128/2");     // 17 narrow tiles, 56 K blocks: 2 slices of 28
  EXPECT_EQ(plan(64, 4096, 7168), "64x128/2");     // 32 narrow tiles
  EXPECT_EQ(plan(128, 4096, 7168), "64x128/2");    // 64 narrow tiles, 128 units (32 of 128×128 in 2 slices: 64)
  EXPECT_EQ(plan(128, 2112, 7168), "64x128/2");    // 34 narrow tiles (3 slices would be shorter than 24)
  EXPECT_EQ(plan(64, 7168, 16384), "64x128/2");    // 56 narrow tiles, 2 units per tile fill 112 SMs
  EXPECT_EQ(plan(128, 7168, 16384), "128x128/2");  // 112 narrow tiles, no split; 56 two-consumer tiles in 2 slices: as many units
  EXPECT_EQ(plan(96, 7168, 16384), "128x128/2");
  EXPECT_EQ(plan(64, 7168, 2048), "64x128/1");     // 16 K blocks: too few to split
  EXPECT_EQ(plan(128, 7168, 2048), "64x128/1");
  EXPECT_EQ(plan(64, 24576, 1536), "64x256/1");    // 96 wide tiles fill more than half the GPU
  EXPECT_EQ(plan(128, 24576, 1536), "128x256/1");  // so do 96 tiles of 128 rows: fp8_block_scaled
  EXPECT_EQ(plan(1, 8, 16), "64x128/1");
  EXPECT_EQ(plan(4096, 7168, 16384), "128x256/1");
  EXPECT_EQ(plan(4096, 4096, 4096), "128x256/1");
  EXPECT_EQ(plan(8, 256, 131072), "64x128/42");    // two narrow tiles, 1024 K blocks: slices of 24 (and 25)
  // Without the narrow tile (M % 4 != 0): 64×256 and 12 K blocks a slice.
  EXPECT_EQ(plan(63, 2112, 7168, false), "64x256/4");
  EXPECT_EQ(plan(67, 7168, 2048, false), "64x256/1");
}

// The choice of fp8_per_tensor_small_m (CPU): the narrowest 64-row tile whose tiles fit in one wave of
// 132 SMs, K split to fill them with slices of at least 16 K blocks; else 128×256 whole tiles.
TEST(ch12_Launch, PerTensorSmallMChoosesTheNarrowestTileThatFitsOneWave) {
  const auto plan = [](int m, int n, int k) {
    const auto c = ch12::choose_fp8_per_tensor_small_m(problem({m, n, k}, "RCR"), 132);
    return std::to_string(c.bm) + "x" + std::to_string(c.bn) + "/" + std::to_string(c.splits);
  };
  EXPECT_EQ(plan(64, 2112, 7168), "64x64/3");     // 33 tiles; 4 slices would be 14 K blocks each
  EXPECT_EQ(plan(64, 4096, 7168), "64x64/2");     // 64 tiles, 2 slices fill 128 SMs
  EXPECT_EQ(plan(64, 7168, 16384), "64x64/1");    // 112 tiles: one wave already
  EXPECT_EQ(plan(64, 7168, 2048), "64x64/1");
  EXPECT_EQ(plan(128, 2112, 7168), "64x64/2");    // 66 tiles
  EXPECT_EQ(plan(128, 4096, 7168), "64x64/1");    // 128 tiles
  EXPECT_EQ(plan(128, 7168, 16384), "64x128/1");  // 224 tiles of 64×64 are two waves; 112 of 64×128 one
  EXPECT_EQ(plan(128, 7168, 2048), "64x128/1");
  EXPECT_EQ(plan(64, 24576, 1536), "64x256/1");   // 96 tiles
  EXPECT_EQ(plan(64, 32768, 512), "64x256/1");    // 128 tiles
  EXPECT_EQ(plan(128, 24576, 1536), "128x256/1"); // 192 tiles of 64×256: fp8_per_tensor
  EXPECT_EQ(plan(4096, 4096, 4096), "128x256/1");
  EXPECT_EQ(plan(1, 8, 16), "64x64/1");           // one tile, one K block
  EXPECT_EQ(plan(8, 64, 131072), "64x64/64");     // one tile, 1024 K blocks: 64 slices of 16
}

// A plan the steps (block-scaled and per-tensor) do not build is refused with its rule, before anything
// asks the GPU (CPU).
TEST(ch12_Launch, SmallMRefusesPlansItDoesNotBuild) {
  GemmProblem p = problem({64, 256, 512}, "RCR");
  float scales[2] = {1, 1};
  p.scale_a = scales;
  p.scale_b = scales + 1;
  for (auto [bm, bn, splits] : {std::tuple{128, 256, 2}, std::tuple{32, 256, 1}, std::tuple{64, 0, 1}, std::tuple{256, 128, 1},
                                std::tuple{64, 128, 0}})
    for (const auto& k : {ch12::fp8_block_scaled_small_m_with(bm, bn, splits), ch12::fp8_per_tensor_small_m_with(bm, bn, splits)}) {
      try {
        k.launch(p, reinterpret_cast<const e4m3*>(0x10000), reinterpret_cast<const e4m3*>(0x20000),
                 reinterpret_cast<bf16*>(0x30000), nullptr);
        ADD_FAILURE() << k.name << " was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("plans are 64×256"), std::string::npos) << k.name << ": " << e.what();
      }
    }
}

TEST(ch12_Launch, TmaScalesTakeWhatTmaReadsAndLeaveTheRestToTheLdgPath) {
  // tma_scales_rejects: scale_a as an (M, Kb) matrix of floats, boxes of 128 × 1. M % 4 == 0 and a
  // 16-byte aligned scale_a take the TMA path; otherwise fp8_block_scaled runs the same loop with
  // A's scales by LDG (issue 35's step 1), so the rule is a choice, never a refusal.
  using Tma = mm::ch12::CollectiveMmaBlockScaledTmaBase<mm::ch12::Fp8BlockCfg>;
  GemmProblem p = problem({68, 256, 512}, "RCR");  // Kb = 4
  p.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x10000));
  EXPECT_EQ(Tma::tma_scales_rejects(p), "");
  p.m = 67;  // a pitch of 268 bytes
  EXPECT_NE(Tma::tma_scales_rejects(p).find("multiple of 16 bytes"), std::string::npos) << Tma::tma_scales_rejects(p);
  p.k = 128;  // one K block: the map still carries the pitch, which the driver checks
  EXPECT_NE(Tma::tma_scales_rejects(p).find("multiple of 16 bytes"), std::string::npos) << Tma::tma_scales_rejects(p);
  p.m = 4;
  EXPECT_EQ(Tma::tma_scales_rejects(p), "");
  p = problem({68, 256, 512}, "RCR");
  p.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x10004));
  EXPECT_NE(Tma::tma_scales_rejects(p).find("16-byte aligned"), std::string::npos) << Tma::tma_scales_rejects(p);
  // The step's own rules: fp8_block_scaled_rejects, with no word of M % 4.
  for (const auto& k : ch12::fp8_block_steps())
    if (k.name == "fp8_block_scaled") {
      EXPECT_EQ(k.rejects(problem({67, 264, 256}, "RCR")), "");
      EXPECT_NE(k.rejects(problem({67, 264, 24}, "RCR")).find("K % 16 == 0"), std::string::npos);
    }
}

TEST(ch12_Harness, BlockScalesFollowCublasLtsLayouts) {
  // A's (m, kb) at kb·M + m; B's (nb, kb) at nb·Kb4 + kb with Kb4 = Kb rounded up to 4 (padding 0).
  const GemmProblem p = problem({3, 300, 520}, "RCR");  // Kb = 5, Kb4 = 8, Nb = 3
  const mm::BlockScales s = mm::random_block_scales(p, 9);
  EXPECT_EQ(mm::scale_blocks_k(p.k), 5);
  EXPECT_EQ(mm::scale_blocks_k_padded(p.k), 8);
  ASSERT_EQ(s.a.size(), 3u * 5u);
  ASSERT_EQ(s.b.size(), 3u * 8u);
  for (float x : s.a) EXPECT_TRUE(x >= 0.5f / 448 && x < 2.0f / 448) << x;
  for (int nb = 0; nb < 3; ++nb)
    for (int kb = 0; kb < 8; ++kb) {
      const float x = s.b[std::size_t(nb * 8 + kb)];
      if (kb < 5) EXPECT_TRUE(x >= 0.5f / 448 && x < 2.0f / 448) << nb << "," << kb;
      else EXPECT_EQ(x, 0.0f) << "padding " << nb << "," << kb;
    }
}

// ---- What the chapter does not take: refused up front, with the rule, before any GPU work ----

TEST(ch12_Launch, RefusesOtherStorageOrdersAndWhatTmaCannotDescribe) {
  for (const auto& k : kTf32) {
    const std::string own = tf32_layout(k), other = own == "RCR" ? "RRR" : "RCR";
    EXPECT_NE(k.rejects(problem({64, 64, 64}, other)).find(own + " only"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "CCR")).find(own + " only"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 32, 9}, own)).find("K % 4 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 30, 8}, own)).find("N % 4 == 0"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({17, 36, 12}, own)), "") << k.name;
  }
  for (const auto& k : kFp8) {
    EXPECT_NE(k.rejects(problem({64, 64, 64}, "RRR")).find("RCR"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 32, 24}, "RCR")).find("K % 16 == 0"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 36, 32}, "RCR")).find("N % 8 == 0"), std::string::npos) << k.name;
    EXPECT_EQ(k.rejects(problem({17, 40, 32}, "RCR")), "") << k.name;
    try {
      k.launch(problem({17, 32, 24}, "RCR"), nullptr, nullptr, nullptr, nullptr);
      ADD_FAILURE() << k.name << ": 17x32x24 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("K % 16 == 0"), std::string::npos) << k.name << ": " << e.what();
    }
    try {  // a problem without its scales
      k.launch(problem({17, 32, 32}, "RCR"), nullptr, nullptr, nullptr, nullptr);
      ADD_FAILURE() << k.name << ": a problem without scales was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("scales"), std::string::npos) << k.name << ": " << e.what();
    }
  }
}

TEST(ch12_Launch, EveryStepRefusesAMisalignedA) {
  const GemmProblem p = problem({128, 256, 64}, "RCR");
  float scales[2] = {1, 1};
  GemmProblem q = p;
  q.scale_a = scales;  // never read: the launch is refused before
  q.scale_b = scales + 1;
  auto expect_refused = [](const std::string& name, auto&& launch) {
    try {
      launch();
      ADD_FAILURE() << name << ": a pointer 4 bytes past a 16-byte boundary was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << name << ": " << e.what();
    }  // (a std::runtime_error, such as "cannot read the GPU's SM count" without a GPU, fails the test:
       // every step refuses the pointer before it asks the GPU anything)
  };
  for (const auto& k : kTf32) {
    if (tf32_layout(k) != "RCR") continue;  // tf32_transpose_b reads B with its own kernel into an aligned workspace
    expect_refused(k.name, [&] {
      k.launch(p, reinterpret_cast<const float*>(std::uintptr_t(0x10000) + 4), reinterpret_cast<const float*>(0x20000),
               reinterpret_cast<float*>(0x30000), nullptr);
    });
  }
  for (const auto& k : kFp8)
    expect_refused(k.name, [&] {
      k.launch(q, reinterpret_cast<const e4m3*>(std::uintptr_t(0x10000) + 4), reinterpret_cast<const e4m3*>(0x20000),
               reinterpret_cast<bf16*>(0x30000), nullptr);
    });
}

TEST(ch12_Harness, RandomE4m3CodesSpanTheFormatsRange) {
  // The driver's fp8 inputs: 448·u rounded, so the codes reach the largest finite value's binade and
  // the subnormals, and the scale 1/448 maps them back to [-1, 1].
  const std::vector<e4m3> v = mm::random_host<e4m3>(1 << 16, 5);
  float lo = 1e9f, hi = 0;
  int subnormal = 0;
  for (e4m3 x : v) {
    const float f = std::fabs(float(x));
    ASSERT_TRUE(std::isfinite(f));
    ASSERT_LE(f, 448.0f);
    hi = std::max(hi, f);
    if (f > 0) lo = std::min(lo, f);
    if (f > 0 && f < 1.0f / 64) ++subnormal;
  }
  EXPECT_GE(hi, 416.0f);
  EXPECT_LT(lo, 1.0f / 64);
  EXPECT_GT(subnormal, 0);
  EXPECT_FLOAT_EQ(mm::kRandomE4m3Scale * 448.0f, 1.0f);
}

}  // namespace
