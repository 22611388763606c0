// Layout library, TiledCopy and TiledMMA: every thread of the tile simulated on the CPU.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

TEST(TiledCopy, MoYeSixThreadExample) {
  // 6 threads copy a 4x9 tile: thr (2,3):(3,1), val (2,3):(1,2) (MoYe's Tiled Matmul page).
  std::vector<double> src_buf(36), dst_buf(36, 0.0);
  for (int i = 0; i < 36; ++i) src_buf[i] = 0.1 * (i + 1);
  auto src = make_tensor(src_buf.data(), make_layout(make_shape(_4{}, _9{})));
  auto dst = make_tensor(dst_buf.data(), make_layout(make_shape(_4{}, _9{})));
  auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<double>, double>{}, Layout<Shape<_2, _3>, Stride<_3, _1>>{},
                            Layout<Shape<_2, _3>, Stride<_1, _2>>{});
  EXPECT_EQ(int(size(tc)), 6);
  EXPECT_EQ(to_string(tc.tiler()), "(_4,_9)");
  // Owner of each element, as MoYe's table (0-based threads).
  std::vector<int> owner(36, -1);
  for (int t = 0; t < 6; ++t) {
    auto thr = tc.get_slice(t);
    auto s = thr.partition_S(src);
    auto d = thr.partition_D(dst);
    EXPECT_EQ(int(size(d)), 6);
    copy(tc, s, d);
    for (int i = 0; i < int(size(d)); ++i) {
      int idx = int(&d(i) - dst_buf.data());
      EXPECT_EQ(owner[idx], -1);
      owner[idx] = t;
    }
  }
  EXPECT_EQ(src_buf, dst_buf);
  int expected[4][9] = {{0, 0, 0, 1, 1, 1, 2, 2, 2}, {0, 0, 0, 1, 1, 1, 2, 2, 2}, {3, 3, 3, 4, 4, 4, 5, 5, 5}, {3, 3, 3, 4, 4, 4, 5, 5, 5}};
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 9; ++n) EXPECT_EQ(owner[m + 4 * n], expected[m][n]) << m << "," << n;
}

TEST(TiledCopy, Vectorized128BitCoalesced) {
  // (M,K) column-major, 128x8 tiles, 256 threads moving 4 floats (128 bit) each.
  int M = 256, K = 16;
  std::vector<float> a(M * K), b(M * K, -1.f);
  std::iota(a.begin(), a.end(), 0.f);
  auto mA = make_tensor(a.data(), make_shape(M, K), make_stride(_1{}, M));
  auto mB = make_tensor(b.data(), make_shape(M, K), make_stride(_1{}, M));
  auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<mm::uint128_t>, float>{}, Layout<Shape<_32, _8>>{}, Layout<Shape<_4, _1>>{});
  for (int bm = 0; bm < 2; ++bm) {
    auto gA = local_tile(mA, make_shape(_128{}, _8{}), make_coord(bm, _));  // (128,8,k)
    auto gB = local_tile(mB, make_shape(_128{}, _8{}), make_coord(bm, _));
    for (int t = 0; t < 256; ++t) {
      auto thr = tc.get_thread_slice(t);
      auto tAgA = thr.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
      auto tBgB = thr.partition_D(gB);
      if (t == 0 && bm == 0) {
        EXPECT_EQ(to_string(shape(tAgA)), "((_4,_1),_1,_1,2)");
      }
      // Threads 0 and 1 load neighbouring 16-byte vectors: coalesced.
      if (t == 1) {
        EXPECT_EQ(&tAgA(0) - &gA(0, 0, 0), 4);
      }
      auto frag = make_fragment_like(tAgA(_, _, _, 0));  // (CPY,CPY_M,CPY_K)
      for (int k = 0; k < 2; ++k) {
        copy(tc, tAgA(_, _, _, k), frag);
        copy(tc, thr.retile_S(frag), tBgB(_, _, _, k));
      }
    }
  }
  EXPECT_EQ(a, b);
}

TEST(TiledCopy, CpAsyncAtomsAndPredicatesOnHost) {
  // On the host the cp.async atoms are plain copies; the zero-fill variant writes zeros.
  std::vector<float> a(64), s(64, 7.f);
  std::iota(a.begin(), a.end(), 1.f);
  auto g = make_tensor(a.data(), make_layout(make_shape(_16{}, _4{})));
  auto sm = make_tensor(s.data(), make_layout(make_shape(_16{}, _4{})));
  auto tc = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>, float>{}, Layout<Shape<_4, _4>>{}, Layout<Shape<_4, _1>>{});
  auto cI = make_identity_tensor(make_shape(_16{}, _4{}));
  for (int t = 0; t < 16; ++t) {
    auto thr = tc.get_slice(t);
    auto pred = make_predicate(thr.partition_S(cI), make_shape(12, 4));  // rows >= 12 are outside
    copy_if(tc, pred, thr.partition_S(g), thr.partition_D(sm));
  }
  cp_async_fence();
  cp_async_wait<0>();
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(sm(m, k), m < 12 ? g(m, k) : 0.f);
}

// Runs every thread of `mma` on a 64x64x8 block tile, C = A * B^T with A (BM,BK) and B (BN,BK) of
// small integers (exact in fp32). Before a thread computes, check_thread(t, sA, sB, gC, tCsA, tCsB,
// tCgC) looks at its partitions. Then every element of C must be written by exactly one thread and
// equal the product.
template <class TiledMma, class CheckThread>
void run_on_64x64x8_tile(const TiledMma& mma, CheckThread check_thread) {
  std::vector<float> a(64 * 8), b(64 * 8), c(64 * 64, 0.f);
  for (int i = 0; i < 64 * 8; ++i) {
    a[i] = float(i % 7) - 3.f;
    b[i] = float(i % 5) - 2.f;
  }
  auto sA = make_tensor(a.data(), make_layout(make_shape(_64{}, _8{})));   // (BM,BK)
  auto sB = make_tensor(b.data(), make_layout(make_shape(_64{}, _8{})));   // (BN,BK)
  auto gC = make_tensor(c.data(), make_layout(make_shape(_64{}, _64{})));  // (BM,BN)
  std::vector<int> owner(64 * 64, 0);
  for (int t = 0; t < 256; ++t) {
    auto thr = mma.get_slice(t);
    auto tCsA = thr.partition_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCsB = thr.partition_B(sB);  // (MMA,MMA_N,MMA_K)
    auto tCgC = thr.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    check_thread(t, sA, sB, gC, tCsA, tCsB, tCgC);
    if (::testing::Test::HasFatalFailure()) return;  // an ASSERT in check_thread ends the test
    auto tCrC = thr.partition_fragment_C(gC);
    clear(tCrC);
    gemm(mma, tCsA, tCsB, tCrC);
    copy(tCrC, tCgC);
    for (int i = 0; i < int(size(tCgC)); ++i) owner[&tCgC(i) - c.data()] += 1;
  }
  for (int i = 0; i < 64 * 64; ++i) ASSERT_EQ(owner[i], 1);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      float ref = 0.f;
      for (int k = 0; k < 8; ++k) ref += sA(m, k) * sB(n, k);
      ASSERT_EQ(gC(m, n), ref);
    }
}

TEST(TiledMMA, UniversalFmaEveryThreadItsPartOfC) {
  // 64x64x8 block tile, 16x16 threads (MoYe's MatMul), C = A * B^T.
  auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _16>>{});
  EXPECT_EQ(int(size(mma)), 256);
  run_on_64x64x8_tile(mma, [](int t, auto&, auto&, auto&, auto& tCsA, auto&, auto& tCgC) {
    if (t == 0) {
      EXPECT_EQ(to_string(shape(tCsA)), "(_1,_4,_8)");
      EXPECT_EQ(to_string(shape(tCgC)), "(_1,_4,_4)");
    }
  });
}

TEST(TiledMMA, PermutationGivesEachThreadABlockOfRowsAndColumns) {
  // The same 64x64x8 tile and 16x16 threads, with the permutation (16,4):(4,1) on M and N:
  // the MMA's row i is the tile's row perm(i), so thread (tm, tn), which takes rows tm + 16j
  // of the permuted tile, owns rows 4tm..4tm+3 and columns 4tn..4tn+3 (a 4x4 block) instead
  // of rows tm, tm+16, tm+32, tm+48.
  using Perm = Layout<Shape<_16, _4>, Stride<_4, _1>>;
  auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _16>>{}, make_tile(Perm{}, Perm{}, Layout<_8, _1>{}));
  EXPECT_EQ(int(size(mma)), 256);
  run_on_64x64x8_tile(mma, [](int t, auto& sA, auto& sB, auto& gC, auto& tCsA, auto& tCsB, auto& tCgC) {
    int tm = t % 16, tn = t / 16;  // the atom layout (16,16):(1,16)
    ASSERT_EQ(to_string(shape(tCsA)), "(_1,_4,_8)");
    ASSERT_EQ(to_string(shape(tCgC)), "(_1,_4,_4)");
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 8; ++k) {
        ASSERT_EQ(&tCsA(0, j, k), &sA(4 * tm + j, k)) << "thread " << t;
        ASSERT_EQ(&tCsB(0, j, k), &sB(4 * tn + j, k)) << "thread " << t;
      }
      for (int i = 0; i < 4; ++i) ASSERT_EQ(&tCgC(0, j, i), &gC(4 * tm + j, 4 * tn + i)) << "thread " << t;
    }
  });
}
