// Layout library: swizzled (composed) shared-memory tiles filled by TiledCopy and read by TiledMMA,
// every thread simulated on the CPU. The tile is chapter 07's: fp32, (MN, BK, stage) = (128, 8, 3),
// composition(Swizzle<3,2,5>, (128,8,3):(1,128,1024)). On the host the cp.async atoms are plain
// copies, so the tests can check that every value lands where the swizzled layout says.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

namespace {

using SmemLayout = decltype(composition(Swizzle<3, 2, 5>{}, make_layout(make_shape(_128{}, _8{}, _3{}))));

// Where (m, k, stage) lives: the column-major index m + 128 k + 1024 s with k (bits 7..9)
// XORed into bits 2..4, the 16-byte unit (4 floats) of m. Units move, the 4 floats inside stay.
int swizzled_index(int m, int k, int s) { return (m + 128 * k + 1024 * s) ^ ((k & 7) << 2); }

// 256 threads, each moving one float4 along MN: (32,8) threads x (4,1) values = the (128,8) tile.
template <class Op>
auto tile_copy() {
  return make_tiled_copy(Copy_Atom<Op, float>{}, Layout<Shape<_32, _8>>{}, Layout<Shape<_4, _1>>{});
}

}  // namespace

TEST(SwizzledTile, HasTheLayoutInterface) {
  SmemLayout sl;
  static_assert(std::is_same_v<SmemLayout::shape_type, Shape<_128, _8, _3>>, "shape_type is the inner layout's");
  static_assert(rank_v<SmemLayout::shape_type> == 3);
  static_assert(is_composed_layout_v<SmemLayout> && !is_composed_layout_v<Layout<_4, _1>>);
  EXPECT_EQ(int(size(sl)), 3072);
  EXPECT_EQ(cosize_v<SmemLayout>, 3072);  // 3 whole swizzle periods of 2^(3+2+5) = 1024
  EXPECT_EQ(to_string(sl), "Sw<3,2,5> o _0 o (_128,_8,_3):(_1,_128,_1024)");
  std::set<int> seen;
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k < 8; ++k)
      for (int m = 0; m < 128; ++m) {
        ASSERT_EQ(int(sl(m, k, s)), swizzled_index(m, k, s)) << m << "," << k << "," << s;
        seen.insert(int(sl(m, k, s)));
      }
  EXPECT_EQ(seen.size(), 3072u);  // a permutation of the buffer
  // A run-time stage slice keeps the swizzle exact: the offset stays before the XOR.
  int stage = 2;
  auto st = sl(_, _, stage);  // (128,8)
  static_assert(std::is_same_v<decltype(st)::shape_type, Shape<_128, _8>>);
  EXPECT_EQ(int(st(5, 3)), swizzled_index(5, 3, 2));
  // Mode access and a column: the layout functions of a Layout.
  EXPECT_EQ(to_string(layout<1>(sl)), "Sw<3,2,5> o _0 o _8:_128");
  EXPECT_EQ(to_string(get<0>(sl)), "Sw<3,2,5> o _0 o _128:_1");
  EXPECT_EQ(to_string(take<0, 2>(sl)), "Sw<3,2,5> o _0 o (_128,_8):(_1,_128)");
}

TEST(SwizzledTile, CoalesceUpcastDowncastTileToShape) {
  SmemLayout sl;
  // coalesce acts on the inner layout: the same function, fewest modes.
  auto c = coalesce(sl);
  EXPECT_EQ(to_string(c), "Sw<3,2,5> o _0 o _3072:_1");
  for (int i = 0; i < 3072; ++i) ASSERT_EQ(int(c(i)), int(sl(i)));
  EXPECT_EQ(to_string(coalesce(sl, Step<_1, _1, _1>{})), to_string(sl));
  // upcast<4>: float -> float4. Swizzle<3,2,5> in floats is Swizzle<3,0,5> in float4s.
  auto u = upcast<4>(sl);
  EXPECT_EQ(to_string(u), "Sw<3,0,5> o _0 o (_32,_8,_3):(_1,_32,_256)");
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k < 8; ++k)
      for (int m = 0; m < 128; m += 4) ASSERT_EQ(int(u(m / 4, k, s)), int(sl(m, k, s)) / 4);
  EXPECT_EQ(to_string(downcast<4>(u)), to_string(sl));
  // A sliced stage: the offset is scaled with the units (1024 floats = 256 float4s).
  auto us = upcast<4>(sl(_, _, 2));
  EXPECT_EQ(int(us(7, 5)), int(sl(28, 5, 2)) / 4);
  EXPECT_EQ(to_string(upcast<2>(Swizzle<3, 2, 5>{})), to_string(Swizzle<3, 1, 5>{}));
  EXPECT_EQ(to_string(downcast<2>(Swizzle<3, 2, 5>{})), to_string(Swizzle<3, 3, 5>{}));
  // tile_to_shape of a swizzle atom (CuTe's usual (8,64) row-major atom of 16-bit values).
  auto atom = composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{});
  auto t = tile_to_shape(atom, make_shape(_128{}, _64{}));
  EXPECT_EQ(to_string(t), "Sw<3,3,3> o _0 o (_128,_64):(_64,_1)");
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 64; ++n) ASSERT_EQ(int(t(m, n)), int(atom(m % 8, n)) + 512 * (m / 8));
  // A (MN,K) atom tiled to the ch07 stage stack: the swizzle is the tile's.
  auto stack = tile_to_shape(composition(Swizzle<3, 2, 5>{}, make_layout(make_shape(_128{}, _8{}))),
                             make_shape(_128{}, _8{}, _3{}));
  EXPECT_EQ(to_string(stack), to_string(sl));
}

TEST(SwizzledTile, CpAsync16ByteTiledCopyIntoARunTimeStage) {
  // gA: a (128, 8, k) column-major stack of K tiles in "global memory"; the copy is
  // SM80_CP_ASYNC_CACHEGLOBAL<uint128_t> (one cp.async.cg of 16 bytes per thread and tile).
  std::vector<float> g(128 * 8 * 4);
  std::iota(g.begin(), g.end(), 0.f);
  std::vector<float> smem(cosize_v<SmemLayout>, -1.f);
  auto gA = make_tensor(make_gmem_ptr(g.data()), make_layout(make_shape(_128{}, _8{}, 4)));  // (BM,BK,k)
  auto sA = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});                            // (BM,BK,stage)
  auto tc = tile_copy<SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>>();
  for (int kt = 0; kt < 3; ++kt) {
    int stage = (kt + 1) % 3;  // a run-time stage, as a pipeline computes it
    for (int t = 0; t < 256; ++t) {
      auto thr = tc.get_slice(t);
      auto tAgA = thr.partition_S(gA);                // (CPY,CPY_M,CPY_K,k)
      auto tAsA = thr.partition_D(sA(_, _, stage));   // (CPY,CPY_M,CPY_K)
      if (t == 1 && kt == 0) {
        EXPECT_EQ(to_string(shape(tAsA)), "((_4,_1),_1,_1)");
        // The thread's 4 floats are one 16-byte unit, contiguous after the swizzle.
        for (int i = 1; i < 4; ++i) EXPECT_EQ(&tAsA(i) - &tAsA(0), i);
        EXPECT_EQ((&tAsA(0) - smem.data()) % 4, 0);
      }
      copy(tc, tAgA(_, _, _, kt), tAsA);
    }
    cp_async_fence();
    cp_async_wait<0>();
    for (int k = 0; k < 8; ++k)
      for (int m = 0; m < 128; ++m) {
        ASSERT_EQ(smem[swizzled_index(m, k, stage)], gA(m, k, kt)) << m << "," << k << " stage " << stage;
        ASSERT_EQ(sA(m, k, stage), gA(m, k, kt));
      }
  }
}

TEST(SwizzledTile, CpAsync4BytePredicatedCopyZeroFillsTheOverhang) {
  // M = 100 rows: the last tile overhangs; SM80_CP_ASYNC_CACHEALWAYS<float> (4-byte cp.async)
  // with copy_if writes zeros where the predicate is false (cp.async's zero fill).
  const int M = 100;
  std::vector<float> g(M * 8);
  std::iota(g.begin(), g.end(), 1.f);
  std::vector<float> smem(cosize_v<SmemLayout>, -1.f);
  auto mA = make_tensor(make_gmem_ptr(g.data()), make_layout(make_shape(M, _8{})));  // (M,K)
  auto cA = make_identity_tensor(shape(mA));                                          // (M,K) -> (m,k)
  auto gA = local_tile(mA, make_shape(_128{}, _8{}), make_coord(0, 0));              // (BM,BK)
  auto kA = local_tile(cA, make_shape(_128{}, _8{}), make_coord(0, 0));              // (BM,BK) -> (m,k)
  auto sA = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});
  auto tc = tile_copy<SM80_CP_ASYNC_CACHEALWAYS<float>>();
  int stage = 1;
  for (int t = 0; t < 256; ++t) {
    auto thr = tc.get_slice(t);
    auto pred = make_predicate(thr.partition_S(kA), shape(mA));  // (CPY,CPY_M,CPY_K) of bool
    copy_if(tc, pred, thr.partition_S(gA), thr.partition_D(sA(_, _, stage)));
  }
  cp_async_fence();
  cp_async_wait<0>();
  for (int k = 0; k < 8; ++k)
    for (int m = 0; m < 128; ++m) ASSERT_EQ(smem[swizzled_index(m, k, stage)], m < M ? mA(m, k) : 0.f) << m << "," << k;
  // The other stages were not touched.
  for (int m = 0; m < 128; ++m) ASSERT_EQ(smem[swizzled_index(m, 0, 0)], -1.f);
}

TEST(SwizzledTile, FragmentOfAPartitionRoundTripsWith128BitCopies) {
  std::vector<float> smem(cosize_v<SmemLayout>);
  std::iota(smem.begin(), smem.end(), 0.f);
  std::vector<float> back(cosize_v<SmemLayout>, -1.f);
  auto sA = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});
  auto sB = make_tensor(make_smem_ptr(back.data()), SmemLayout{});
  auto tc = tile_copy<UniversalCopy<mm::uint128_t>>();
  for (int stage = 0; stage < 3; ++stage)
    for (int t = 0; t < 256; ++t) {
      auto thr = tc.get_slice(t);
      auto tAsA = thr.partition_S(sA(_, _, stage));  // (CPY,CPY_M,CPY_K), swizzled
      auto frag = make_fragment_like(tAsA);          // (CPY,CPY_M,CPY_K), registers, compact
      static_assert(!is_composed_layout_v<std::remove_cvref_t<decltype(frag.layout())>>);
      EXPECT_EQ(to_string(shape(frag)), to_string(shape(tAsA)));
      copy(tc, tAsA, frag);                                        // one 128-bit load
      for (int i = 0; i < 4; ++i) ASSERT_EQ(frag(i), tAsA(i));
      copy(tc, thr.retile_S(frag), thr.partition_D(sB(_, _, stage)));  // one 128-bit store
    }
  EXPECT_EQ(smem, back);
}

TEST(SwizzledTile, TiledMmaReadsFourElementRunsAs128BitVectors) {
  // A (128,8) swizzled stage of A and of B, 16x16 UniversalFMA threads, the permutation
  // (16,4):(4,1) on M and N: each thread owns rows 4tm..4tm+3 (+64) and columns 4tn..4tn+3 (+64),
  // runs of 4 along MN that the swizzle keeps whole, so they are read as float4s.
  using Perm = Layout<Shape<_16, _4>, Stride<_4, _1>>;
  auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _16, _1>>{}, Tile<Perm, Perm, Underscore>{});
  std::vector<float> a(cosize_v<SmemLayout>), b(cosize_v<SmemLayout>), c(128 * 128, 0.f);
  for (int i = 0; i < int(a.size()); ++i) {
    a[i] = float(i % 7) - 3.f;  // small integers: the sums are exact in fp32
    b[i] = float(i % 5) - 2.f;
  }
  int stage = 2;
  auto sA = make_tensor(make_smem_ptr(a.data()), SmemLayout{})(_, _, stage);  // (BM,BK)
  auto sB = make_tensor(make_smem_ptr(b.data()), SmemLayout{})(_, _, stage);  // (BN,BK)
  auto gC = make_tensor(c.data(), make_layout(make_shape(_128{}, _128{})));   // (BM,BN)
  Copy_Atom<UniversalCopy<mm::uint128_t>, float> vec4;
  std::vector<int> owner(128 * 128, 0);
  for (int t = 0; t < 256; ++t) {
    auto thr = mma.get_slice(t);
    auto tCsA = thr.partition_A(sA);  // (MMA,MMA_M,MMA_K) = (1,8,8), swizzled
    auto tCsB = thr.partition_B(sB);  // (MMA,MMA_N,MMA_K)
    auto tCgC = thr.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    ASSERT_EQ(to_string(shape(tCsA)), "(_1,(_4,_2),_8)");
    // Chapter 06's fragment of one k column, from a local_tile of the swizzled stage.
    auto tCrA1 = thr.partition_fragment_A(local_tile(sA, make_shape(_128{}, _1{}), make_coord(0, 0)));
    ASSERT_EQ(to_string(shape(tCrA1)), "(_1,(_4,_2),_1)");
    auto tCrA = make_fragment_like(tCsA);  // (1,8,8) registers
    auto tCrB = make_fragment_like(tCsB);
    auto tCrC = thr.partition_fragment_C(gC);
    clear(tCrC);
    int tm = t % 16, tn = t / 16;
    for (int k = 0; k < 8; ++k) {
      // (MMA,MMA_M) grouped into one mode of 8 values: two runs of 4 consecutive rows.
      auto runs = group_modes<0, 2>(tCsA(_, _, k));
      for (int j = 0; j < 8; ++j) ASSERT_EQ(&runs(j), &sA(4 * tm + j % 4 + 64 * (j / 4), k)) << "thread " << t;
      for (int j = 0; j < 8; j += 4)
        for (int i = 1; i < 4; ++i) ASSERT_EQ(&runs(j + i) - &runs(j), i);  // contiguous after the swizzle
      copy(vec4, runs, group_modes<0, 2>(tCrA(_, _, k)));                      // 2 x 128-bit loads
      copy(vec4, group_modes<0, 2>(tCsB(_, _, k)), group_modes<0, 2>(tCrB(_, _, k)));
      for (int j = 0; j < 8; ++j) ASSERT_EQ(tCrB(0, j, k), sB(4 * tn + j % 4 + 64 * (j / 4), k));
    }
    gemm(mma, tCrA, tCrB, tCrC);
    copy(tCrC, tCgC);
    for (int i = 0; i < int(size(tCgC)); ++i) owner[&tCgC(i) - c.data()] += 1;
    // The same product straight from the swizzled partitions (gemm takes composed layouts).
    auto tCrC2 = thr.partition_fragment_C(gC);
    clear(tCrC2);
    gemm(mma, tCsA, tCsB, tCrC2);
    for (int i = 0; i < int(size(tCrC)); ++i) ASSERT_EQ(tCrC2(i), tCrC(i));
  }
  for (int i = 0; i < 128 * 128; ++i) ASSERT_EQ(owner[i], 1);
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 128; ++n) {
      float ref = 0.f;
      for (int k = 0; k < 8; ++k) ref += sA(m, k) * sB(n, k);
      ASSERT_EQ(gC(m, n), ref) << m << "," << n;
    }
}

TEST(SwizzledTileDeath, AVectorAtARunTimeStartThatStraddlesUnitsStops) {
  // The rule "a vector starts at a multiple of NumVal" for a run-time start is checked on the
  // host: 4 floats from index 2 would take 2 floats from each of two swizzle units, which the
  // swizzle sends to different places.
  std::vector<float> smem(cosize_v<SmemLayout>), regs(4);
  Copy_Atom<UniversalCopy<mm::uint128_t>, float> vec4;
  auto at = [&](int start) {  // 4 floats from a run-time start, in the swizzled index space
    return make_tensor(make_smem_ptr(smem.data()), make_composed_layout(Swizzle<3, 2, 5>{}, start, Layout<_4, _1>{}));
  };
  vec4.call(at(8), make_tensor(regs.data(), Layout<_4, _1>{}));  // a whole unit: fine
  EXPECT_DEATH(vec4.call(at(2), make_tensor(regs.data(), Layout<_4, _1>{})), "must start at a multiple of NumVal");
}

TEST(SwizzledTile, HoistedSwizzleAddsWhatTheThreadAndTheValueDoNotShare) {
  // Sw<3,2,5> o (128,8,3): thread t takes the float4 at m = 4 (t % 32), k = t / 32; its values are the
  // 4 floats of the unit and the 3 stages. t's bits (2..6 and 7..9) and the values' (0..1, 10..11)
  // are apart, so Sw(t + v) = Sw(t) ^ Sw(v) for every value.
  std::vector<float> buf(3072);
  auto sA = make_tensor(buf.data(), SmemLayout{});
  auto copy = tile_copy<UniversalCopy<mm::uint128_t>>();
  for (int t = 0; t < 256; ++t) {
    auto plain = copy.get_slice(t).partition_D(sA);  // (CPY,CPY_M,CPY_K,S)
    auto hoisted = hoist_swizzle(plain);
    EXPECT_EQ(hoisted.data().base_, swizzled_index(4 * (t % 32), t / 32, 0));
    for (int i = 0; i < int(size(plain)); ++i) ASSERT_EQ(&hoisted(i), &plain(i)) << "thread " << t << " value " << i;
  }
}

TEST(SwizzledTileDeath, HoistedSwizzleRefusesAThreadOffsetThatSharesBitsWithTheValues) {
  // Four floats from m = 1: the run-time offset 1 and the values' offsets 0..3 share bit 0 (1 + 1 is
  // not 1 ^ 1), so the swizzle cannot be split.
  std::vector<float> buf(3072);
  int m = 1;
  auto row = make_tensor(buf.data(), make_composed_layout(Swizzle<3, 2, 5>{}, m, Layout<_4, _1>{}));
  EXPECT_DEATH((void)hoist_swizzle(row), "share bits");
}
