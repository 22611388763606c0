// Chapter 08: every tensor-core kernel (bf16 and tf32) against the fp64 reference in RRR and RCR (GPU),
// at degenerate, ragged, tile-edge, large, tall and misaligned sizes; on the CPU, the properties the
// chapter claims of its layouts. Every test name starts with "ch08", so `ctest -R ch08` selects it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "08_tensor_cores/no_copy_branch.cuh"
#include "08_tensor_cores/precomputed_addresses.cuh"
#include "08_tensor_cores/rounded_once.cuh"
#include "08_tensor_cores/steps.hpp"
#include "08_tensor_cores/two_blocks_per_sm.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "lds_wavefronts.hpp"

namespace {

namespace ch08 = mm::ch08;
using bf16 = __nv_bfloat16;
using mm::GemmProblem;
using mm::test::expect_matches_fp64;
using mm::test::problem;
using mm::test::Size;

/// The chapter's lists (steps.cu): the main path, and with MM_APPENDIX_STEPS the appendix too.
const std::vector<mm::GemmKernel<bf16, bf16>> kBf16Steps = ch08::bf16_steps();
const std::vector<mm::GemmKernel<float, float>> kTf32Steps = ch08::tf32_steps();

// Degenerate, smaller than a tile in every direction (K not a multiple of 8: no 16-byte rows, the
// element-wise path), one short of a tile, exactly one 128×128×32 tile, one past it in every
// direction, one past the 128×256 tile and the tf32 K step of 16, a few tiles, many blocks, tall and
// skinny, wide and short. The last three keep N and K multiples of 8 with every edge partial, so
// that the zero-fill kernels (zfill_edges on) take their predicated 16-byte path rather than the
// fallback (stage_in_pointer).
const std::vector<Size> kSizes = {
    {1, 1, 1},      {17, 33, 9},        {127, 129, 65}, {128, 128, 32}, {129, 129, 33}, {129, 257, 17},
    {256, 256, 64}, {1024, 1024, 1024}, {3000, 7, 129}, {5, 2000, 300}, {1, 300, 257},
    {1, 8, 8},      {129, 264, 72},     {200, 1000, 136},
};
const char* const kLayouts[] = {"RRR", "RCR"};

// ---- GPU: every kernel, both storage orders, every size ----

using Bf16Param = std::tuple<mm::GemmKernel<bf16, bf16>, const char*, Size>;
class Bf16Gemm : public ::testing::TestWithParam<Bf16Param> {};
TEST_P(Bf16Gemm, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // mma.sync bf16, cp.async
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch08, Bf16Gemm,
                         ::testing::Combine(::testing::ValuesIn(kBf16Steps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

using Tf32Param = std::tuple<mm::GemmKernel<float, float>, const char*, Size>;
class Tf32Gemm : public ::testing::TestWithParam<Tf32Param> {};
TEST_P(Tf32Gemm, MatchesFp64Reference) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // mma.sync tf32, cp.async
  const auto& [kernel, tag, size] = GetParam();
  expect_matches_fp64(kernel, problem(size, tag));
}
INSTANTIATE_TEST_SUITE_P(ch08, Tf32Gemm,
                         ::testing::Combine(::testing::ValuesIn(kTf32Steps), ::testing::ValuesIn(kLayouts),
                                            ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

TEST(ch08_Gemm, TallAndWide) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const char* tag : kLayouts)
    for (Size s : {mm::test::tall_size, mm::test::wide_size}) {
      for (const auto& k : kBf16Steps) expect_matches_fp64(k, problem(s, tag));
      for (const auto& k : kTf32Steps) expect_matches_fp64(k, problem(s, tag));
    }
}

/// The launcher run on copies of A and B that start one element past a 16-byte boundary: the kernel
/// must take its element-wise path, where a 16-byte cp.async would fault.
template <class T, class TOut>
mm::GemmLaunch<T, TOut> shifted_by_one_element(const mm::GemmKernel<T, TOut>& kernel) {
  return [launch = kernel.launch](const GemmProblem& p, const T* a, const T* b, TOut* c, cudaStream_t s) {
    const std::size_t na = std::size_t(p.m * p.k), nb = std::size_t(p.k * p.n);
    mm::DeviceBuffer<T> a1(na + 1), b1(nb + 1);
    MM_CUDA_CHECK(cudaMemcpyAsync(a1.data() + 1, a, na * sizeof(T), cudaMemcpyDeviceToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(b1.data() + 1, b, nb * sizeof(T), cudaMemcpyDeviceToDevice, s));
    launch(p, a1.data() + 1, b1.data() + 1, c, s);
    MM_CUDA_CHECK(cudaStreamSynchronize(s));  // before the scratch buffers are freed
  };
}

TEST(ch08_Gemm, MisalignedPointersTakeTheElementwisePath) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const char* tag : kLayouts) {
    const GemmProblem p = problem({256, 256, 64}, tag);
    for (const auto& k : kBf16Steps) {
      const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, shifted_by_one_element(k), k.dtype, 3);
      EXPECT_TRUE(r.ok) << k.name << " " << tag << ": " << r.summary;
    }
    for (const auto& k : kTf32Steps) {
      const mm::CheckResult r = mm::check_gemm_kernel<float, float>(p, shifted_by_one_element(k), k.dtype, 3);
      EXPECT_TRUE(r.ok) << k.name << " " << tag << ": " << r.summary;
    }
  }
}

TEST(ch08_Gemm, AnotherSeedAtALargerSize) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const char* tag : kLayouts) {
    for (const auto& k : kBf16Steps) expect_matches_fp64(k, problem({1000, 1100, 520}, tag), 7);
    for (const auto& k : kTf32Steps) expect_matches_fp64(k, problem({1000, 1100, 520}, tag), 7);
  }
}

// Every tf32 kernel rounds its inputs to nearest (cvt.rna), wherever it rounds them (fragment registers,
// or shared memory: tf32_rounded_once): with every a = 1 + 3·2^-12 and b = 1, rounding gives a = 1 + 2^-10
// and C = K·(1 + 2^-10) exactly (every partial sum fits fp32), where the tensor core's own truncation
// would give K. The random-input tests cannot tell the two apart: both pass the tf32 tolerance.
TEST(ch08_Gemm, Tf32KernelsRoundToNearestNotTruncate) {
  MM_REQUIRE_ARCH(mm::arch::sm80);
  for (const char* tag : kLayouts) {
    const GemmProblem p = problem({130, 260, 64}, tag);
    const float a = 1.0f + 3.0f / 4096.0f, rounded = 64.0f * (1.0f + 1.0f / 1024.0f);
    mm::DeviceBuffer<float> dA(std::vector<float>(std::size_t(p.m * p.k), a));
    mm::DeviceBuffer<float> dB(std::vector<float>(std::size_t(p.k * p.n), 1.0f));
    for (const auto& k : kTf32Steps) {
      mm::DeviceBuffer<float> dC(std::vector<float>(std::size_t(p.m * p.n), -1.0f));  // poisoned
      k.launch(p, dA.data(), dB.data(), dC.data(), nullptr);
      MM_CUDA_CHECK(cudaGetLastError());
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> c = dC.download();
      const auto wrong = std::count_if(c.begin(), c.end(), [&](float x) { return x != rounded; });
      EXPECT_EQ(wrong, 0) << k.name << " " << tag << ": C[0] = " << c[0] << ", expected " << rounded
                          << " (truncated inputs would give 64)";
    }
  }
}

// ---- CPU: the layouts ----

// Every element of the block's C tile has exactly one owner (thread, value) in the TiledMMA.
template <class Cfg>
void expect_c_owned_once() {
  using Tr = ch08::KernelTraits<Cfg>;
  typename Tr::TiledMma mma;
  auto c = mm::make_identity_tensor(mm::make_shape(typename Cfg::BM{}, typename Cfg::BN{}));  // (BM,BN) -> (m,n)
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < Tr::kThreads; ++t) {
    auto part = mma.get_slice(t).partition_C(c);  // (MMA,MMA_M,MMA_N) -> (m,n)
    for (int i = 0; i < int(mm::size(part)); ++i) {
      auto mn = part(i);
      EXPECT_TRUE(seen.insert({int(mm::get<0>(mn)), int(mm::get<1>(mn))}).second) << "thread " << t << " value " << i;
    }
  }
  EXPECT_EQ(int(seen.size()), Cfg::BM::value * Cfg::BN::value);
}
TEST(ch08_TiledMma, EveryElementOfCIsOwnedOnce) {
  expect_c_owned_once<ch08::MmaFragmentsCfg>();
  expect_c_owned_once<ch08::BigTileCfg>();
  expect_c_owned_once<ch08::Tf32FragmentsCfg>();
  expect_c_owned_once<ch08::Tf32BigTileCfg>();
}

// The wavefronts of one 8×8 matrix of an ldmatrix: its 8 rows are 16-byte units at the byte offsets
// `unit_bytes(i)`; a wavefront serves at most one unit per 16-byte bank group (addr / 16 % 8), so the
// matrix costs as many wavefronts as the most-used bank group has units.
template <class F>
int matrix_wavefronts(F&& unit_bytes) {
  int count[8] = {};
  for (int i = 0; i < 8; ++i) ++count[(unit_bytes(i) / 16) % 8];
  return *std::max_element(count, count + 8);
}

// Worst matrix of a K-major (MN,BK) tile, rows r..r+7 at one 16-byte unit of K: what ldmatrix (no
// .trans) reads; and of an MN-major tile, k-rows k..k+7 at one unit of MN (ldmatrix .trans).
template <class Cfg, int MN, bool kKMajor>
int worst_wavefronts() {
  using Tr = ch08::KernelTraits<Cfg>;
  using T = typename Tr::T;
  auto smem = [] {
    if constexpr (kKMajor) return Tr::template k_major_smem<MN>();
    else return Tr::template mn_major_smem<MN>();
  }();  // (MN,BK,S)
  const int bk = Cfg::BK::value, v = Tr::kVec;
  int worst = 0;
  if constexpr (kKMajor) {
    for (int r = 0; r < MN; r += 8)
      for (int k = 0; k < bk; k += v)
        worst = std::max(worst, matrix_wavefronts([&](int i) { return int(smem(r + i, k, 1)) * int(sizeof(T)); }));
  } else {
    for (int k = 0; k < bk; k += 8)
      for (int n = 0; n < MN; n += v)
        worst = std::max(worst, matrix_wavefronts([&](int i) { return int(smem(n, k + i, 1)) * int(sizeof(T)); }));
  }
  return worst;
}

TEST(ch08_SharedMemory, SwizzledTilesServeEachLdmatrixMatrixInOneWavefront) {
  EXPECT_EQ((worst_wavefronts<ch08::SwizzledCfg, 128, true>()), 1);    // A, and B of RCR
  EXPECT_EQ((worst_wavefronts<ch08::SwizzledCfg, 128, false>()), 1);   // B of RRR (.trans)
  EXPECT_EQ((worst_wavefronts<ch08::BigTileCfg, 256, false>()), 1);
  EXPECT_EQ((worst_wavefronts<ch08::Tf32SwizzledCfg, 128, true>()), 1);
  EXPECT_EQ((worst_wavefronts<ch08::Tf32DeepKCfg, 256, true>()), 1);  // 128-byte fp32 rows
}
TEST(ch08_SharedMemory, PlainTilesCostFourOrEightWavefronts) {
  // 64-byte K-major rows: rows r and r+2 share bank groups, 8 rows fall on 2 groups (4-way).
  EXPECT_EQ((worst_wavefronts<ch08::LdmatrixCfg, 128, true>()), 4);
  // 256-byte MN-major rows: all 8 k-rows of a matrix on one bank group (8-way).
  EXPECT_EQ((worst_wavefronts<ch08::LdmatrixCfg, 128, false>()), 8);
}

// tf32 in RRR reads B's fragments element by element from the N-major tile: for each value of the MMA's B
// partition, the 32 lanes of warp 0 read one 32-bit word each, costed by the 32-bit bank rule of
// tests/lds_wavefronts.hpp.
template <class Cfg>
int worst_elementwise_b_wavefronts() {
  using Tr = ch08::KernelTraits<Cfg>;
  typename Tr::TiledMma mma;
  auto smem = Tr::template mn_major_smem<Cfg::BN::value>();  // (BN,BK,S)
  std::vector<float> buf(std::size_t(mm::cosize_v<decltype(smem)>));
  auto stage = mm::make_tensor(buf.data(), smem)(mm::_, mm::_, 0);  // (BN,BK)
  const int values = int(mm::size(mma.get_slice(0).partition_B(stage)));
  int worst = 0;
  for (int v = 0; v < values; ++v) {
    std::vector<int> words(32);
    for (int lane = 0; lane < 32; ++lane)
      words[lane] = int(&mma.get_slice(lane).partition_B(stage)(v) - buf.data());  // fp32: a word each
    worst = std::max(worst, mm::test::lds32_wavefronts(words));
  }
  return worst;
}
TEST(ch08_SharedMemory, WideUnitSwizzleServesTf32ElementwiseBInOneWavefront) {
  EXPECT_EQ(worst_elementwise_b_wavefronts<ch08::Tf32NoCopyBranchCfg>(), 2);   // 16-byte units: k, k^1 collide
  EXPECT_EQ(worst_elementwise_b_wavefronts<ch08::Tf32ConflictFreeBCfg>(), 1);  // 32-byte units
}

// hoist_swizzle's rule (t + L(v) = t ^ L(v): the thread's and the values' offset bits apart) holds for
// every lane of the chapter's ldmatrix and cp.async partitions, and the hoisted view gives every value
// the address the plain partition gives it.
template <class Cfg, int MN, bool kKMajor, bool kSource = true, class S2R>
void expect_hoisted_addresses_match(S2R const& s2r) {
  using Tr = ch08::KernelTraits<Cfg>;
  using T = typename Tr::T;
  std::vector<T> buf(static_cast<std::size_t>(MN) * Cfg::BK::value * Cfg::kStages);
  auto smem = [] {
    if constexpr (kKMajor) return Tr::template k_major_smem<MN>();
    else return Tr::template mn_major_smem<MN>();
  }();  // (MN,BK,S)
  auto ring = mm::make_tensor(buf.data(), smem);
  for (int stage = 0; stage < Cfg::kStages; ++stage) {
    // As the kernel sees a stage: its start in the pointer, the layout of stage 0.
    auto s = mm::make_tensor(buf.data() + stage * MN * Cfg::BK::value, ring(mm::_, mm::_, 0).layout());
    for (int t = 0; t < Tr::kThreads; ++t) {
      auto plain = [&] {  // (CPY,CPY_MN,KB): ldmatrix sources; (CPY,CPY_MN,CPY_K): cp.async destinations
        if constexpr (kSource) return s2r.get_slice(t).partition_S(s);
        else return s2r.get_slice(t).partition_D(s);
      }();
      auto hoisted = mm::hoist_swizzle(plain);
      for (int i = 0; i < int(mm::size(plain)); ++i)
        ASSERT_EQ(&hoisted(i), &plain(i)) << "stage " << stage << " thread " << t << " value " << i;
      if constexpr (!kSource) {
        // no_copy_branch: stage 0's hoisted destinations moved to this stage by the pointer alone.
        auto s0 = mm::make_tensor(buf.data(), ring(mm::_, mm::_, 0).layout());
        auto h0 = mm::hoist_swizzle(s2r.get_slice(t).partition_D(s0));
        auto moved = mm::make_tensor(h0.data().shifted(stage * MN * Cfg::BK::value), h0.layout());
        for (int i = 0; i < int(mm::size(plain)); ++i)
          ASSERT_EQ(&moved(i), &plain(i)) << "shifted to stage " << stage << " thread " << t << " value " << i;
      }
    }
  }
}
TEST(ch08_SharedMemory, HoistedSwizzleGivesEveryLaneTheSameAddresses) {
  using H = ch08::HoistedSwizzleCfg;
  using HT = ch08::KernelTraits<H>;
  typename HT::TiledMma mma;
  expect_hoisted_addresses_match<H, 128, true>(mm::make_tiled_copy_A(mm::Copy_Atom<HT::LdsmFor<true>, bf16>{}, mma));
  expect_hoisted_addresses_match<H, 256, true>(mm::make_tiled_copy_B(mm::Copy_Atom<HT::LdsmFor<true>, bf16>{}, mma));
  expect_hoisted_addresses_match<H, 256, false>(mm::make_tiled_copy_B(mm::Copy_Atom<HT::LdsmFor<false>, bf16>{}, mma));
  using W = ch08::TwoBlocksPerSmCfg;
  using WT = ch08::KernelTraits<W>;
  typename WT::TiledMma mma2;
  expect_hoisted_addresses_match<W, 128, true>(mm::make_tiled_copy_A(mm::Copy_Atom<WT::LdsmFor<true>, bf16>{}, mma2));
  expect_hoisted_addresses_match<W, 128, false>(mm::make_tiled_copy_B(mm::Copy_Atom<WT::LdsmFor<false>, bf16>{}, mma2));
  // one_copy_path hoists the cp.async destinations too: A, B of RCR (K-major), B of RRR (N-major).
  using O = ch08::NoCopyBranchCfg;  // one_copy_path's destinations, and no_copy_branch's moved by stage
  using OT = ch08::KernelTraits<O>;
  expect_hoisted_addresses_match<O, 128, true, false>(OT::k_major_copy<128>());
  expect_hoisted_addresses_match<O, 256, true, false>(OT::k_major_copy<256>());
  expect_hoisted_addresses_match<O, 256, false, false>(OT::mn_major_copy<256>());
  // tf32's no_copy_branch steps: the destinations (and deep_k's 128-byte rows, a new swizzle) likewise.
  using N = ch08::Tf32NoCopyBranchCfg;
  using NT = ch08::KernelTraits<N>;
  expect_hoisted_addresses_match<N, 128, true, false>(NT::k_major_copy<128>());
  expect_hoisted_addresses_match<N, 256, true, false>(NT::k_major_copy<256>());
  expect_hoisted_addresses_match<N, 256, false, false>(NT::mn_major_copy<256>());
  using W32 = ch08::Tf32ConflictFreeBCfg;  // its B destinations under the 32-byte-unit swizzle
  using W32T = ch08::KernelTraits<W32>;
  expect_hoisted_addresses_match<W32, 256, false, false>(W32T::mn_major_copy<256>());
  using D = ch08::Tf32DeepKCfg;
  using DT = ch08::KernelTraits<D>;
  typename DT::TiledMma mma4;
  expect_hoisted_addresses_match<D, 128, true, false>(DT::k_major_copy<128>());
  expect_hoisted_addresses_match<D, 256, true, false>(DT::k_major_copy<256>());
  expect_hoisted_addresses_match<D, 256, false, false>(DT::mn_major_copy<256>());
  expect_hoisted_addresses_match<D, 128, true>(mm::make_tiled_copy_A(mm::Copy_Atom<DT::LdsmFor<true>, float>{}, mma4));
  expect_hoisted_addresses_match<D, 256, true>(mm::make_tiled_copy_B(mm::Copy_Atom<DT::LdsmFor<true>, float>{}, mma4));
  using F = ch08::Tf32HoistedSwizzleCfg;
  using FT = ch08::KernelTraits<F>;
  typename FT::TiledMma mma3;
  expect_hoisted_addresses_match<F, 128, true>(mm::make_tiled_copy_A(mm::Copy_Atom<FT::LdsmFor<true>, float>{}, mma3));
  expect_hoisted_addresses_match<F, 256, true>(mm::make_tiled_copy_B(mm::Copy_Atom<FT::LdsmFor<true>, float>{}, mma3));
}

// precomputed_addresses keeps K tile 0's source layout and moves one pointer per operand by a K tile's
// stride each K step: every thread's copy sources of every K tile are then the ones the K-tile
// partition names. Its rings are interleaved by stage (A's tile, then B's): stage 0's hoisted
// destinations moved by whole stages give every cp.async the address the plain partition of that stage
// gives. Both storage orders, a block inside the matrices.
template <class Cfg>
void expect_precomputed_addresses_match(const char* tag) {
  using T = ch08::Element<Cfg>;
  using Tr = ch08::KernelTraits<Cfg>;
  const GemmProblem p = problem({300, 520, 200}, tag);
  std::vector<T> a(std::size_t(p.m * p.k)), b(std::size_t(p.k * p.n)), c(std::size_t(p.m * p.n));
  ch08::with_gemm_args<Cfg>(p, a.data(), b.data(), c.data(), [&](auto const& args) {
    using Args = std::remove_cvref_t<decltype(args)>;
    typename Tr::CtaTiler tiler;
    auto cta = mm::make_coord(1, 1, mm::_);
    auto gA = mm::local_tile(mm::make_tensor(args.a, mm::make_shape(args.m, args.k), args.da), tiler, cta,
                             mm::Step<mm::_1, mm::X, mm::_1>{});  // (BM,BK,k)
    auto gB = mm::local_tile(mm::make_tensor(args.b, mm::make_shape(args.n, args.k), args.db), tiler, cta,
                             mm::Step<mm::X, mm::_1, mm::_1>{});  // (BN,BK,k)
    constexpr int kStageA = Cfg::BM::value * Cfg::BK::value, kStage = kStageA + Cfg::BN::value * Cfg::BK::value;
    std::vector<T> smem(std::size_t{Cfg::kStages * kStage});
    auto sA0 = mm::make_tensor(smem.data(), typename Args::SmemLayoutA{})(mm::_, mm::_, 0);            // (BM,BK)
    auto sB0 = mm::make_tensor(smem.data() + kStageA, typename Args::SmemLayoutB{})(mm::_, mm::_, 0);  // (BN,BK)
    auto check = [&](auto const& tiled_copy, auto const& g, auto const& s0, const char* what) {
      for (int t = 0; t < Tr::kThreads; ++t) {
        auto thr = tiled_copy.get_slice(t);
        auto tXgX = thr.partition_S(g);  // (CPY,CPY_MN,CPY_K,k)
        const auto layout = tXgX(mm::_, mm::_, mm::_, 0).layout();
        T const* src = tXgX(mm::_, mm::_, mm::_, 0).data();
        for (int kt = 0; kt < int(mm::size<3>(tXgX)); ++kt, src += mm::stride<3>(tXgX))
          for (int i = 0; i < int(mm::size(layout)); ++i)
            ASSERT_EQ(src + layout(i), &tXgX(mm::_, mm::_, mm::_, kt)(i)) << what << " thread " << t << " K tile " << kt;
        auto h0 = mm::hoist_swizzle(thr.partition_D(s0));  // (CPY,CPY_MN,CPY_K), stage 0
        for (int stage = 0; stage < Cfg::kStages; ++stage) {
          auto plain = thr.partition_D(mm::make_tensor(s0.data() + stage * kStage, s0.layout()));
          auto moved = mm::make_tensor(h0.data().shifted(stage * kStage), h0.layout());
          for (int i = 0; i < int(mm::size(plain)); ++i)
            ASSERT_EQ(&moved(i), &plain(i)) << what << " thread " << t << " stage " << stage << " value " << i;
        }
      }
    };
    check(args.copy_a, gA, sA0, "A");
    check(args.copy_b, gB, sB0, "B");
  });
}
TEST(ch08_Addresses, PrecomputedAddressesMatchThePartitions) {
  for (const char* tag : kLayouts) expect_precomputed_addresses_match<ch08::PrecomputedAddressesCfg>(tag);
}

TEST(ch08_Launch, Rejects) {
  EXPECT_EQ(ch08::tensor_core_rejects<ch08::MmaFragmentsCfg>(problem({17, 33, 9}, "RRR")), "");
  EXPECT_NE(ch08::tensor_core_rejects<ch08::MmaFragmentsCfg>(problem({17, 33, 9}, "CRR")).find("row-major A"),
            std::string::npos);
  EXPECT_NE(ch08::tensor_core_rejects<ch08::MmaFragmentsCfg>(problem({64, 65535 * 128 + 1, 8}, "RRR")).find("N <="),
            std::string::npos);
}

// no_copy_branch issues its copy on every K step, on the last S−1 past the last K tile too (predicated
// off, never read, but their offsets computed in 32 bits): S−1 tiles further along K than the other
// steps address. At N = 8192, K = 2^18 (RRR: B's rows are 8192 apart; RCR: B's columns are K apart)
// B's last tile ends at offset 2^31 − 1 exactly: the other steps take the problem, no_copy_branch's
// copies past the end would overflow, so it must refuse it; with two K tiles fewer its offsets fit.
TEST(ch08_Launch, NoCopyBranchCountsTheKTilesItAddressesPastTheEnd) {
  for (const char* tag : kLayouts) {
    const GemmProblem p = problem({128, 8192, 262144}, tag);
    EXPECT_EQ(mm::test::step_named(kBf16Steps, "hoisted_swizzle").rejects(p), "") << tag;
    const std::string why = mm::test::step_named(kBf16Steps, "no_copy_branch").rejects(p);
    EXPECT_NE(why.find("B ("), std::string::npos) << tag << ": " << why;
    EXPECT_NE(ch08::best().rejects(p), "") << tag;
    // tf32: S − 1 = 3 K tiles of 16 past the end.
    EXPECT_NE(mm::test::step_named(kTf32Steps, "tf32_no_copy_branch").rejects(p), "") << tag;
    EXPECT_NE(mm::test::step_named(kTf32Steps, "tf32_conflict_free_b").rejects(p), "") << tag;
    EXPECT_EQ(ch08::no_copy_branch_rejects<ch08::NoCopyBranchCfg>(problem({128, 8192, 262144 - 128}, tag)), "") << tag;
    EXPECT_EQ(ch08::no_copy_branch_rejects<ch08::Tf32NoCopyBranchCfg>(problem({128, 8192, 262144 - 48}, tag)), "") << tag;
  }
}

}  // namespace
