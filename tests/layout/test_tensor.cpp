// Layout library, tensors: views and fragments, local_tile / local_partition (MoYe's tile /
// parallelize), copy, fill, clear, gemm, predication with identity tensors.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

TEST(Tensor, ViewIndexingRowMajor) {
  std::vector<float> a(6 * 4);
  std::iota(a.begin(), a.end(), 0.f);
  int M = 6, K = 4;
  auto mA = make_tensor(a.data(), make_shape(M, K), make_stride(K, _1{}));  // (M,K) row-major
  EXPECT_EQ(mA(2, 3), 2 * 4 + 3);
  EXPECT_EQ(mA(make_coord(5, 0)), 20);
  EXPECT_EQ(mA(7), a[1 * 4 + 1]);  // 1-D coordinate, column-major order: (1,1)
  auto row2 = mA(2, _);           // (K)
  EXPECT_EQ(to_string(row2.layout()), "(4):(_1)");
  EXPECT_EQ(row2(1), 9);
  auto col1 = mA(_, 1);           // (M)
  EXPECT_EQ(col1(3), 13);
  mA(0, 0) = 42.f;
  EXPECT_EQ(a[0], 42.f);
  auto t = select<1, 0>(mA);      // transpose by a layout change: (K,M)
  EXPECT_EQ(t(3, 2), mA(2, 3));
}

TEST(Tensor, OwningFragmentIsStatic) {
  auto r = make_tensor<float>(Shape<_4, _2>{});
  static_assert(sizeof(r) == 8 * sizeof(float));
  fill(r, 3.f);
  EXPECT_EQ(r(3, 1), 3.f);
  clear(r);
  EXPECT_EQ(r(3, 1), 0.f);
  auto padded = make_tensor<int>(make_layout(make_shape(_4{}, _2{}), make_stride(_1{}, _5{})));
  static_assert(cosize_v<decltype(padded.layout())> == 9);
  std::vector<double> g(8);
  std::iota(g.begin(), g.end(), 1.0);
  auto gv = make_tensor(g.data(), make_shape(_4{}, _2{}));
  auto frag = make_fragment_like(gv);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(frag(0))>, double>);
  copy(gv, frag);
  EXPECT_EQ(frag(3, 1), 8.0);
}

TEST(Tensor, LocalTileMatchesMoYeTile) {
  int M = 256, K = 64;
  std::vector<int> a(M * K);
  std::iota(a.begin(), a.end(), 0);
  auto mA = make_tensor(a.data(), make_shape(M, K), make_stride(K, _1{}));  // (M,K)
  auto gA = local_tile(mA, make_shape(_128{}, _8{}), make_coord(1, _));       // (BM,BK,k)
  EXPECT_EQ(int(rank(gA)), 3);
  EXPECT_EQ(int(size<0>(gA)), 128);
  EXPECT_EQ(int(size<1>(gA)), 8);
  EXPECT_EQ(int(size<2>(gA)), 8);
  for (int k = 0; k < 8; ++k)
    for (int m = 0; m < 128; m += 17)
      for (int kk = 0; kk < 8; ++kk) ASSERT_EQ(gA(m, kk, k), mA(128 + m, 8 * k + kk));
  // Projection: tile (BM,BN,BK) with coordinate (bx,by,_), keep M and K.
  auto gA2 = local_tile(mA, make_shape(_128{}, _64{}, _8{}), make_coord(1, 0, _), Step<_1, X, _1>{});
  EXPECT_EQ(to_string(gA2.layout()), to_string(gA.layout()));
  auto gT = tile(mA, make_shape(_32{}, _32{}), make_coord(2, 1));             // MoYe name
  EXPECT_EQ(gT(0, 0), mA(64, 32));
}

TEST(Tensor, LocalPartitionCoversEveryElementOnce) {
  // Tiles and thread layouts of chapters 04-06, both thread orders, padded smem layouts.
  auto check = [](auto tile_layout, auto thr) {
    std::vector<int> hits(cosize(tile_layout), 0);
    auto t = make_tensor(hits.data(), tile_layout);
    for (int tid = 0; tid < int(size(thr)); ++tid) {
      auto part = local_partition(t, thr, tid);
      EXPECT_EQ(int(size(part)), int(size(tile_layout)) / int(size(thr)));
      for (int i = 0; i < int(size(part)); ++i) part(i) += 1;
    }
    for (int i = 0; i < int(size(tile_layout)); ++i) ASSERT_EQ(t(i), 1) << to_string(tile_layout) << " / " << to_string(thr);
  };
  check(make_layout(make_shape(_32{}, _32{})), make_layout(make_shape(_32{}, _8{})));
  check(make_layout(make_shape(_32{}, _32{}), make_stride(_1{}, _33{})), make_layout(make_shape(_32{}, _8{})));
  check(make_layout(make_shape(_128{}, _8{}), make_stride(_1{}, _129{})), make_layout(make_shape(_32{}, _8{})));
  check(make_layout(make_shape(_128{}, _8{}), LayoutRight{}), make_layout(make_shape(_32{}, _8{}), LayoutRight{}));
  check(make_layout(make_shape(_128{}, _128{})), make_layout(make_shape(_16{}, _16{})));
  check(make_layout(make_shape(64, 48)), make_layout(make_shape(_8{}, _4{}), LayoutRight{}));
}

TEST(Tensor, LocalPartitionThreadOwnsStridedRows) {
  std::vector<int> s(128 * 8);
  auto sA = make_tensor(s.data(), make_layout(make_shape(_128{}, _8{})));  // (BM,BK)
  auto tC = make_layout(make_shape(_16{}, _16{}));
  int tid = 37;  // (5, 2) in tC
  auto tCsA = local_partition(sA, tC, tid, Step<_1, X>{});                 // (BM/16, BK)
  EXPECT_EQ(to_string(tCsA.layout()), "(_8,_8):(_16,_128)");
  EXPECT_EQ(&tCsA(0, 0), &sA(5, 0));
  EXPECT_EQ(&tCsA(3, 7), &sA(5 + 16 * 3, 7));
  auto tCsB = parallelize(sA, tC, tid, Step<X, _1>{});                      // (BN/16, BK)
  EXPECT_EQ(&tCsB(1, 2), &sA(2 + 16, 2));
}

TEST(Tensor, GemmOnFragments) {
  auto A = make_tensor<float>(Shape<_4, _3>{});   // (M,K)
  auto B = make_tensor<float>(Shape<_5, _3>{});   // (N,K)
  auto Cc = make_tensor<float>(Shape<_4, _5>{});  // (M,N)
  for (int i = 0; i < 12; ++i) A(i) = float(i % 5) - 1.f;
  for (int i = 0; i < 15; ++i) B(i) = float(i % 4) + 0.5f;
  fill(Cc, 1.f);
  gemm(A, B, Cc);
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 5; ++n) {
      float ref = 1.f;
      for (int k = 0; k < 3; ++k) ref += A(m, k) * B(n, k);
      EXPECT_FLOAT_EQ(Cc(m, n), ref);
    }
}

TEST(Predication, DomainOffsetMovesAnIdentityTensorsCoordinates) {
  // A stage's coordinates at a tile origin that is no multiple of the tile (a grouped GEMM's expert
  // rows): domain_offset((m0, k0), identity(BM, BK))(i, j) == (m0 + i, k0 + j), element 0 the origin.
  auto c = make_identity_tensor(make_shape(_8{}, _4{}));
  auto g = domain_offset(make_coord(37, 64), c);
  EXPECT_EQ(to_string(g(0)), "(37,64)");
  EXPECT_EQ(to_string(g(5, 3)), "(42,67)");
  // The epilogue's way: a row block moved to (m0, n0), then piece j of its columns by local_tile.
  auto row_block = domain_offset(make_coord(128, 256), make_identity_tensor(make_shape(_4{}, _16{})));
  auto piece = local_tile(row_block, make_shape(_4{}, _8{}), make_coord(0, 1));
  EXPECT_EQ(to_string(piece(0)), "(128,264)");
  EXPECT_EQ(to_string(piece(3, 7)), "(131,271)");
  // A data tensor moves its pointer by the layout's offset of the coordinate.
  std::vector<int> v(6 * 5);
  std::iota(v.begin(), v.end(), 0);
  auto m = make_tensor(v.data(), make_shape(6, 5), make_stride(5, _1{}));
  auto moved = domain_offset(make_coord(2, 3), m);
  EXPECT_EQ(moved(0, 0), m(2, 3));
  EXPECT_EQ(moved(1, 1), m(3, 4));
}

TEST(Predication, IdentityTensorAndCopyIf) {
  int M = 10, N = 13;
  std::vector<int> src(M * N), dst(M * N, -1);
  std::iota(src.begin(), src.end(), 0);
  auto mS = make_tensor(src.data(), make_shape(M, N), make_stride(N, _1{}));
  auto mD = make_tensor(dst.data(), make_shape(M, N), make_stride(N, _1{}));
  auto cM = make_identity_tensor(shape(mS));  // (M,N) -> (m,n)
  EXPECT_EQ(to_string(cM(3, 4)), "(3,4)");
  auto tile_shape = make_shape(_8{}, _8{});
  auto thr = make_layout(make_shape(_4{}, _4{}));
  int visited = 0;
  for (int bm = 0; bm < 2; ++bm)
    for (int bn = 0; bn < 2; ++bn) {
      auto gS = local_tile(mS, tile_shape, make_coord(bm, bn));  // (8,8) overhangs the matrix
      auto gD = local_tile(mD, tile_shape, make_coord(bm, bn));
      auto gC = local_tile(cM, tile_shape, make_coord(bm, bn));
      for (int tid = 0; tid < 16; ++tid) {
        auto tS = local_partition(gS, thr, tid);
        auto tD = local_partition(gD, thr, tid);
        auto tC = local_partition(gC, thr, tid);
        auto pred = make_predicate(tC, shape(mS));
        for (int i = 0; i < int(size(tC)); ++i) {
          auto c = tC(i);
          EXPECT_EQ(bool(pred(i)), get<0>(c) < M && get<1>(c) < N);
          if (pred(i)) {
            EXPECT_EQ(&tS(i), &mS(get<0>(c), get<1>(c)));  // the coordinate names the element
            ++visited;
          }
        }
        copy_if(pred, tS, tD);
      }
    }
  EXPECT_EQ(visited, M * N);
  EXPECT_EQ(src, dst);
}

TEST(Predication, ElemLess) {
  EXPECT_TRUE(bool(elem_less(make_coord(3, 4), make_shape(4, 5))));
  EXPECT_FALSE(bool(elem_less(make_coord(4, 4), make_shape(4, 5))));
  static_assert(decltype(elem_less(make_coord(_1{}, _2{}), make_shape(_2{}, _3{})))::value);
}

// ---- A coordinate plus an integer (predicate.hpp): only zero has a meaning ----

// Whether `a + b` compiles.
template <class A, class B>
concept Addable = requires(A const& a, B const& b) { a + b; };

// The compile-time zero is accepted, a compile-time non-zero does not compile, a run-time integer
// compiles (and is checked at run time).
static_assert(Addable<ArithTuple<int, int>, _0> && Addable<_0, ArithTuple<int, int>>);
static_assert(Addable<ScaledBasis<1, int>, _0> && Addable<_0, ScaledBasis<1, int>>);
static_assert(!Addable<ArithTuple<int, int>, _1> && !Addable<_2, ArithTuple<int, int>>);
static_assert(!Addable<ScaledBasis<1, int>, _1> && !Addable<_3, ScaledBasis<1, int>>);
static_assert(Addable<ArithTuple<int, int>, int> && Addable<int, ScaledBasis<0, int>>);

TEST(Predication, ZeroOffsetLeavesACoordinateUnchanged) {
  const ArithTuple<int, int> c(3, 5);
  const auto b = E<1>{} * 4;  // (0,4)
  int zero = 0;               // a run-time zero, as `x * _0` produces
  for (const auto& r : {c + _0{}, c + zero, _0{} + c, zero + c}) {
    EXPECT_EQ(get<0>(r), 3);
    EXPECT_EQ(get<1>(r), 5);
  }
  EXPECT_EQ((b + zero).value(), 4);
  EXPECT_EQ((zero + b).value(), 4);
  EXPECT_EQ((b + _0{}).value(), 4);
}

// Where a run-time zero really arrives: a thread's partition of a tile of coordinates has a size-1
// mode of stride _0 (each thread holds one column of the 8), and a 1-D index i contributes
// (i / 4) * _0, a run-time int 0. The coordinates must come out exact.
TEST(Predication, PartitionWithAStrideZeroModeGivesExactCoordinates) {
  const int M = 300, K = 20;
  auto cA = make_identity_tensor(make_shape(M, K));                           // (M,K) -> (m,k)
  auto tile = local_tile(cA, make_shape(_128{}, _8{}), make_coord(1, 2));     // (128,8) at (128,16)
  auto part = local_partition(tile, make_layout(make_shape(_32{}, _8{})), 37);  // (4,1): thread (5,1)
  static_assert(is_constant_value_v<0, decltype(get<1>(part.layout().stride()))>, "the size-1 mode has stride _0");
  for (int i = 0; i < int(size(part)); ++i) {
    EXPECT_EQ(int(get<0>(part(i))), 128 + 5 + 32 * i) << i;
    EXPECT_EQ(int(get<1>(part(i))), 16 + 1) << i;
  }
}

TEST(PredicationDeath, NonZeroRunTimeOffsetStops) {
  volatile int one = 1;  // not a constant the compiler could see
  const ArithTuple<int, int> c(3, 5);
  EXPECT_DEATH((void)(c + int(one)), "non-zero integer added to a coordinate");
  EXPECT_DEATH((void)(int(one) + c), "non-zero integer added to a coordinate");
  EXPECT_DEATH((void)(E<0>{} + int(one)), "non-zero integer added to a coordinate");
  EXPECT_DEATH((void)(int(one) + E<1>{}), "non-zero integer added to a coordinate");
}
