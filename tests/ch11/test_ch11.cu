// Chapter 11: every kernel against the fp64 reference (GPU, sm_90a) at degenerate, skinny, ragged,
// tile-edge and split sizes; few blocks looping over many (tile, K slice) units at deep K; split-K's
// result bit-identical from run to run; the kernel every_shape picks for each kind of shape (CPU);
// the problems the chapter does not take, refused with the rule. Every test name starts with "ch11".
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "11_every_shape/every_shape.hpp"
#include "11_every_shape/steps.hpp"
#include "11_every_shape/stream_k.cuh"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"

namespace {

namespace ch11 = mm::ch11;
using bf16 = __nv_bfloat16;
using mm::GemmProblem;
using mm::test::problem;
using mm::test::Size;

const std::vector<mm::GemmKernel<bf16, bf16>> kSteps = ch11::steps();

/// The steps that take any shape, storage order and address (every_shape; ragged_decode; the appendix's
/// any_shape_staged, every_shape's path before ragged_decode, and ragged_decode_simt, its first form):
/// the refusal tests leave them out.
bool takes_any_shape(const std::string& name) {
  return name == "every_shape" || name.rfind("ragged_decode", 0) == 0 || name == "any_shape_staged";
}
/// The appendix steps that run any_shape's whole-tile kernel on operands where they lie (any_128x...):
/// RRR too, but not what TMA cannot read.
bool takes_rrr(const std::string& name) { return takes_any_shape(name) || name.rfind("any_128x", 0) == 0; }

// RCR sizes (K a multiple of 8; N too, for the TMA store): one and two rows (M = 1, 2) and the skinny
// Ms of swap_ab's three tiles and their edges (15, 16, 17, 33, 63, 64, 65), smaller than a tile, one
// short of and one past the 128-row tile, K shorter than one step of 64, K not a multiple of 64 (a
// short last K step in the last slice), few tiles (split_k splits them), many tiles, tall and wide.
const std::vector<Size> kSizes = {
    {1, 8, 8},       {1, 304, 264},     {16, 4096, 1024}, {17, 40, 16},    {33, 1000, 520},   {64, 2048, 2048},
    {65, 264, 200},  {127, 248, 64},    {129, 264, 72},   {300, 512, 8},   {128, 8192, 1032}, {1000, 1000, 1000},
    {1024, 1024, 1024}, {2048, 4096, 72}, {3000, 8, 136},  {8, 2000, 4096},   {2, 264, 136},     {15, 520, 1032},
    {63, 1000, 4104},
};

using mm::test::expect_matches_fp64;

// ---- GPU: every step at every size; a step that does not take a size says so with its rule ----

using Param = std::tuple<mm::GemmKernel<bf16, bf16>, Size>;
class EveryShape : public ::testing::TestWithParam<Param> {};
TEST_P(EveryShape, MatchesFp64ReferenceOrRefusesWithItsRule) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [kernel, size] = GetParam();
  const GemmProblem p = problem(size, "RCR");
  if (const std::string why = kernel.rejects(p); !why.empty()) {
    // only swap_ab (and its variants) refuse here (M > 64), and ragged_decode (M > 16)
    const bool ragged = kernel.name.rfind("ragged_decode", 0) == 0;
    EXPECT_TRUE(ragged || kernel.name.rfind("swap_ab", 0) == 0) << kernel.name << ": " << why;
    EXPECT_NE(why.find(ragged ? "M <= 16" : "M <= 64"), std::string::npos) << why;
    return;
  }
  expect_matches_fp64(kernel, p);
}
INSTANTIATE_TEST_SUITE_P(ch11, EveryShape, ::testing::Combine(::testing::ValuesIn(kSteps), ::testing::ValuesIn(kSizes)),
                         mm::test::param_name);

TEST(ch11_Gemm, FewBlocksLoopOverManySlicesAtDeepK) {
  // 3 blocks, K cut into 5 slices (4104 = 64 steps of 64 and one of 8: the last slice is shorter):
  // each block loops over many (tile, slice) units, the ring's states carry across units and slices,
  // and last-slice units wait for slices that other blocks (or they themselves) multiplied earlier.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const auto& k : ch11::steps_on_grid(3, 5)) {
    if (k.name == "tile_shapes" || k.name == "every_shape") continue;  // no forced slices there
    for (const Size& s : {Size{1024, 512, 4104}, Size{16, 1000, 4104}, Size{64, 2000, 2056}}) {
      const GemmProblem p = problem(s, "RCR");
      if (!k.rejects(p).empty()) continue;
      expect_matches_fp64(k, p, 5);
    }
  }
  for (const auto& k : ch11::steps_on_grid(3)) {
    const GemmProblem p = problem({1024, 2048, 4096}, "RCR");
    if (k.rejects(p).empty()) expect_matches_fp64(k, p, 5);
  }
}

TEST(ch11_Gemm, StreamKOnAnyBlockCount) {
  // 15 tiles of 128×256 (and 4, and 1) on 1 to 32 blocks and on the whole GPU: whole rounds with a
  // shared remainder, rounds left short (sharing would not pay), fewer tiles than blocks, pieces of a
  // few K steps, ranges inside one tile, ranges across ring rounds; K not a multiple of 64. The
  // schedules are counted on the CPU, so that the test cannot stop sharing tiles without failing.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const std::vector<Size> sizes = {{640, 768, 1032}, {640, 768, 520}, {1, 8, 8}, {129, 264, 4104}};
  int shared = 0;
  for (int blocks : {0, 1, 3, 6, 7, 11, 13, 20, 32}) {
    const auto k = mm::test::step_named(ch11::steps_on_grid(blocks), "stream_k");
    for (const Size& s : sizes) {
      expect_matches_fp64(k, problem(s, "RCR"), 7);
      const mm::GroupedTileScheduler tiles{int((s.m + 127) / 128), int((s.n + 255) / 256), 16};
      const int k_steps = int((s.k + 63) / 64), resident = mm::device_sm_count();
      const int grid = ch11::stream_k_blocks(tiles.size(), k_steps, blocks > 0 ? std::min(blocks, resident) : resident);
      shared += mm::StreamKTileScheduler::make(tiles, k_steps, grid).sk_tiles > 0;
    }
  }
  EXPECT_GE(shared, 20) << "schedules that share tiles";  // 22 of 36 on 32 or more SMs
}

TEST(ch11_Gemm, PingPongConsumersTakeTurnsOnAnyTileCount) {
  // 5 × 3 = 15 tiles of 128×128 on 1 to 16 blocks: blocks with one tile (consumer 1 idle), with an
  // odd count (consumer 0 has one more: its last turn signal must not be sent), with many; each
  // consumer skips the other's stages across the ring's rounds (K = 520: 9 stages a tile, 6 in the ring).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  int checked = 0;
  for (int blocks : {1, 2, 3, 7, 15, 16}) {
    for (const auto& k : ch11::steps_on_grid(blocks)) {
      if (k.name.rfind("ping_pong", 0) != 0) continue;
      expect_matches_fp64(k, problem({640, 384, 520}, "RCR"), 7);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "ping_pong is an appendix step: configure with -DMM_APPENDIX_STEPS=ON";
}

TEST(ch11_Gemm, WideDecodeMatchesFp64) {
  // every_shape's 64×256 one-consumer tile (wide_decode) at M = 17, 33, 64 and a K not a multiple of
  // 64, on however many SMs this GPU has (the choice is checked, so the test cannot pass on swap_ab).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  for (std::int64_t m : {17, 33, 64}) {
    const GemmProblem p = problem({m, 28672, 520}, "RCR");
    ASSERT_EQ(ch11::choose(p, mm::device_sm_count()).kernel, ch11::Choice::tile_shapes) << m;
    expect_matches_fp64(every, p, 11);
  }
}

TEST(ch11_Gemm, OneConsumerTilesMatchFp64InRrr) {
  // RRR on the one-consumer tiles (B MN-major): 64×256 at M = 17, 33, 64 (wide_decode), 64×128 at M = 48
  // with one tile of 128 columns per SM (mid_decode), and for the model's 128×64 tile at M = 100 (two
  // rows of 64-row tiles, the second ragged) and N = 6136 (a ragged last column of tiles). The choice
  // is checked, so that the test cannot pass on another kernel.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  const int sms = mm::device_sm_count();
  if (sms < 64) GTEST_SKIP() << "mid_decode needs 64 tiles in one round: " << sms << " SMs";
  for (const auto& [m, n, k, bn] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, int>{17, 28672, 520, 256},
                                    {33, 28672, 520, 256}, {64, 28672, 520, 256}, {48, 128 * std::int64_t(sms), 264, 128},
                                    {100, 6136, 512, 128}, {512, 512, 512, 128}}) {
    const GemmProblem p = problem({m, n, k}, "RRR");
    const ch11::Choice c = ch11::choose(p, sms);
    ASSERT_TRUE(c.any_shape && c.kernel == ch11::Choice::tile_shapes && c.tile_bm == 64 && c.tile_bn == bn)
        << mm::test::size_name(p) << ": " << c.tile_bm << "x" << c.tile_bn;
    expect_matches_fp64(every, p, 17);
  }
}

TEST(ch11_Gemm, FillTilesMatchFp64) {
  // every_shape's step-9 tiles (128×160, 128×176: the epilogue's last piece 32 or 48 columns wide; in RRR
  // step 13's, B's third 64-column panel read in part, wholly past N at 11000) at
  // odd sizes: M not a multiple of 128, N ending inside the last tile's narrow piece (10232 = 63·160
  // + 152; 11064 = 62·176 + 152) or before it (11000 = 62·176 + 88: the last piece wholly outside C),
  // K not a multiple of 64 or shorter than one K step. The choice is checked, so that the test cannot
  // pass on another tile; C starts poisoned (check_gemm_kernel).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  const int sms = mm::device_sm_count();
  if (sms != 132) GTEST_SKIP() << "the sizes are picked for 132 SMs: " << sms;
  for (const auto& [s, bn] : {std::pair{Size{500, 10232, 1040}, 160}, {Size{385, 10232, 8}, 160},
                              {Size{500, 11064, 1040}, 176}, {Size{511, 11000, 520}, 176}}) {
    for (const char* layout : {"RCR", "RRR"}) {  // RRR: step 13, B MN-major, its third panel read in part
      const GemmProblem p = problem(s, layout);
      const ch11::Choice c = ch11::choose(p, sms);
      ASSERT_TRUE(c.kernel == ch11::Choice::tile_shapes && c.any_shape == (p.b == mm::Order::row) && !c.aligned_rows &&
                  c.tile_bm == 128 && c.tile_bn == bn)
          << mm::test::size_name(p) << ": " << c.tile_bm << "x" << c.tile_bn;
      expect_matches_fp64(every, p, 19);
    }
  }
}

TEST(ch11_Gemm, StreamTilesMatchFp64) {
  // every_shape's step-10 tiles (128×96 with two consumers, 64×96 with one: the epilogue's last piece
  // 32 columns wide) at odd sizes: M from 65 to 127, N ending inside the last tile's narrow piece
  // (11024 = 114·96 + 80; 6136 = 63·96 + 88) or before it (11000 = 114·96 + 56, 6104 = 63·96 + 56: the
  // last piece wholly outside C), K not a multiple of 64 or shorter than one K step. The choice is
  // checked, so that the test cannot pass on another tile; C starts poisoned (check_gemm_kernel).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  const int sms = mm::device_sm_count();
  if (sms != 132) GTEST_SKIP() << "the sizes are picked for 132 SMs: " << sms;
  for (const auto& [s, bm] : {std::pair{Size{97, 11024, 520}, 128}, {Size{127, 11000, 1040}, 128},
                              {Size{120, 6136, 1040}, 64}, {Size{65, 6104, 8}, 64}}) {
    const GemmProblem p = problem(s, "RCR");
    const ch11::Choice c = ch11::choose(p, sms);
    ASSERT_TRUE(c.kernel == ch11::Choice::tile_shapes && !c.any_shape && !c.aligned_rows && c.tile_bm == bm && c.tile_bn == 96)
        << mm::test::size_name(p) << ": " << c.tile_bm << "x" << c.tile_bn;
    expect_matches_fp64(every, p, 23);
  }
}

TEST(ch11_Gemm, DecodeStreamTileMatchesFp64) {
  // every_shape's step-12 tile (64×48 with one consumer, K whole) at odd sizes where choose() takes it:
  // M from 33 to 64, N ending inside the last tile (4104 = 85·48 + 24, 4088 = 85·48 + 8, 4440 = 92·48 +
  // 24, 4400 = 91·48 + 32, 6328 = 131·48 + 40: 132 tiles, the last one-round N), K not a multiple of 64
  // (520: swap_ab would not split K; 64×32, which every_shape no longer takes, runs forced in
  // DecodeTilesForcedMatchFp64). The choice is checked, so that the test cannot pass on swap_ab; C starts
  // poisoned (check_gemm_kernel).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  const int sms = mm::device_sm_count();
  if (sms != 132) GTEST_SKIP() << "the sizes are picked for 132 SMs: " << sms;
  for (const Size& s : {Size{33, 4104, 520}, Size{64, 4088, 1040}, Size{50, 4440, 1032}, Size{64, 4400, 1040},
                        Size{57, 6328, 1032}}) {
    const GemmProblem p = problem(s, "RCR");
    const ch11::Choice c = ch11::choose(p, sms);
    ASSERT_TRUE(c.kernel == ch11::Choice::tile_shapes && !c.any_shape && !c.aligned_rows && c.tile_bm == 64 && c.tile_bn == 48)
        << mm::test::size_name(p) << ": " << c.tile_bm << "x" << c.tile_bn;
    expect_matches_fp64(every, p, 29);
  }
}

/// The appendix steps that force a decode tile (step 12's 64×32 and 64×48, 64×32 and 64×128 in clusters along N).
bool decode_tile_step(const std::string& name) {
  return name == "tile_64x32" || name == "tile_64x48" || name == "tile_64x32_1x2" || name == "tile_64x128_1x2" ||
         name == "tile_64x128_1x4";
}

TEST(ch11_Gemm, DecodeTilesForcedMatchFp64) {
  // Step 12's tiles forced (appendix steps tile_64x32, tile_64x48, and tile_64x32_1x2 with A multicast
  // in clusters of 2 along N: the epilogue's narrower piece is the whole tile; 64×128 in clusters of 2
  // and 4 along N, whose last cluster of a row runs past N) at odd decode sizes: M
  // from 33 to 64, N ending inside the last tile (4104 = 128·32 + 8, 4088 = 127·32 + 24, 4440 = 92·48 +
  // 24 = 138·32 + 24; 1000 and 264 inside both widths), K = 8 to 1040 (shorter than one K step, not a
  // multiple of 64, the 17- and 14-stage rings wrapping several times). C starts poisoned (check_gemm_kernel).
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  int forced = 0;
  for (const auto& k : kSteps) {
    if (!decode_tile_step(k.name)) continue;
    for (const Size& s : {Size{33, 4104, 8}, Size{64, 4088, 72}, Size{41, 1000, 136}, Size{64, 264, 1040}, Size{57, 4440, 520}}) {
      expect_matches_fp64(k, problem(s, "RCR"), 31);
      ++forced;
    }
  }
  if (forced == 0) GTEST_SKIP() << "the forced tiles are appendix steps: configure with -DMM_APPENDIX_STEPS=ON";
}

/// The appendix steps against M = 128's DRAM rate (tile_shapes.cuh: 128×96 with 7 stages and one C
/// buffer a consumer; 128×96, 128×128 and 64×96 in K steps of 128; cuBLAS's 64×64 with 13 stages,
/// alone and in clusters of 2 along M).
bool m128_ring_step(const std::string& name) {
  return name == "tile_128x96_s7" || name == "tile_128x96_k128" || name == "tile_128x128_k128" ||
         name == "tile_64x96_k128" || name == "tile_64x64" || name == "tile_64x64_2x1";
}

TEST(ch11_Gemm, M128RingTilesForcedMatchFp64) {
  // The appendix's deeper rings (7 stages, one C buffer: the tile's two pieces, 64 and 32 columns, take
  // turns in it; 64×64's 13 stages, alone and in clusters of 2 whose second block may have no rows) and
  // K steps of 128 (two boxes of 64 k a row a stage; 8 wgmma k-blocks walking both)
  // at odd sizes: M = 1, 65, 127, 128, 129 (a second row of tiles of one row); N ending inside a tile's
  // first piece or its narrow one (104 = 96 + 8, 1000 = 10·96 + 40, 11024 = 114·96 + 80); K below one
  // step of 128 (8; 64: the second box wholly past K; 72: partly), and past a multiple of 128 by 8, 72
  // or 104 (136, 200, 1032, 4104: the last step's boxes partly or wholly zero-filled), the 3- and
  // 7-stage rings wrapping. Then on a grid of 3 blocks, each looping over many tiles: the ring's state
  // and the one C buffer's store wait carried from tile to tile. C starts poisoned (check_gemm_kernel).
  // (K and N not multiples of 8 are refused with TMA's rule: ch11_Launch.)
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  int forced = 0;
  for (const auto& k : kSteps) {
    if (!m128_ring_step(k.name)) continue;
    for (const Size& s : {Size{1, 96, 8}, Size{127, 104, 136}, Size{129, 88, 4104}, Size{128, 192, 64}, Size{65, 1000, 72},
                          Size{128, 11024, 200}, Size{128, 264, 1032}, Size{129, 11008, 4096}}) {
      expect_matches_fp64(k, problem(s, "RCR"), 37);
      ++forced;
    }
  }
  for (const auto& k : ch11::steps_on_grid(3)) {
    if (!m128_ring_step(k.name)) continue;
    for (const Size& s : {Size{257, 1000, 1032}, Size{128, 2056, 520}}) expect_matches_fp64(k, problem(s, "RCR"), 41);
  }
  if (forced == 0) GTEST_SKIP() << "the forced tiles are appendix steps: configure with -DMM_APPENDIX_STEPS=ON";
}

TEST(ch11_Launch, M128RingTilesRefuseWhatTmaCannotRead) {
  // Sizes TMA cannot read or store (K or N not a multiple of 8): each refused with its rule, before any
  // GPU work; their neighbours that are taken run in M128RingTilesForcedMatchFp64.
  int listed = 0;
  for (const auto& k : kSteps) {
    if (!m128_ring_step(k.name)) continue;
    ++listed;
    for (const std::int64_t kk : {1, 63, 65, 129, 4097})
      for (const std::int64_t m : {1, 127, 129})
        EXPECT_NE(k.rejects(problem({m, 96, kk}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name << " K = " << kk;
    for (const std::int64_t n : {95, 97})
      EXPECT_NE(k.rejects(problem({128, n, 4096}, "RCR")).find("N % 8 == 0"), std::string::npos) << k.name << " N = " << n;
    EXPECT_EQ(k.rejects(problem({128, 11008, 4096}, "RCR")), "") << k.name;
  }
  if (listed == 0) GTEST_SKIP() << "the forced tiles are appendix steps: configure with -DMM_APPENDIX_STEPS=ON";
  EXPECT_EQ(listed, 6) << "m128_ring_step names six steps; each must be in the appendix build";
}

/// The shared memory of tile_shapes' kernel on `Cfg`, summed as the kernel's SharedStorage (without the
/// kernel's 227 KB static_assert, so that a configuration that does not fit can be measured too).
template <class Cfg>
std::size_t tile_kernel_smem_bytes() {
  return sizeof(mm::KernelSharedStorage<mm::CollectiveMma<Cfg, bf16>, mm::CollectiveEpilogueTma<Cfg, bf16>>);
}
struct Tile128x96S7TwoBuffersCfg : ch11::Tile128x96S7Cfg {
  static constexpr int kCBuffers = 2;
};
struct Tile128x96K128S4OneBufferCfg : ch11::Tile128x96K128Cfg {
  static constexpr int kStages = 4;
  static constexpr int kCBuffers = 1;
};

TEST(ch11_SharedMemory, M128RingTilesFitWhereTheirNeighboursDoNot) {
  // The rings, the C buffers (8 KB a piece) and the barriers, in 1024-byte-aligned members: 7 stages of
  // 128×96 fit with one C buffer a consumer and not with two; 128×96 in K steps of 128 fits 3 stages
  // and not 4, even with one buffer; 128×128 in K steps of 128 fits 3 with both buffers.
  constexpr std::size_t kMax = 227 * 1024;
  static_assert(std::is_same_v<ch11::TileKernel<ch11::Tile128x96Cfg>::SharedStorage,
                               mm::KernelSharedStorage<mm::CollectiveMma<ch11::Tile128x96Cfg, bf16>,
                                                       mm::CollectiveEpilogueTma<ch11::Tile128x96Cfg, bf16>>>,
                "tile_kernel_smem_bytes sums the storage of tile_shapes' kernel");
  EXPECT_EQ(tile_kernel_smem_bytes<ch11::Tile128x96Cfg>(), 6u * 28672u + 2u * 2u * 8192u + 1024u);       // 201 KB
  EXPECT_EQ(tile_kernel_smem_bytes<ch11::Tile128x96S7Cfg>(), 7u * 28672u + 2u * 8192u + 1024u);          // 213 KB
  EXPECT_GT(tile_kernel_smem_bytes<Tile128x96S7TwoBuffersCfg>(), kMax);
  EXPECT_EQ(tile_kernel_smem_bytes<ch11::Tile128x96K128Cfg>(), 3u * 57344u + 2u * 2u * 8192u + 1024u);   // 201 KB
  EXPECT_GT(tile_kernel_smem_bytes<Tile128x96K128S4OneBufferCfg>(), kMax);
  EXPECT_EQ(tile_kernel_smem_bytes<ch11::Tile128x128K128Cfg>(), 3u * 65536u + 2u * 2u * 8192u + 1024u);  // 225 KB
  EXPECT_LE(tile_kernel_smem_bytes<ch11::Tile128x128K128Cfg>(), kMax);
  EXPECT_EQ(tile_kernel_smem_bytes<ch11::Tile64x96K128Cfg>(), 5u * 40960u + 2u * 8192u + 1024u);         // 217 KB
  // K steps of 128 move a K step's bytes in one stage: the full barrier expects both boxes of each operand.
  EXPECT_EQ(ch11::TileKernel<ch11::Tile128x96K128Cfg>::Mainloop::kTransactionBytes, 57344u);
  EXPECT_EQ(ch11::TileKernel<ch11::Tile128x96S7Cfg>::Mainloop::kTransactionBytes, 28672u);
}

TEST(ch11_Gemm, AlignedRowsMatchFp64) {
  // every_shape's copy into 128-byte-aligned rows (K % 16 != 0, a big problem, where step 15's 192×192
  // clusters would not finish first): K = 1000 and 3000 (rows 16 bytes into a sector), M not a multiple
  // of the tile; the choice is checked, so that the test cannot pass on the plain kernel.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  for (const Size& s : {Size{1312, 4096, 1000}, Size{1312, 2048, 3000}}) {
    const GemmProblem p = problem(s, "RCR");
    ASSERT_TRUE(ch11::choose(p, mm::device_sm_count()).aligned_rows) << mm::test::size_name(p);
    expect_matches_fp64(every, p, 13);
  }
}

TEST(ch11_Gemm, StraddlingRowsInPlaceMatchFp64) {
  // Step 15: the same misaligned rows read in place by 192×192 tiles in clusters of 2 along M, where the
  // model says they finish before the copy: M and N not multiples of 192 nor of the cluster's 384 rows
  // (the last cluster's second block past M), K = 1000 and 3000; the choice is checked.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  for (const Size& s : {Size{2048, 4096, 1000}, Size{2056, 2048, 3000}}) {
    const GemmProblem p = problem(s, "RCR");
    const ch11::Choice c = ch11::choose(p, mm::device_sm_count());
    ASSERT_TRUE(!c.aligned_rows && c.tile_bm == 192 && c.tile_bn == 192) << mm::test::size_name(p);
    expect_matches_fp64(every, p, 13);
  }
}

TEST(ch11_Gemm, SplitKAndStreamKAreBitIdenticalFromRunToRun) {
  // The last slice adds the others in slice order (stream_k: the finisher adds the blocks before it in
  // block order): the same bits every run, however the blocks were scheduled. (An atomicAdd reduction
  // would fail this.)
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const Size& s : {Size{512, 1024, 4096}, Size{16, 4096, 4096}, Size{1000, 1000, 1000}}) {
    const GemmProblem p = problem(s, "RCR");
    mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n), c(p.m * p.n);
    mm::fill_random(a, 3);
    mm::fill_random(b, 4);
    for (const auto& k : ch11::steps_on_grid(0, 4)) {
      if (k.name != "split_k" && k.name != "swap_ab" && k.name != "stream_k") continue;
      if (!k.rejects(p).empty()) continue;
      auto run = k.prepare(p, a.data(), b.data(), c.data());
      run(nullptr);
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<bf16> first = c.download();
      for (int i = 0; i < 10; ++i) run(nullptr);
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<bf16> last = c.download();
      ASSERT_EQ(first.size(), last.size());
      EXPECT_EQ(0, std::memcmp(first.data(), last.data(), first.size() * sizeof(bf16))) << k.name;
    }
  }
}

// ---- CPU: what every_shape picks ----

TEST(ch11_Choice, SkinnyProblemsSwapAndSplitK) {
  // M = 16 against a 4096×4096 layer on 132 SMs: 64 tiles of 64 rows of N; K split 2 ways makes 128
  // units, about one per SM (128-row tiles would need 4 slices, twice the partial sums).
  const ch11::Choice c = ch11::choose(problem({16, 4096, 4096}, "RCR"), 132);
  EXPECT_EQ(c.kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(c.tile_bm, 64);
  EXPECT_EQ(c.tile_bn, 16);
  EXPECT_EQ(c.splits, 2);
  // 11008 rows of N: 86 tiles of 128 rows (172 of 64 would take two rounds).
  EXPECT_EQ(ch11::choose(problem({16, 11008, 4096}, "RCR"), 132).tile_bm, 128);
  EXPECT_EQ(ch11::choose(problem({1, 11008, 4096}, "RCR"), 132).tile_bm, 128);
  EXPECT_EQ(ch11::choose(problem({1, 4096, 4096}, "RCR"), 132).tile_bn, 16);
  EXPECT_EQ(ch11::choose(problem({64, 4096, 4096}, "RCR"), 132).tile_bn, 64);
  EXPECT_EQ(ch11::choose(problem({33, 4096, 4096}, "RCR"), 132).tile_bn, 64);
  // The same choice of height at M = 17-64 (run 11z8: 64 rows won at N = 4096, 128 at N >= 11008, at
  // each of the 9 shapes measured): M = 64 at N = 4096 in 64 tiles of 64 rows and 2 slices; at N =
  // 11008 in 86 tiles of 128 rows; M = 32 at N = 4096 in 64 tiles of 64 rows and 2 slices.
  // (Step 12's 64×48 tile takes N = 4296-6336 at 33-64 rows and K = 4096, not these:
  // DecodeStreamTileWhereItsRoundHasMoreUnits.)
  const ch11::Choice m64 = ch11::choose(problem({64, 4096, 4096}, "RCR"), 132);
  EXPECT_EQ(m64.kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(m64.tile_bm, 64);
  EXPECT_EQ(m64.splits, 2);
  EXPECT_EQ(ch11::swap_choice(problem({64, 11008, 4096}, "RCR"), 132).tile_bm, 128);
  EXPECT_EQ(ch11::choose(problem({48, 4096, 14336}, "RCR"), 132).tile_bm, 64);
  const ch11::Choice m32 = ch11::choose(problem({32, 4096, 4096}, "RCR"), 132);
  EXPECT_EQ(m32.tile_bm, 64);
  EXPECT_EQ(m32.tile_bn, 32);
  EXPECT_EQ(m32.splits, 2);
  EXPECT_EQ(ch11::choose(problem({32, 11008, 4096}, "RCR"), 132).tile_bm, 128);
  // 14336 rows of N make 112 tiles: one round at 85% of the SMs beats 7 slices in 6 rounds.
  EXPECT_EQ(ch11::choose(problem({16, 14336, 4096}, "RCR"), 132).splits, 1);
  EXPECT_EQ(ch11::choose(problem({16, 14336, 4096}, "RCR"), 132).kernel, ch11::Choice::swap_ab);
  // 6144 rows of N: one round of 96 tiles of 64 rows, K not split (128-row tiles would need 5 slices in
  // two rounds: 81% of cuBLAS against 92.5% measured), in both storage orders.
  for (const char* layout : {"RCR", "RRR"}) {
    const ch11::Choice n6144 = ch11::choose(problem({16, 6144, 4096}, layout), 132);
    EXPECT_EQ(n6144.kernel, ch11::Choice::swap_ab) << layout;
    EXPECT_EQ(n6144.tile_bm, 64) << layout;
    EXPECT_EQ(n6144.splits, 1) << layout;
  }
}

TEST(ch11_Choice, WideDecodeTakesOne64x256TilePerSm) {
  // N = 28672: 112 tiles of 256 columns, 85% of 132 SMs in one round (swap_ab: 224 tiles of 128 rows,
  // 1.7 rounds): tile_shapes' 64×256 tile, K not split, at M = 17-64; swap_ab's 128×16 at M <= 16.
  for (std::int64_t m : {1, 16}) EXPECT_EQ(ch11::choose(problem({m, 28672, 8192}, "RCR"), 132).kernel, ch11::Choice::swap_ab) << m;
  for (std::int64_t m : {17, 33, 64}) {
    const ch11::Choice wide = ch11::choose(problem({m, 28672, 8192}, "RCR"), 132);
    EXPECT_EQ(wide.kernel, ch11::Choice::tile_shapes) << m;
    EXPECT_EQ(wide.tile_bm, 64) << m;
    EXPECT_EQ(wide.tile_bn, 256) << m;
    EXPECT_EQ(wide.splits, 1) << m;
  }
  // Not past M = 64, not when the tiles make more than one round (144 tiles on 132 SMs) or under 3/4
  // of one (98 tiles), not when the TMA store cannot take N (N % 8 != 0).
  EXPECT_NE(ch11::choose(problem({65, 28672, 8192}, "RCR"), 132).tile_bm, 64);
  EXPECT_EQ(ch11::choose(problem({32, 144 * 256, 4096}, "RCR"), 132).kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(ch11::choose(problem({32, 98 * 256, 4096}, "RCR"), 132).kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(ch11::choose(problem({32, 99 * 256, 4096}, "RCR"), 132).kernel, ch11::Choice::tile_shapes);
  EXPECT_EQ(ch11::choose(problem({32, 28671, 8192}, "RCR"), 132).kernel, ch11::Choice::swap_ab);
}

TEST(ch11_Choice, DecodeStreamsUnsplitFrom80Units) {
  // 80-86 tiles of 128 rows of N (N = 10240-11008) stream B at DRAM's full rate unsplit: K whole, at
  // every M <= 64 and K (measured 98-104% of cuBLAS against 85-95% with K in 3 slices; 91% against 82%
  // at 64×11008×4096, where the 64×256 tile of an earlier rule ran at 89%).
  // (At 33-64 rows every_shape runs these as 64×128 tiles instead: MidDecodeTakesOne64x128TilePerSm.)
  for (std::int64_t m : {1, 16, 32, 33, 48, 64})
    for (const auto& [n, k] : {std::pair{10240, 4096}, {10240, 8192}, {11008, 4096}, {11008, 8192}}) {
      const ch11::Choice c = ch11::swap_choice(problem({m, n, k}, "RCR"), 132);
      EXPECT_EQ(c.kernel, ch11::Choice::swap_ab) << m << "x" << n << "x" << k;
      EXPECT_EQ(c.tile_bm, 128) << m << "x" << n << "x" << k;
      EXPECT_EQ(c.splits, 1) << m << "x" << n << "x" << k;
    }
  // Fewer units than that still split K: 64 tiles of 64 rows at N = 4096 in 2 slices (measured 93-97%
  // against 86-88% unsplit) ...
  EXPECT_EQ(ch11::choose(problem({1, 4096, 4096}, "RCR"), 132).splits, 2);
  EXPECT_EQ(ch11::choose(problem({64, 4096, 4096}, "RCR"), 132).splits, 2);
  // ... and the model is the same in both storage orders (RRR: the any-shape path, swap_ab's kernel).
  const ch11::Choice rrr = ch11::choose(problem({16, 11008, 4096}, "RRR"), 132);
  EXPECT_TRUE(rrr.any_shape);
  EXPECT_EQ(rrr.kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(rrr.splits, 1);
}

TEST(ch11_Choice, TileShapesFollowTheWaves) {
  // 4096³: 128×256 gives 512 tiles (3.9 waves on 132 SMs), the largest tile wins.
  const ch11::Choice big = ch11::choose(problem({4096, 4096, 4096}, "RCR"), 132);
  EXPECT_EQ(big.kernel, ch11::Choice::tile_shapes);
  EXPECT_EQ(big.tile_bn, 256);
  EXPECT_EQ(big.splits, 1);
  // 3072³: 128×256 gives 288 tiles = 2.18 waves (3 rounds); 128×192 gives 384 = 2.9 waves (3 rounds of
  // 3/4 the work).
  EXPECT_EQ(ch11::choose(problem({3072, 3072, 3072}, "RCR"), 132).tile_bn, 192);
  // 1024³: 32 tiles of 128×256, 64 of 128×128 or 128 of 128×64, each one round: the smallest tile,
  // and K is not split (128 tiles fill the GPU).
  // (every_shape runs that 128×64 tile as 64×128 with one consumer: OneConsumerFor128x64 below.)
  EXPECT_EQ(ch11::kTileShapes[ch11::choose_tile_shape(problem({1024, 1024, 1024}, "RCR"), 132)].bn, 64);
  const ch11::Choice small = ch11::choose(problem({1024, 1024, 1024}, "RCR"), 132);
  EXPECT_EQ(small.tile_bm, 64);
  EXPECT_EQ(small.tile_bn, 128);
  EXPECT_EQ(small.splits, 1);
  // 1000³: K = 1000 rows straddle 128-byte lines, so not the 128×64 tile that reads the most bytes per
  // flop: 64 tiles of 128×128 (the 128×256 and 128×192 tiles are fewer and as many rounds, but larger).
  EXPECT_EQ(ch11::choose(problem({1000, 1000, 1000}, "RCR"), 132).tile_bn, 128);
  EXPECT_EQ(ch11::choose(problem({1024, 1024, 1000}, "RCR"), 132).tile_bn, 128);
  // M = 128 against an 8192×8192 layer: 128 tiles of 128×64 (run as 64×128).
  EXPECT_EQ(ch11::kTileShapes[ch11::choose_tile_shape(problem({128, 8192, 8192}, "RCR"), 132)].bn, 64);
  EXPECT_EQ(ch11::choose(problem({128, 8192, 8192}, "RCR"), 132).tile_bn, 128);
  // 256×512 with K = 8192: 16 tiles of 128×64 for 132 SMs, 128 K steps: split 8 ways.
  const ch11::Choice deep = ch11::choose(problem({256, 512, 8192}, "RCR"), 132);
  EXPECT_EQ(deep.kernel, ch11::Choice::split_k);
  EXPECT_EQ(deep.tile_bn, 64);
  EXPECT_EQ(deep.splits, 8);
  // Every SM count gets a valid choice.
  for (int sms : {1, 8, 78, 114, 132, 144})
    for (const Size& s : kSizes) {
      const ch11::Choice c = ch11::choose(problem(s, "RCR"), sms);
      EXPECT_GE(c.splits, 1);
      if (c.kernel != ch11::Choice::swap_ab) EXPECT_EQ(c.kernel == ch11::Choice::split_k, c.splits > 1);
      EXPECT_LE(c.splits, std::max<std::int64_t>(1, (s.k + 63) / 64));
    }
}

TEST(ch11_Choice, OneConsumerFor128x64) {
  // Where the model picks 128×64 with K whole, every_shape runs 64×128 tiles with one consumer: the
  // small squares and M = 128 (measured 5-10 points ahead at each suite shape where it applies).
  // (128×6144×4096 takes step 10's 64×96 in RCR: StreamTilesAtM128.)
  for (const Size& s : {Size{512, 512, 512}, Size{1024, 1024, 1024}, Size{128, 8192, 8192}, Size{128, 8192, 28672}}) {
    const mm::GemmProblem p = problem(s, "RCR");
    ASSERT_EQ(ch11::kTileShapes[ch11::choose_tile_shape(p, 132)].bn, 64) << mm::test::size_name(s);
    const ch11::Choice c = ch11::choose(p, 132);
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bm, 64) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bn, 128) << mm::test::size_name(s);
  }
  // Not when K is split (128×4096×4096: split_k 128×64 in 2 slices), nor for other tiles (1000³).
  const ch11::Choice split = ch11::choose(problem({128, 4096, 4096}, "RCR"), 132);
  EXPECT_EQ(split.kernel, ch11::Choice::split_k);
  EXPECT_EQ(split.tile_bm, 128);
  EXPECT_EQ(split.tile_bn, 64);
  EXPECT_EQ(ch11::choose(problem({1000, 1000, 1000}, "RCR"), 132).tile_bm, 128);
  // RRR, where the any-shape path stages nothing and TMA stores C: the same rule, B MN-major
  // (tile_shapes' kernel with B MN-major); not where C is stored by the registers.
  for (const Size& s : {Size{512, 512, 512}, Size{1024, 1024, 1024}, Size{128, 6144, 4096}, Size{128, 8192, 8192}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RRR"), 132);
    EXPECT_TRUE(c.any_shape && c.plan.b_mn_major && !c.plan.c_strided) << mm::test::size_name(s);
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bm, 64) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bn, 128) << mm::test::size_name(s);
    EXPECT_EQ(c.splits, 1) << mm::test::size_name(s);
  }
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  EXPECT_EQ(ch11::choose(problem({512, 512, 512}, "RRR"), 132, ch11::kAligned, ch11::kAligned, off).tile_bm, 128);
}

TEST(ch11_Choice, NoL2PromotionAtDecode) {
  // Step 6: the operand maps of a problem of M <= 64 rows ask the L2 for no more than a box row's bytes
  // (the 256-byte promotion read a quarter more L2 sectors than cuBLAS at decode); larger M keeps 256.
  for (std::int64_t m : {1, 16, 17, 63, 64}) EXPECT_EQ(ch11::l2_promotion_for(m), mm::TmaL2Promotion::none) << m;
  for (std::int64_t m : {65, 128, 4096}) EXPECT_EQ(ch11::l2_promotion_for(m), mm::TmaL2Promotion::b256) << m;
}

TEST(ch11_Choice, MidDecodeTakesOne64x128TilePerSm) {
  // 33-64 rows, 64 to 132 tiles of 128 columns: one consumer per 64×128 tile of C, K whole.
  for (const auto& [m, n, k] : {std::tuple{64, 10240, 8192}, {64, 11008, 4096}, {33, 8192, 8192}, {48, 14336, 4096}}) {
    const ch11::Choice c = ch11::choose(problem({m, n, k}, "RCR"), 132);
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.tile_bm, 64) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.tile_bn, 128) << m << "x" << n << "x" << k;
  }
  // Not at M <= 32, not with fewer than 64 tiles (N = 6144: 48; step 12's 64×48 tile there) or more than
  // one round (N = 17024: 133), not when N is wide enough for wide_decode (28672).
  for (const auto& [m, n, k] : {std::tuple{32, 11008, 4096}, {64, 17024, 4096}, {16, 10240, 8192}})
    EXPECT_EQ(ch11::choose(problem({m, n, k}, "RCR"), 132).kernel, ch11::Choice::swap_ab) << m << "x" << n << "x" << k;
  EXPECT_EQ(ch11::choose(problem({64, 6144, 4096}, "RCR"), 132).tile_bn, 48);
  EXPECT_EQ(ch11::choose(problem({64, 28672, 8192}, "RCR"), 132).tile_bn, 256);
  // RRR the same (tile_shapes' kernel with B MN-major), and its wide decode too.
  const ch11::Choice rrr = ch11::choose(problem({64, 11008, 4096}, "RRR"), 132);
  EXPECT_TRUE(rrr.any_shape && rrr.kernel == ch11::Choice::tile_shapes && rrr.tile_bm == 64 && rrr.tile_bn == 128);
  const ch11::Choice wide = ch11::choose(problem({17, 28672, 4096}, "RRR"), 132);
  EXPECT_TRUE(wide.any_shape && wide.kernel == ch11::Choice::tile_shapes && wide.tile_bm == 64 && wide.tile_bn == 256);
  EXPECT_EQ(ch11::choose(problem({1, 28672, 4096}, "RRR"), 132).kernel, ch11::Choice::swap_ab);  // M <= 16
  EXPECT_EQ(ch11::choose(problem({32, 11008, 4096}, "RRR"), 132).kernel, ch11::Choice::swap_ab);
  // N % 8 != 0 (C by the registers, B staged): swap_ab's kernel.
  EXPECT_EQ(ch11::choose(problem({64, 11009, 4096}, "RRR"), 132).kernel, ch11::Choice::swap_ab);
}

TEST(ch11_Choice, ATieGoesToTheFullerRounds) {
  // 512×28672×4096: 600 tiles of 128×192 in 5 rounds (91% of them busy) against 896 of 128×128 in 7
  // (97%): modeled 3.788 against 3.804, within 1%, so the fuller rounds win (both orders, both K; then
  // every_shape takes step 9's 128×176, in RRR since step 13: FillTilesWhereTheyFillTheRounds).
  auto tile_bn = [](const Size& s) { return ch11::kTileShapes[ch11::choose_tile_shape(problem(s, "RCR"), 132)].bn; };
  for (const Size& s : {Size{512, 28672, 4096}, Size{512, 28672, 8192}, Size{1024, 14336, 4096}, Size{256, 57344, 4096}}) {
    EXPECT_EQ(tile_bn(s), 128) << mm::test::size_name(s);
    const ch11::Choice c = ch11::choose(problem(s, "RRR"), 132);
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bm, 128) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bn, 176) << mm::test::size_name(s);
    EXPECT_EQ(c.splits, 1) << mm::test::size_name(s);
  }
  // Not ties: 512×10240×8192 (128×192 in 2 rounds, 1.52, against 128×128 in 3, 1.63), 3072³ (3 rounds
  // of 128×192, 2.27, against 5 of 128×128, 2.72), 8192³ (128×192's 21 rounds, 99% full, 15.91, against
  // 128×256's 16, 97%, 16.0: the fuller one is the faster already).
  EXPECT_EQ(tile_bn({512, 10240, 8192}), 192);
  EXPECT_EQ(ch11::choose(problem({3072, 3072, 3072}, "RCR"), 132).tile_bn, 192);
  EXPECT_EQ(ch11::choose(problem({8192, 8192, 8192}, "RCR"), 132).tile_bn, 192);
  EXPECT_EQ(ch11::choose(problem({4096, 4096, 4096}, "RCR"), 132).tile_bn, 256);
  // The rule itself: a tie within kTileTie goes to rounds fuller by kFullerRounds, either way round.
  const GemmProblem p = problem({512, 28672, 4096}, "RCR");
  const ch11::TileShape t192 = ch11::kTileShapes[1], t128 = ch11::kTileShapes[2];
  EXPECT_LT(ch11::modeled_time(p, t192, 132), ch11::modeled_time(p, t128, 132));
  EXPECT_NEAR(ch11::rounds_filled(p, t192, 132), 600.0 / 660.0, 1e-12);
  EXPECT_NEAR(ch11::rounds_filled(p, t128, 132), 896.0 / 924.0, 1e-12);
  EXPECT_TRUE(ch11::better_tile(p, t128, t192, 132));
  EXPECT_FALSE(ch11::better_tile(p, t192, t128, 132));
}

TEST(ch11_Choice, FillTilesWhereTheyFillTheRounds) {
  // Step 9: every_shape takes 128×160 or 128×176 (RCR, K whole) where the model prefers them to the
  // tiles of kTileShapes: 512×10240 (256 tiles of 128×160 in 2 rounds, 97% full, against 216 of 128×192,
  // 82%), 512×11008 (252 of 128×176, 95%, against 232, 88%), 512×28672 (652 of 128×176 in 5 rounds
  // against step 8's 896 of 128×128 in 7).
  for (const auto& [s, bn] : {std::pair{Size{512, 10240, 8192}, 160}, {Size{512, 10240, 4096}, 160},
                              {Size{512, 11008, 4096}, 176}, {Size{512, 28672, 4096}, 176}, {Size{512, 28672, 8192}, 176}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_TRUE(c.kernel == ch11::Choice::tile_shapes && c.tile_bm == 128 && c.tile_bn == bn && c.splits == 1 && !c.any_shape)
        << mm::test::size_name(s) << ": " << c.tile_bm << "x" << c.tile_bn << " x" << c.splits;
  }
  // Where the model keeps its tile: 4096³ (128×256), 3072³ and 8192³ (128×192), 512×4096×4096 (128×128),
  // the small squares (64×128 with one consumer), split K (128×4096×4096).
  for (const auto& [s, bn] : {std::pair{Size{4096, 4096, 4096}, 256}, {Size{3072, 3072, 3072}, 192}, {Size{8192, 8192, 8192}, 192},
                              {Size{512, 4096, 4096}, 128}, {Size{1024, 1024, 1024}, 128}, {Size{128, 4096, 4096}, 64}})
    EXPECT_EQ(ch11::choose(problem(s, "RCR"), 132).tile_bn, bn) << mm::test::size_name(s);
  // RRR's plain any-shape path takes them too (step 13: B MN-major, its last 64-column panel read in
  // part); a misaligned A (staged by any_shape's path) does not.
  for (const auto& [s, bn] : {std::pair{Size{512, 10240, 8192}, 160}, {Size{512, 11008, 4096}, 176}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RRR"), 132);
    EXPECT_TRUE(c.kernel == ch11::Choice::tile_shapes && c.tile_bm == 128 && c.tile_bn == bn && c.splits == 1 && c.any_shape &&
                c.plan.b_mn_major && !c.plan.stage_a && !c.plan.stage_b)
        << mm::test::size_name(s) << ": " << c.tile_bm << "x" << c.tile_bn << " x" << c.splits;
  }
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  EXPECT_EQ(ch11::choose(problem({512, 10240, 8192}, "RCR"), 132, off).tile_bn, 192);
  // The table: N a multiple of 16, not of 64 (the epilogue's narrow last piece), and with_fill_tile's tiles.
  for (int i = 0; i < int(std::size(ch11::kFillTiles)); ++i) {
    EXPECT_EQ(ch11::kFillTiles[i].bn % 16, 0);
    EXPECT_NE(ch11::kFillTiles[i].bn % 64, 0);
    EXPECT_EQ(ch11::with_fill_tile(i, [](auto cfg) { return int(decltype(cfg)::BN::value); }), ch11::kFillTiles[i].bn);
  }
}

TEST(ch11_Choice, StreamTilesAtM128) {
  // Step 10: at 64 < M <= 128 (RCR, K whole) every_shape takes 128×96 or 64×96 where their rounds
  // stream B in at least 5% less time (stream_cost: rounds × (BM + BN)): 128×11008 (115 tiles of 128×96
  // in one round, 224, against 86 of 128×128, 256), 128×10240 (107 against 80), 128×6144 (128 tiles of
  // 64×96, 160, against 96 of 64×128, 192).
  for (const auto& [s, bm] : {std::pair{Size{128, 11008, 4096}, 128}, {Size{128, 10240, 8192}, 128},
                              {Size{100, 11008, 4096}, 128}, {Size{128, 6144, 4096}, 64}, {Size{65, 6144, 4096}, 64}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_TRUE(c.kernel == ch11::Choice::tile_shapes && c.tile_bm == bm && c.tile_bn == 96 && c.splits == 1 && !c.any_shape)
        << mm::test::size_name(s) << ": " << c.tile_bm << "x" << c.tile_bn << " x" << c.splits;
  }
  const mm::GemmProblem p = problem({128, 11008, 4096}, "RCR");
  EXPECT_EQ(ch11::stream_cost(p, 128, 128, 132), 256.0);
  EXPECT_EQ(ch11::stream_cost(p, 128, 96, 132), 224.0);
  EXPECT_EQ(ch11::stream_cost(p, 64, 96, 132), 2 * 160.0);  // 230 tiles: 2 rounds
  // Where the chosen tile streams as fast: 128×14336 (112 tiles of 128×128; 150 of 128×96 take 2
  // rounds), 128×8192×8192 (128 of 64×128, one round), 128×28672 and 128×57344 (128×256), split K
  // (128×4096×4096), M > 128 and M <= 64 (other rules).
  for (const auto& [s, bm, bn] : {std::tuple{Size{128, 14336, 4096}, 128, 128}, {Size{128, 8192, 8192}, 64, 128},
                                  {Size{128, 28672, 8192}, 128, 256}, {Size{128, 57344, 8192}, 128, 256},
                                  {Size{128, 4096, 4096}, 128, 64}, {Size{256, 11008, 4096}, 128, 176},
                                  {Size{129, 11008, 4096}, 128, 176}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_TRUE(c.tile_bm == bm && c.tile_bn == bn) << mm::test::size_name(s) << ": " << c.tile_bm << "x" << c.tile_bn;
  }
  EXPECT_EQ(ch11::choose_stream_tile(problem({64, 11008, 4096}, "RCR"), 128, 128, 132), -1);
  // Only tile_shapes' kernel on operands where they lie: not RRR (any_shape's path, B MN-major: a
  // 96-column tile would read a third more of B, its second 64-column panel whole; step 13 measured it
  // 2-8% slower), not a misaligned A (staged).
  EXPECT_EQ(ch11::choose(problem({128, 11008, 4096}, "RRR"), 132).tile_bn, 128);
  EXPECT_EQ(ch11::choose(problem({128, 6144, 4096}, "RRR"), 132).tile_bn, 128);
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  EXPECT_NE(ch11::choose(problem({128, 11008, 4096}, "RCR"), 132, off).tile_bn, 96);
  // The table and with_stream_tile's tiles.
  for (int i = 0; i < int(std::size(ch11::kStreamTiles)); ++i) {
    EXPECT_EQ(ch11::with_stream_tile(i, [](auto cfg) { return int(decltype(cfg)::BM::value); }), ch11::kStreamTiles[i].bm);
    EXPECT_EQ(ch11::with_stream_tile(i, [](auto cfg) { return int(decltype(cfg)::BN::value); }), ch11::kStreamTiles[i].bn);
  }
}

TEST(ch11_Choice, DecodeStreamTileWhereItsRoundHasMoreUnits) {
  // Step 12: at 33-64 rows (RCR, C by TMA) every_shape takes a 64×48 tile with one consumer and K whole
  // where its one round streams B on more SMs than swap_ab's choice, by modeled_swap_time with the rate
  // full only when every SM streams. 64×6144×4096: 128 tiles against swap_ab's 96 of 64 rows, unsplit
  // (measured 18.2 against 19.9 µs); 64×4400×4096: 92 against 69 (17.6 against 18.8); M = 33 and 48 the
  // same, and K = 8192; at small K where swap_ab does not split (33×4104×520: 86 against 65); 6336 =
  // 132·48, the widest N in one round.
  for (const Size& s : {Size{64, 6144, 4096}, Size{64, 4400, 4096}, Size{48, 6144, 4096}, Size{33, 6144, 4096},
                        Size{64, 6144, 8192}, Size{50, 4440, 1032}, Size{33, 4104, 520}, Size{64, 6336, 4096}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_TRUE(c.kernel == ch11::Choice::tile_shapes && c.tile_bm == 64 && c.tile_bn == 48 && c.splits == 1 && !c.any_shape &&
                !c.aligned_rows)
        << mm::test::size_name(s) << ": " << c.kernel << " " << c.tile_bm << "x" << c.tile_bn << " x" << c.splits;
  }
  // The model's numbers at 64×6144×4096: swap_ab's 96 units are 96/132 of the SMs, the tile's 128 are
  // 128/132 (63.9 against 81.2 MB, 21% less). Saturating at kStreamingUnits both stream at the full rate
  // and tie (62.3 MB): swap_ab's own slices still count from there (choose_swap_splits, unchanged).
  const mm::GemmProblem p = problem({64, 6144, 4096}, "RCR");
  const ch11::Choice swap = ch11::swap_choice(p, 132);
  ASSERT_TRUE(swap.kernel == ch11::Choice::swap_ab && swap.tile_bm == 64 && swap.tile_bn == 64 && swap.splits == 1);
  const double swap_time = ch11::modeled_swap_time(p, 64, 96, 1, 132, 132), tile_time = ch11::modeled_tile_stream_time(p, 64, 48, 132, 132);
  EXPECT_NEAR(tile_time / swap_time, 0.787, 0.001);
  EXPECT_EQ(ch11::modeled_swap_time(p, 64, 96, 1, 132), ch11::modeled_tile_stream_time(p, 64, 48, 132));
  EXPECT_EQ(ch11::choose_decode_tile(p, swap, 132), 0);
  // 64×4096×4096: swap_ab's 2 slices make 128 units, the tile's 86 fewer (63.5 against 50.8 MB; measured
  // 17.3 against 16.6 µs): swap_ab. The same at M = 33 and 48, K = 8192, 11008 and 14336 (the 2 slices
  // measured 24.9 and 29.9 µs against the tile's 28.9 and 36.6), and where the tile's edge (64×4288:
  // 90 tiles against swap_ab's 102 units of 128×64 in 3 slices) saves under kStreamGain.
  const mm::GemmProblem q = problem({64, 4096, 4096}, "RCR");
  const ch11::Choice split = ch11::swap_choice(q, 132);
  ASSERT_TRUE(split.kernel == ch11::Choice::swap_ab && split.tile_bm == 64 && split.tile_bn == 64 && split.splits == 2);
  EXPECT_NEAR(ch11::modeled_tile_stream_time(q, 64, 48, 132, 132) / ch11::modeled_swap_time(q, 64, 64, 2, 132, 132), 1.250, 0.001);
  EXPECT_EQ(ch11::choose_decode_tile(q, split, 132), -1);
  // Two rounds of tiles are never taken: at 64×11008×4096 the model prefers 230 tiles of 64×48 (127.5
  // against swap_ab's 150.4 MB), which ran 29.9 µs against swap_ab's 28.1 (mid_decode takes that shape
  // first); 64×6344 makes 133 tiles.
  const mm::GemmProblem wide = problem({64, 11008, 4096}, "RCR");
  const ch11::Choice rows128 = ch11::swap_choice(wide, 132);
  ASSERT_TRUE(rows128.tile_bm == 128 && rows128.splits == 1);
  EXPECT_LT(ch11::modeled_tile_stream_time(wide, 64, 48, 132, 132), 0.9 * ch11::modeled_swap_time(wide, 64, 86, 1, 132, 132));
  EXPECT_EQ(ch11::choose_decode_tile(wide, rows128, 132), -1);
  // Unchanged (swap_ab): the above, at M <= 32 and M > 64, where C cannot be stored by TMA (N % 8 != 0,
  // a misaligned C), and in RRR (B MN-major comes in boxes of 64 columns); where mid_decode or
  // wide_decode hold (64×8192×8192, 64×11008, 64×14336, 64×28672), their tiles.
  for (const Size& s : {Size{64, 4096, 4096}, Size{48, 4096, 4096}, Size{33, 4096, 4096}, Size{64, 4096, 8192},
                        Size{64, 4096, 11008}, Size{64, 4096, 14336}, Size{64, 4288, 4096}, Size{64, 6344, 4096},
                        Size{32, 6144, 4096}, Size{64, 2048, 4096}, Size{64, 6148, 4096}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_EQ(c.kernel, ch11::Choice::swap_ab) << mm::test::size_name(s);
  }
  EXPECT_EQ(ch11::choose(problem({65, 4096, 4096}, "RCR"), 132).kernel, ch11::Choice::split_k);
  for (const auto& [s, bn] : {std::pair{Size{64, 8192, 8192}, 128}, {Size{64, 11008, 4096}, 128}, {Size{64, 14336, 4096}, 128},
                              {Size{64, 28672, 8192}, 256}})
    EXPECT_EQ(ch11::choose(problem(s, "RCR"), 132).tile_bn, bn) << mm::test::size_name(s);
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  EXPECT_EQ(ch11::choose(p, 132, ch11::kAligned, ch11::kAligned, off).kernel, ch11::Choice::swap_ab);
  const ch11::Choice rrr = ch11::choose(problem({64, 6144, 4096}, "RRR"), 132);
  EXPECT_TRUE(rrr.any_shape && rrr.kernel == ch11::Choice::swap_ab);
  // The table and with_decode_tile's tile.
  for (int i = 0; i < int(std::size(ch11::kDecodeTiles)); ++i) {
    EXPECT_EQ(ch11::with_decode_tile(i, [](auto cfg) { return int(decltype(cfg)::BM::value); }), ch11::kDecodeTiles[i].bm);
    EXPECT_EQ(ch11::with_decode_tile(i, [](auto cfg) { return int(decltype(cfg)::BN::value); }), ch11::kDecodeTiles[i].bn);
  }
}

TEST(ch11_Choice, MisalignedRowsAreCopiedWhereTheCopyPays) {
  // K % 16 != 0 (rows 16 bytes into a 32-byte sector) and the copy saves more than it costs: 7000³ and
  // 1312×4096×3000 are copied, then take the tiles 7040³ and K = 3008 would (aligned rows: any tile).
  // 4000²×3000 and 6000²×5000 too: measured, the copy ran 3% and 7% ahead of 192×192 in place.
  for (const Size& s :
       {Size{7000, 7000, 7000}, Size{1312, 4096, 3000}, Size{4000, 4000, 3000}, Size{6000, 6000, 5000}}) {
    const ch11::Choice c = ch11::choose(problem(s, "RCR"), 132);
    EXPECT_TRUE(c.aligned_rows) << mm::test::size_name(s);
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << mm::test::size_name(s);
    EXPECT_EQ(c.tile_bm, 128) << mm::test::size_name(s);
  }
  // Step 15: where 192×192 tiles in clusters of 2 finish first in place (at 3000³ two rounds, against
  // the copy and three rounds of 128×192), they read the rows where they lie.
  for (std::int64_t s : {3000, 3064, 5000}) {
    const ch11::Choice c = ch11::choose(problem({s, s, s}, "RCR"), 132);
    EXPECT_FALSE(c.aligned_rows) << s;
    EXPECT_EQ(c.kernel, ch11::Choice::tile_shapes) << s;
    EXPECT_TRUE(c.tile_bm == 192 && c.tile_bn == 192) << s;
  }
  // Not copied: 1000³ and 1024×1024×1000 (the copy would cost more than it saves), K % 16 == 0 (6000³,
  // 2992³: rows on 32-byte sectors), decode (M = 16).
  for (const Size& s : {Size{1000, 1000, 1000}, Size{1024, 1024, 1000}, Size{6000, 6000, 6000}, Size{2992, 2992, 2992},
                        Size{16, 4096, 4104}})
    EXPECT_FALSE(ch11::choose(problem(s, "RCR"), 132).aligned_rows) << mm::test::size_name(s);
}

TEST(ch11_Choice, SplitsNeverEmpty) {
  // A slice count that does not divide the K steps still leaves every slice at least one step.
  for (int k_steps : {1, 2, 3, 7, 64, 65, 129})
    for (int wanted : {1, 2, 3, 4, 5, 16, 200}) {
      const auto s = mm::SplitKTileScheduler::make({1, 1, 1}, k_steps, wanted);
      EXPECT_LE(s.splits, wanted);
      for (std::int64_t i = 0; i < s.size(); ++i) EXPECT_LT(s.unit(i).k_begin, s.unit(i).k_end) << k_steps << " " << wanted;
    }
}

// ---- What the chapter does not take: refused up front, with the rule, before any GPU work ----

TEST(ch11_Launch, RefusesOtherStorageOrdersAndWhatTmaCannotDescribe) {
  // Every step but those that take any shape (any_shape.cuh's path and plain loads take these:
  // ch11_AnyShape and ch11_RaggedDecode below).
  for (const auto& k : kSteps) {
    if (takes_any_shape(k.name)) continue;
    if (!takes_rrr(k.name)) EXPECT_NE(k.rejects(problem({64, 64, 64}, "RRR")).find("takes RCR only"), std::string::npos) << k.name;
    EXPECT_NE(k.rejects(problem({17, 33, 9}, "RCR")).find("K % 8 == 0"), std::string::npos) << k.name;
    try {
      k.launch(problem({17, 33, 9}, "RCR"), nullptr, nullptr, nullptr, nullptr);
      ADD_FAILURE() << k.name << ": 17x33x9 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("K % 8 == 0"), std::string::npos) << k.name << ": " << e.what();
    }
  }
  // The steps that store C by TMA need N % 8 == 0; swap_ab and narrow_tiles (register stores) take any N.
  for (const auto& k : kSteps) {
    const std::string why = k.rejects(problem({16, 129, 64}, "RCR"));
    if (k.name.rfind("swap_ab", 0) == 0 || k.name == "narrow_tiles" || takes_any_shape(k.name)) EXPECT_EQ(why, "") << k.name;
    else EXPECT_NE(why.find("N % 8 == 0"), std::string::npos) << k.name << ": " << why;
  }
}

TEST(ch11_Launch, EveryStepRefusesAMisalignedA) {
  const GemmProblem p = problem({128, 256, 64}, "RCR");
  const auto* a = reinterpret_cast<const bf16*>(std::uintptr_t(0x10000) + 2);
  const auto* b = reinterpret_cast<const bf16*>(std::uintptr_t(0x20000));
  auto* c = reinterpret_cast<bf16*>(std::uintptr_t(0x30000));
  for (const auto& k : kSteps) {
    if (!k.rejects(p).empty() || takes_any_shape(k.name)) continue;  // every_shape stages it (ch11_AnyShape)
    try {
      k.launch(p, a, b, c, nullptr);
      ADD_FAILURE() << k.name << ": a pointer 2 bytes past a 16-byte boundary was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << k.name << ": " << e.what();
    }  // (a std::runtime_error, such as "cannot read the GPU's SM count" without a GPU, fails the test:
       // every step refuses the pointer before it asks the GPU anything)
  }
}

TEST(ch11_Gemm, SkinnyOddNAndMisalignedB) {
  // swap_ab stores C with plain stores: an odd N and a C 2 bytes off are fine; a misaligned B is not.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  for (const auto& k : kSteps)
    if (k.name.rfind("swap_ab", 0) == 0 || takes_any_shape(k.name)) {
      expect_matches_fp64(k, problem({5, 1, 8}, "RCR"));
      expect_matches_fp64(k, problem({16, 1001, 96}, "RCR"));
    }
  const GemmProblem p = problem({16, 256, 64}, "RCR");
  mm::DeviceBuffer<bf16> a(p.m * p.k), b(p.k * p.n + 8), c(p.m * p.n + 8);
  for (const auto& k : kSteps) {
    if (takes_any_shape(k.name)) continue;  // stage B (ch11_AnyShape) or read it in place
    try {
      k.launch(p, a.data(), b.data() + 1, c.data(), nullptr);
      if (k.rejects(p).empty()) ADD_FAILURE() << k.name << ": a B 2 bytes past a 16-byte boundary was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("16-byte"), std::string::npos) << k.name << ": " << e.what();
    }
  }
}

// ---- every_shape at any shape (any_shape.cuh): both storage orders, any K and N, any address ----

// M, N, K from {1, 2, 7, 8, 9, 15, 17, 63, 65, 127, 129} crossed sparsely with the tile edges (64 and
// 128 rows, 64 to 256 columns, K steps of 64 and 128), K much larger than M×N, and the odd sizes of
// big problems (a wave of tiles past the edge, K and N not multiples of 8).
const std::vector<Size> kAnySizes = {
    {1, 1, 1},      {2, 7, 9},       {7, 8, 15},       {9, 17, 63},      {15, 65, 127},    {17, 129, 1},
    {63, 2, 129},   {65, 9, 8},      {127, 15, 17},    {129, 63, 2},     {8, 127, 65},     {1, 257, 7},
    {64, 255, 129}, {65, 257, 63},   {128, 193, 9},    {129, 129, 129},  {7, 9, 20011},    {3, 5, 70001},
    {200, 1, 300},  {1, 1001, 4095}, {16, 4097, 1031}, {300, 1003, 999}, {1000, 1001, 999}, {4095, 33, 17},
};

using AnyParam = std::tuple<Size, std::string>;
class AnyShape : public ::testing::TestWithParam<AnyParam> {};
TEST_P(AnyShape, EveryShapeMatchesFp64) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [size, layout] = GetParam();
  expect_matches_fp64(mm::test::step_named(kSteps, "every_shape"), problem(size, layout), 17);
}
INSTANTIATE_TEST_SUITE_P(ch11, AnyShape, ::testing::Combine(::testing::ValuesIn(kAnySizes), ::testing::Values("RCR", "RRR")),
                         mm::test::param_name);

/// every_shape's launch on copies of A, B and C that start `shift` bf16 values past cudaMalloc's
/// 256-byte alignment (C copied in first, poison and all, and back out after).
mm::GemmLaunch<bf16, bf16> shifted(mm::GemmLaunch<bf16, bf16> inner, int shift_a, int shift_b, int shift_c) {
  return [=](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, cudaStream_t s) {
    const std::size_t na = std::size_t(p.m * p.k), nb = std::size_t(p.k * p.n), nc = std::size_t(p.m * p.n);
    mm::DeviceBuffer<bf16> a1(na + 8), b1(nb + 8), c1(nc + 8);
    MM_CUDA_CHECK(cudaMemcpyAsync(a1.data() + shift_a, a, na * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(b1.data() + shift_b, b, nb * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(c1.data() + shift_c, c, nc * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
    inner(p, a1.data() + shift_a, b1.data() + shift_b, c1.data() + shift_c, s);
    MM_CUDA_CHECK(cudaMemcpyAsync(c, c1.data() + shift_c, nc * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
    MM_CUDA_CHECK(cudaStreamSynchronize(s));  // before the scratch buffers are freed
  };
}

TEST(ch11_AnyShape, OperandsOffSixteenByteBoundaries) {
  // Each operand 2, 4 or 8 bytes past a 16-byte boundary (a tensor's storage offset in PyTorch): TMA
  // cannot hold it, so every_shape stages A or B, or stores C by the registers; sizes TMA takes
  // otherwise, so that only the address sends them there.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  for (const char* layout : {"RCR", "RRR"})
    for (const Size& s : {Size{16, 1024, 512}, Size{300, 512, 256}, Size{1, 264, 64}})
      for (const auto& [sa, sb, sc] : {std::tuple{1, 0, 0}, std::tuple{0, 2, 0}, std::tuple{0, 0, 4}, std::tuple{1, 1, 1}}) {
        const GemmProblem p = problem(s, layout);
        const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, shifted(every.launch, sa, sb, sc), every.dtype, 19);
        EXPECT_TRUE(r.ok) << layout << " " << mm::test::size_name(s) << " shifts " << sa << "," << sb << "," << sc << ": "
                          << r.summary;
      }
}

TEST(ch11_AnyShape, TheRulesEachPathFollows) {
  // CPU: which operand is staged, when C is stored by the registers, and that what TMA takes as it is
  // stays on the chapter's kernels.
  const auto* aligned = ch11::kAligned;
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  auto plan = [&](const Size& s, const char* layout, const void* a = ch11::kAligned, const void* b = ch11::kAligned,
                  const void* c = ch11::kAligned) { return ch11::choose(problem(s, layout), 132, a, b, c); };
  // RCR that TMA takes: not the any-shape path.
  EXPECT_FALSE(plan({4096, 4096, 4096}, "RCR").any_shape);
  EXPECT_FALSE(plan({16, 4096, 4096}, "RCR").any_shape);
  EXPECT_FALSE(plan({16, 4097, 4096}, "RCR").any_shape);  // swap_ab stores C by the registers: any N
  // RRR: B MN-major, nothing staged when N % 8 == 0.
  const ch11::Choice rrr = plan({4096, 4096, 4096}, "RRR");
  EXPECT_TRUE(rrr.any_shape && rrr.plan.b_mn_major && !rrr.plan.stage_a && !rrr.plan.stage_b && !rrr.plan.c_strided);
  EXPECT_EQ(rrr.kernel, ch11::Choice::tile_shapes);  // K whole, C by TMA: tile_shapes' kernel, B MN-major
  EXPECT_EQ(rrr.splits, 1);
  // C stored by the registers: split_k's kernel, one slice.
  const ch11::Choice strided = plan({4096, 4096, 4096}, "RRR", ch11::kAligned, ch11::kAligned,
                                    reinterpret_cast<const void*>(std::uintptr_t(256 + 2)));
  EXPECT_TRUE(strided.any_shape && strided.plan.c_strided && strided.kernel == ch11::Choice::split_k && strided.splits == 1);
  // K % 8 != 0: A staged, and B in RCR (its rows are K long), not in RRR (they are N long).
  const ch11::Choice k_rcr = plan({1000, 1000, 999}, "RCR"), k_rrr = plan({1000, 1000, 999}, "RRR");
  EXPECT_TRUE(k_rcr.plan.stage_a && k_rcr.plan.stage_b && !k_rcr.plan.c_strided);
  EXPECT_TRUE(k_rrr.plan.stage_a && !k_rrr.plan.stage_b && !k_rrr.plan.c_strided);
  // RRR at 3000³: rows of A (K) and B (N) 16 bytes into a sector, a problem big enough for the copy
  // to pay (aligned_rows.cuh's model): both staged, as RCR's aligned_rows copies both.
  const ch11::Choice big_rrr = plan({3000, 3000, 3000}, "RRR");
  EXPECT_TRUE(big_rrr.plan.stage_a && big_rrr.plan.stage_b && !big_rrr.plan.c_strided);
  // N % 8 != 0: C by the registers; B staged in RRR only.
  const ch11::Choice n_rcr = plan({1000, 1001, 1000}, "RCR"), n_rrr = plan({1000, 1001, 1000}, "RRR");
  EXPECT_TRUE(!n_rcr.plan.stage_a && !n_rcr.plan.stage_b && n_rcr.plan.c_strided);
  EXPECT_TRUE(!n_rrr.plan.stage_a && n_rrr.plan.stage_b && n_rrr.plan.c_strided);
  // M <= 64 off the TMA kernels: swap_ab's tile, its own K slices (a staged B at M <= 16 in RCR and
  // M <= 8 in RRR: ragged_decode, below).
  const ch11::Choice decode = plan({17, 4096, 4095}, "RCR");
  EXPECT_TRUE(decode.any_shape && decode.plan.stage_a && decode.plan.stage_b);
  EXPECT_EQ(decode.kernel, ch11::Choice::swap_ab);
  // An address off a 16-byte boundary stages that operand (or stores C by the registers), alone.
  const ch11::Choice a_off = plan({4096, 4096, 4096}, "RCR", off, aligned, aligned);
  EXPECT_TRUE(a_off.any_shape && a_off.plan.stage_a && !a_off.plan.stage_b && !a_off.plan.c_strided);
  const ch11::Choice c_off = plan({4096, 4096, 4096}, "RCR", aligned, aligned, off);
  EXPECT_TRUE(c_off.any_shape && !c_off.plan.stage_a && !c_off.plan.stage_b && c_off.plan.c_strided);
  EXPECT_FALSE(plan({16, 4096, 4096}, "RCR", aligned, aligned, off).any_shape);  // swap_ab: C by the registers
}

TEST(ch11_AnyShape, CopyRowsAtEveryOffset) {
  // The staging copy: rows starting 0 to 7 bf16 values past a 16-byte boundary (their aligned chunks
  // shifted), row lengths around the 16-byte chunks, the pitch and a warp's piece of 128 chunks, two
  // matrices in one launch (A and B): every value copied exactly, the last chunk's padding zeros,
  // nothing past it written.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  // 5 rows: pieces of 128 chunks; 1030: a warp a row (RowsCopy::piece).
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;  // rows, cols
  for (std::int64_t cols : {1, 7, 8, 9, 15, 16, 17, 23, 24, 40, 1001, 1024, 1025, 4100}) shapes.emplace_back(5, cols);
  for (std::int64_t cols : {1, 17, 1001, 2100}) shapes.emplace_back(1030, cols);  // 2100: two batches of 256 chunks
  for (int shift = 0; shift < 8; ++shift)
    for (const auto& [rows, cols] : shapes) {
      const int shift2 = (shift + 3) % 8;
      const std::int64_t ld_in = cols + (shift % 3), ld_out = ch11::staged_pitch(cols);
      std::vector<std::uint16_t> host(std::size_t(rows * ld_in + 8));
      for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::uint16_t(0x3f80 + (i * 37) % 1000);  // distinct finite bf16
      mm::DeviceBuffer<std::uint16_t> in(host);
      const std::vector<std::uint16_t> poison(std::size_t(rows * ld_out), 0xffff);
      mm::DeviceBuffer<std::uint16_t> out(poison), out2(poison);
      const auto* src = reinterpret_cast<const bf16*>(in.data());
      ch11::copy_rows<<<2, 64>>>(ch11::RowsCopy<bf16>{src + shift, reinterpret_cast<bf16*>(out.data()), rows, cols, ld_in, ld_out},
                                 ch11::RowsCopy<bf16>{src + shift2, reinterpret_cast<bf16*>(out2.data()), rows - 1, cols, ld_in, ld_out});
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<std::uint16_t> got = out.download(), got2 = out2.download();
      int bad = 0, bad2 = 0;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < ld_out; ++c) {
          auto want = [&](int s, std::int64_t rows_copied) -> std::uint16_t {
            if (r >= rows_copied) return 0xffff;
            return c < cols ? host[std::size_t(s + r * ld_in + c)] : c < (cols + 7) / 8 * 8 ? 0 : 0xffff;
          };
          bad += got[std::size_t(r * ld_out + c)] != want(shift, rows);
          bad2 += got2[std::size_t(r * ld_out + c)] != want(shift2, rows - 1);
        }
      EXPECT_EQ(bad, 0) << "shift " << shift << ", " << rows << " rows of " << cols;
      EXPECT_EQ(bad2, 0) << "second matrix, shift " << shift2 << ", " << rows - 1 << " rows of " << cols;
    }
}

// ---- ragged_decode (ragged_decode.cuh): M <= 16 with a B that TMA cannot read, read in place ----

TEST(ch11_RaggedDecode, EveryShapeTakesItWhereBWouldBeStaged) {
  // CPU: decode with B's rows off 16 bytes (N % 8 in RRR, K % 8 in RCR, or B's address): ragged_decode
  // at M <= 16 in RCR (mma.sync) and M <= 8 in RRR (16-byte chunks); past those, or where TMA reads B,
  // the staged or plain paths as before.
  const auto* off = reinterpret_cast<const void*>(std::uintptr_t(256 + 2));
  auto choose = [](const Size& s, const char* layout, const void* b = ch11::kAligned) {
    return ch11::choose(problem(s, layout), 132, ch11::kAligned, b, ch11::kAligned);
  };
  for (const Size& s : {Size{1, 11009, 4096}, Size{4, 4097, 4096}, Size{3, 9, 63}})
    EXPECT_EQ(choose(s, "RRR").kernel, ch11::Choice::ragged_decode) << mm::test::size_name(s);
  for (const Size& s : {Size{4, 4096, 4100}, Size{1, 11008, 4095}, Size{2, 1, 1}})
    EXPECT_EQ(choose(s, "RCR").kernel, ch11::Choice::ragged_decode) << mm::test::size_name(s);
  const ch11::Choice b_off = choose({1, 4096, 4096}, "RCR", off);  // B off a 16-byte boundary
  EXPECT_EQ(b_off.kernel, ch11::Choice::ragged_decode);
  EXPECT_TRUE(b_off.plan.stage_b && !b_off.any_shape);
  // B read by TMA: swap_ab (A staged in RRR at K = 4100: B's rows are N = 4096 long).
  EXPECT_EQ(choose({1, 4096, 4096}, "RCR").kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(choose({1, 11008, 4096}, "RRR").kernel, ch11::Choice::swap_ab);
  const ch11::Choice a_only = choose({1, 4096, 4100}, "RRR");
  EXPECT_TRUE(a_only.kernel == ch11::Choice::swap_ab && a_only.plan.stage_a && !a_only.plan.stage_b);
  // RCR M = 5 to 16: the mma.sync kernel; RRR M = 5 to 8: the chunks; RRR M = 9 to 16 (B read once per 4
  // rows of A) and M = 17 in both orders: swap_ab on staged rows.
  for (std::int64_t m : {5, 8, 9, 16, 17}) {
    const ch11::Choice rcr = choose({m, 4096, 4100}, "RCR"), rrr = choose({m, 11009, 4096}, "RRR");
    if (m <= 16) EXPECT_EQ(rcr.kernel, ch11::Choice::ragged_decode) << m;
    else EXPECT_TRUE(rcr.kernel == ch11::Choice::swap_ab && rcr.any_shape && rcr.plan.stage_b) << m;
    if (m <= 8) EXPECT_EQ(rrr.kernel, ch11::Choice::ragged_decode) << m;
    else EXPECT_TRUE(rrr.kernel == ch11::Choice::swap_ab && rrr.any_shape && rrr.plan.stage_b) << m;
  }
  EXPECT_EQ(choose({16, 4096, 4096}, "RCR", off).kernel, ch11::Choice::ragged_decode);
  EXPECT_EQ(choose({17, 4096, 4096}, "RCR", off).kernel, ch11::Choice::swap_ab);
  EXPECT_EQ(choose({12, 4096, 4096}, "RRR", off).kernel, ch11::Choice::swap_ab);
  const ch11::Choice decode = choose({4, 4096, 4095}, "RCR");
  EXPECT_TRUE(decode.kernel == ch11::Choice::ragged_decode && decode.plan.stage_a && decode.plan.stage_b);
  EXPECT_EQ(ch11::ragged_rows(1), 1);
  EXPECT_EQ(ch11::ragged_rows(3), 4);
  EXPECT_EQ(ch11::ragged_rows(9), 16);
  EXPECT_EQ(ch11::ragged_rows(100), 16);
  EXPECT_EQ(ch11::ragged_vector(4100, ch11::kAligned, ch11::kAligned), 4);
  EXPECT_EQ(ch11::ragged_vector(4100, ch11::kAligned, off), 1);
  EXPECT_EQ(ch11::ragged_vector(4098, ch11::kAligned, ch11::kAligned), 2);
  EXPECT_EQ(ch11::ragged_vector(4097, ch11::kAligned, ch11::kAligned), 1);
  // The mma kernel's warps: 16 while the blocks hold at most 24 warps an SM, halved down to 4, at most
  // K's steps of 64 values.
  EXPECT_EQ(ch11::ragged_mma_warps(128, 4100, 132), 16);  // 16x4096x4100: 128 blocks of 32 columns
  EXPECT_EQ(ch11::ragged_mma_warps(344, 4095, 132), 8);   // N = 11008
  EXPECT_EQ(ch11::ragged_mma_warps(4008, 4096, 132), 4);  // N = 128256
  EXPECT_EQ(ch11::ragged_mma_warps(128, 130, 132), 3);
  EXPECT_EQ(ch11::ragged_mma_warps(1, 1, 132), 1);
  // RRR's third form (16-byte chunks): K's slices fill the resident blocks once, 64 rows of B at least each.
  EXPECT_TRUE(ch11::ragged_chunks_take(problem({1, 11009, 4096}, "RRR")));
  EXPECT_FALSE(ch11::ragged_chunks_take(problem({1, 11009, 4096}, "RCR")));
  EXPECT_EQ(ch11::ragged_chunk_slices(45, 4096, 4 * 132), 11);   // 1×11009×4096: 45 blocks of 248 columns, 4 an SM
  EXPECT_EQ(ch11::ragged_chunk_slices(116, 8192, 4 * 132), 4);   // 1×28673×8192
  EXPECT_EQ(ch11::ragged_chunk_slices(17, 4096, 4 * 132), 31);   // 1×4097×4096
  EXPECT_EQ(ch11::ragged_chunk_slices(17, 640, 4 * 132), 10);    // K = 640: 64 rows a slice at least
  EXPECT_EQ(ch11::ragged_chunk_slices(1, 63, 4 * 132), 1);
  EXPECT_EQ(ch11::ragged_chunk_slices(600, 4096, 4 * 132), 1);   // more blocks than slots: K whole
}

// M from 1 to 16 crossed sparsely with N and K from {1, 7, 9, 63, 65, 127, 129, 4097} and their
// neighbours: a block's 248 columns (RRR, 16-byte chunks), 62 (RRR, 4-byte words), 32 (RCR mma) or 4 (the
// SIMT RCR) and its warps' K steps (8 rows of B 8 apart; 32 rows; 64 values) and K's slices cut short, K
// much larger than M×N (warps with nothing left to add), K % 4 = 0, 2 and odd (RCR's loads of 8, 4 and 2
// bytes), N odd and even (RRR's rows starting at every even byte of a 16-byte chunk, or on 4 bytes or 2
// bytes into a word), and the decode shapes of the suite, shrunk.
const std::vector<Size> kRaggedSizes = {
    {1, 1, 1},     {2, 7, 9},      {7, 9, 63},      {8, 63, 65},    {9, 65, 127},   {15, 127, 129},
    {16, 129, 7},  {1, 4097, 9},   {2, 9, 4097},    {16, 1, 20011}, {7, 3, 70001},  {1, 1001, 4095},
    {16, 4097, 1031}, {1, 11009, 64}, {16, 1000, 4100}, {9, 129, 1}, {4, 65, 129}, {3, 4097, 63},
    {5, 62, 4098},   {6, 63, 130},   {10, 124, 4100}, {11, 125, 70002}, {12, 2, 66},  {13, 33, 4094},
    {14, 1025, 516}, {5, 4100, 2},   {3, 126, 3},     {2, 61, 70001}, {12, 1000, 1000}, {1, 11008, 4098},
    {1, 249, 4097},  {4, 497, 1031},  {2, 248, 640},   {3, 1, 4099},
};

using RaggedParam = std::tuple<Size, std::string>;
class RaggedDecode : public ::testing::TestWithParam<RaggedParam> {};
TEST_P(RaggedDecode, MatchesFp64) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto& [size, layout] = GetParam();
  const GemmProblem p = problem(size, layout);
  expect_matches_fp64(mm::test::step_named(kSteps, "ragged_decode"), p, 23);
  // each form at every size, whatever the rules choose (RCR: mma.sync or SIMT; RRR: 16-byte chunks, 4-byte words or 2-byte loads)
  for (const ch11::RaggedForm form : {ch11::RaggedForm::simt, ch11::RaggedForm::second, ch11::RaggedForm::third}) {
    const mm::GemmLaunch<bf16, bf16> forced = [form](const GemmProblem& q, const bf16* a, const bf16* b, bf16* c, cudaStream_t st) {
      ch11::ragged_decode_form(q, a, b, c, form)(st);
    };
    const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, forced, mm::DType::bf16, 23);
    EXPECT_TRUE(r.ok) << layout << " " << mm::test::size_name(size) << " form " << int(form) << ": " << r.summary;
  }
}
INSTANTIATE_TEST_SUITE_P(ch11, RaggedDecode, ::testing::Combine(::testing::ValuesIn(kRaggedSizes), ::testing::Values("RCR", "RRR")),
                         mm::test::param_name);

TEST(ch11_RaggedDecode, AnyAddressAnyLoadWidthAndRowsPast16) {
  // A, B and C 2, 4 or 8 bytes past a 16-byte boundary (RCR's loads of 2, 4 or 8 bytes, whichever the
  // addresses allow; RRR's rows 2 bytes into a word), through every_shape (M <= 4 in both orders, M = 12
  // in RCR); and the kernel itself at M = 17 and 33 (grid.y's blocks of rows, the last one cut short),
  // which neither every_shape nor the step sends there.
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const auto every = mm::test::step_named(kSteps, "every_shape");
  for (const char* layout : {"RCR", "RRR"})
    for (const Size& s : {Size{4, 1001, 520}, Size{1, 263, 4100}, Size{3, 64, 64}, Size{12, 131, 4100}})
      for (const auto& [sa, sb, sc] : {std::tuple{1, 0, 0}, std::tuple{0, 1, 0}, std::tuple{0, 2, 1}, std::tuple{2, 2, 0},
                                       std::tuple{3, 3, 3}}) {
        const GemmProblem p = problem(s, layout);
        const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(p, shifted(every.launch, sa, sb, sc), every.dtype, 29);
        EXPECT_TRUE(r.ok) << layout << " " << mm::test::size_name(s) << " shifts " << sa << "," << sb << "," << sc << ": "
                          << r.summary;
      }
  for (const char* layout : {"RCR", "RRR"})  // each form on operands 2 or 6 bytes past 16 (RRR's rows 2 bytes into a word)
    for (const ch11::RaggedForm form : {ch11::RaggedForm::simt, ch11::RaggedForm::second, ch11::RaggedForm::third})
      for (const Size& s : {Size{3, 125, 4100}, Size{12, 131, 4097}})
        for (const auto& [sa, sb, sc] : {std::tuple{1, 1, 1}, std::tuple{0, 3, 2}}) {
          const mm::GemmLaunch<bf16, bf16> forced = [form](const GemmProblem& q, const bf16* a, const bf16* b, bf16* c,
                                                           cudaStream_t st) { ch11::ragged_decode_form(q, a, b, c, form)(st); };
          const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(problem(s, layout), shifted(forced, sa, sb, sc), mm::DType::bf16, 37);
          EXPECT_TRUE(r.ok) << layout << " " << mm::test::size_name(s) << " form " << int(form) << " shifts " << sa << "," << sb
                            << "," << sc << ": " << r.summary;
        }
  for (const ch11::RaggedForm form : {ch11::RaggedForm::simt, ch11::RaggedForm::second, ch11::RaggedForm::third}) {
    const mm::GemmLaunch<bf16, bf16> any_m = [form](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, cudaStream_t st) {
      ch11::ragged_decode_form(p, a, b, c, form)(st);
    };
    for (const char* layout : {"RCR", "RRR"})
      for (const Size& s : {Size{17, 65, 129}, Size{33, 9, 1000}, Size{17, 125, 4100}}) {
        const mm::CheckResult r = mm::check_gemm_kernel<bf16, bf16>(problem(s, layout), any_m, mm::DType::bf16, 31);
        EXPECT_TRUE(r.ok) << layout << " " << mm::test::size_name(s) << " form " << int(form) << ": " << r.summary;
      }
  }
}

TEST(ch11_AnyShape, RefusesWhatNoPathTakes) {
  // CPU: one line each, before any GPU work.
  const auto every = mm::test::step_named(kSteps, "every_shape");
  EXPECT_EQ(every.rejects(problem({17, 33, 9}, "RRR")), "");
  EXPECT_NE(every.rejects(problem({4, 4, 4}, "CRR")).find("row-major A and C"), std::string::npos);
  GemmProblem empty = problem({4, 4, 4}, "RCR");
  empty.k = 0;
  EXPECT_NE(every.rejects(empty).find(">= 1"), std::string::npos);
  const auto* odd = reinterpret_cast<const bf16*>(std::uintptr_t(0x10001));
  const auto* b = reinterpret_cast<const bf16*>(std::uintptr_t(0x20000));
  auto* c = reinterpret_cast<bf16*>(std::uintptr_t(0x30000));
  try {
    every.launch(problem({128, 256, 64}, "RCR"), odd, b, c, nullptr);
    ADD_FAILURE() << "an odd address was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2-byte aligned"), std::string::npos) << e.what();
  }
}

}  // namespace
