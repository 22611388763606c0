// Layout library: which compositions and complements are admissible (CuTe's rules), the
// corner cases of CuTe's layout-algebra documentation, and the mode structure of the products.
// The compositions that must not compile are in static_composition_check.cpp (CTest).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

namespace {

// R = A ∘ B must be B-shaped and compute A(B(i)) for every i < size(B).
template <class A, class B>
void expect_composition(A const& a, B const& b) {
  auto r = composition(a, b);
  ASSERT_EQ(int(size(r)), int(size(b))) << to_string(a) << " o " << to_string(b) << " = " << to_string(r);
  for (int i = 0; i < int(size(b)); ++i)
    ASSERT_EQ(int(r(i)), int(a(b(i)))) << to_string(a) << " o " << to_string(b) << " = " << to_string(r) << " at " << i;
}

// CuTe's complement post-conditions: ordered, disjoint from `a`, and (a, complement) reaches the cotarget.
template <class A, class M>
void expect_complement(A const& a, M const& cotarget) {
  auto c = complement(a, cotarget);
  std::set<int> image_a;
  for (int j = 0; j < int(size(a)); ++j) image_a.insert(int(a(j)));
  for (int i = 1; i < int(size(c)); ++i) {
    ASSERT_LT(int(c(i - 1)), int(c(i))) << to_string(c);
    ASSERT_EQ(image_a.count(int(c(i))), 0u) << to_string(a) << " vs " << to_string(c);
  }
  EXPECT_GE(int(cosize(make_layout(a, c))), int(cotarget)) << to_string(c);
}

}  // namespace

TEST(CompositionRule, CuteDocumentationWalkthrough) {
  // "(3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9w,3x,y,z)": the stride 9 divides out 3 and then 3
  // of the 6 (leaving 2), the shape 16 fills 2, 2 and 4 of the 8. Size-1 modes are dropped.
  auto a = Layout<Shape<_3, _6, _2, _8>, Stride<_1, _5, Int<40>, Int<100>>>{};
  EXPECT_EQ(to_string(composition(a, Layout<_16, _9>{})), "(_2,_2,_4):(_15,_40,_100)");
  expect_composition(a, Layout<_16, _9>{});
  // "(6,2) / 3 => (2,2)": ((6,2):(8,2) o 4:3) of the documentation's first example.
  EXPECT_EQ(to_string(composition(Layout<Shape<_6, _2>, Stride<_8, _2>>{}, Layout<_4, _3>{})), "(_2,_2):(_24,_2)");
}

TEST(CompositionRule, AStrideSmallerThanTheModeNeedNotDivideIt) {
  // CuTe's stride divisibility condition is d % M == 0 or d < M, not "d and M divide one
  // another": index 3 of (8,8):(8,1) is (3,0), so 2:3 picks indices 0 and 3 -> 2:24.
  auto a = Layout<Shape<_8, _8>, Stride<_8, _1>>{};
  EXPECT_EQ(to_string(composition(a, Layout<_2, _3>{})), "_2:_24");
  EXPECT_EQ(to_string(composition(a, Layout<_3, _3>{})), "_3:_24");  // 0, 3, 6: still inside the mode
  expect_composition(a, Layout<_3, _3>{});
  // The same through a tiler and a logical_divide.
  EXPECT_EQ(to_string(composition(a, make_tile(Layout<_2, _3>{}))), "(_2,_8):(_24,_1)");  // by mode: 8:8 o 2:3
  // CuTe's paper example (CUTLASS <= 3.5 refused it): (4,6,8,10):(2,3,5,7) o 6:12 = (2,3):(9,5).
  auto p = Layout<Shape<_4, _6, _8, _10>, Stride<_2, _3, _5, _7>>{};
  EXPECT_EQ(to_string(composition(p, Layout<_6, _12>{})), "(_2,_3):(_9,_5)");
  expect_composition(p, Layout<_6, _12>{});
  // The shape divisibility condition is the same weak one: the walk may end inside a mode.
  EXPECT_EQ(to_string(composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<_3, _1>{})), "_3:_3");
}

TEST(CompositionRule, CuteUnitTestCasesComputeTheComposedFunction) {
  // The static cases of CuTe's composition unit test, checked as functions.
  expect_composition(Layout<_1, _0>{}, Layout<_1, _1>{});
  expect_composition(Layout<_4, _2>{}, Layout<_4, _1>{});
  expect_composition(Layout<_4, _0>{}, Layout<_4, _1>{});
  expect_composition(Layout<_4, _1>{}, Layout<_4, _0>{});
  expect_composition(Layout<_4, _1>{}, Layout<_2, _2>{});
  expect_composition(Layout<_4, _2>{}, Layout<_2, _2>{});
  expect_composition(Layout<Shape<_4, _3>>{}, Layout<_12, _1>{});
  expect_composition(Layout<_12, _2>{}, Layout<Shape<_4, _3>>{});
  expect_composition(Layout<_12, _1>{}, Layout<Shape<_2, _3>, Stride<_2, _4>>{});
  expect_composition(Layout<Shape<_4, _3>>{}, Layout<_6, _2>{});
  expect_composition(Layout<Shape<_4, _3>>{}, Layout<Shape<_6, _2>, Stride<_2, _1>>{});
  expect_composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<_12, _1>{});
  expect_composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<_6, _2>{});
  expect_composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<Shape<_6, _2>, Stride<_2, _1>>{});
  expect_composition(Layout<Shape<_8, _8>>{}, Layout<Shape<Shape<_2, _2, _2>, Shape<_2, _2, _2>>,
                                                     Stride<Stride<_1, _16, _4>, Stride<_8, _2, _32>>>{});
  expect_composition(Layout<Shape<_8, _8>, Stride<_8, _1>>{},
                     Layout<Shape<Shape<_2, _2, _2>, Shape<_2, _2, _2>>, Stride<Stride<_1, _16, _4>, Stride<_8, _2, _32>>>{});
  expect_composition(Layout<Shape<Shape<_4, _2>>, Stride<Stride<_1, _16>>>{}, Layout<Shape<_4, _2>, Stride<_2, _1>>{});
  expect_composition(Layout<Shape<_4, _8, _2>>{}, Layout<Shape<_2, _2, _2>, Stride<_2, _8, _1>>{});
  expect_composition(Layout<Shape<_4, _8, _2>, Stride<_2, _8, _1>>{}, Layout<Shape<_2, _2, _2>, Stride<_1, _8, _2>>{});
  expect_composition(Layout<Shape<_4, _8, _2>, Stride<_2, _8, _1>>{}, Layout<Shape<_4, _2, _2>, Stride<_2, _8, _1>>{});
  // cosize(B) > size(A): A's last mode extends ("even without last mode divisibility").
  EXPECT_EQ(to_string(composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<_24, _1>{})), "(_4,_6):(_3,_1)");
  EXPECT_EQ(to_string(composition(Layout<Shape<_4, _3>, Stride<_3, _1>>{}, Layout<_8, _1>{})), "(_4,_2):(_3,_1)");
  expect_composition(make_layout(make_shape(128, 24, 5), make_stride(1, 128, 3072)), make_layout(480, _32{}));
  expect_composition(make_layout(make_shape(48, 24, 5), make_stride(_1{}, 128, 3072)), make_layout(32, _1{}));
}

TEST(CompositionRule, EveryAdmissibleSmallCompositionIsExact) {
  // Exhaustive over A = (M0,M1,M2):(1,d1,d2) (strides chosen so no mode coalesces) and B = s:d,
  // with run-time values: where the rule admits the pair, the result must be A ∘ B (A's last
  // mode unbounded). The rule, mode by mode with r the part of d left: r % M == 0 skips the
  // mode; r < M walks in it, and if r does not divide M the walk must end there
  // (s <= ceil(M/r)); where it goes on past a mode of n = M/r steps, n must divide s. As in
  // CuTe, the stride rule holds for every mode the stride reaches, even for s = 1.
  auto admissible = [](int const (&m)[3], int s, int d) {
    int r = d;
    for (int i = 0; i < 2; ++i) {
      if (r % m[i] == 0) { r /= m[i]; continue; }
      if (r > m[i]) return false;
      int steps = (m[i] + r - 1) / r;
      if (m[i] % r != 0) return s <= steps;
      if (s <= steps) return true;
      if (s % steps != 0) return false;
      s /= steps;
      r = 1;
    }
    return true;
  };
  int checked = 0, cut = 0;  // cut: the stride does not divide the first mode (the relaxed rule)
  for (int m0 = 2; m0 <= 8; ++m0)
    for (int m1 = 2; m1 <= 6; ++m1) {
      int m[3] = {m0, m1, 4};
      auto a = make_layout(make_shape(m0, m1, 4), make_stride(1, 100, 10000));
      auto a_of = [&](int x) { return (x % m0) + 100 * ((x / m0) % m1) + 10000 * (x / (m0 * m1)); };
      for (int s = 1; s <= 12; ++s)
        for (int d = 1; d <= 2 * m0 * m1 + 1; ++d) {
          if (!admissible(m, s, d)) continue;
          auto r = composition(a, make_layout(s, d));
          ASSERT_EQ(int(size(r)), s);
          for (int i = 0; i < s; ++i)
            ASSERT_EQ(int(r(i)), a_of(i * d)) << to_string(a) << " o " << s << ":" << d << " = " << to_string(r);
          ++checked;
          cut += (s > 1 && d < m0 && m0 % d != 0);
        }
    }
  EXPECT_GT(checked, 1500);
  EXPECT_GT(cut, 50);
}

TEST(CompositionRuleDeath, RunTimeInadmissibleCompositionsStop) {
  auto a = make_layout(make_shape(8, 8), make_stride(8, 1));
  // The walk of stride 3 leaves the mode of 8 it does not divide: 0, 24, 48, then index 9 = (1,1).
  EXPECT_DEATH((void)composition(a, make_layout(4, 3)), "inadmissible composition");
  // CuTe computes (3,2):(24,1) here, but index 3 of B is A(9) = 9, not 1: refused.
  EXPECT_DEATH((void)composition(a, make_layout(6, 3)), "inadmissible composition");
  // Stride divisibility: 12 is neither a multiple of the mode's 8 nor smaller than it.
  EXPECT_DEATH((void)composition(a, make_layout(2, 12)), "inadmissible composition");
}

TEST(ComplementRule, StridesNeedNotDivideOneAnother) {
  // CuTe's complement rounds the gaps down instead of requiring divisibility; only a stride
  // below the extent already covered (a non-injective layout) is refused.
  EXPECT_EQ(to_string(complement(Layout<Shape<_4, _6>, Stride<_1, _6>>{})), "_1:_0");  // holes 4,5 stay holes
  EXPECT_EQ(to_string(complement(Layout<Shape<_4, _2>, Stride<_1, _10>>{}, Int<80>{})), "(_2,_4):(_4,_20)");
  EXPECT_EQ(to_string(complement(Layout<Shape<_3, _6>, Stride<_1, _10>>{})), "_3:_3");
  // CuTe's complement unit test: static layouts with their codomains.
  expect_complement(Layout<Shape<_4, _6>, Stride<_1, _6>>{}, Int<29>{});
  expect_complement(Layout<Shape<_4, _2>, Stride<_1, _10>>{}, Int<15>{});
  expect_complement(Layout<Shape<_4, _2>, Stride<_1, _16>>{}, Int<20>{});
  expect_complement(Layout<Shape<_2, _4, _8>, Stride<_8, _1, _64>>{}, Int<512>{});
  expect_complement(Layout<Shape<_2, _4, _8>, Stride<_8, _1, _0>>{}, Int<460>{});
  expect_complement(Layout<Shape<Shape<_2, _2>, Shape<_2, _2>>, Stride<Stride<_1, _32>, Stride<_8, _4>>>{}, Int<64>{});
  expect_complement(Layout<_4, _2>{}, Int<19>{});
  expect_complement(make_layout(make_shape(3, 6), make_stride(_1{}, _10{})), 53);
  // A product that needs such a complement now exists (CuTe's logical_product unit test).
  auto p = logical_product(Layout<Shape<Shape<_4, _6>>, Stride<Stride<_1, _6>>>{}, Layout<_3, _1>{});
  EXPECT_EQ(to_string(p), "(((_4,_6)),_3):(((_1,_6)),_36)");
  std::set<int> seen;
  for (int i = 0; i < int(size(p)); ++i) seen.insert(int(p(i)));
  EXPECT_EQ(int(seen.size()), int(size(p)));  // the repetitions do not overlap
}

TEST(ProductModes, SameShapesAndStridesAsCute) {
  // The examples of CuTe's layout-algebra documentation, shape and stride verbatim.
  auto a = Layout<Shape<_2, _2>, Stride<_4, _1>>{};
  EXPECT_EQ(to_string(logical_product(a, Layout<_6, _1>{})), "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))");
  EXPECT_EQ(to_string(logical_product(a, Layout<Shape<_4, _2>, Stride<_2, _1>>{})), "((_2,_2),(_4,_2)):((_4,_1),(_8,_2))");
  auto block = Layout<Shape<_2, _5>, Stride<_5, _1>>{};  // a 2x5 row-major block
  auto tiler = make_tile(Layout<_3, _5>{}, Layout<_4, _6>{});  // <3:5, 4:6>
  auto arrangement = Layout<Shape<_3, _4>>{};                  // 3x4 column-major
  EXPECT_EQ(to_string(logical_product(block, tiler)), "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))");
  EXPECT_EQ(to_string(zipped_product(block, tiler)), "((_2,_5),(_3,_4)):((_5,_1),(_10,_30))");
  EXPECT_EQ(to_string(tiled_product(block, tiler)), "((_2,_5),_3,_4):((_5,_1),_10,_30)");
  EXPECT_EQ(to_string(flat_product(block, tiler)), "(_2,_5,_3,_4):(_5,_1,_10,_30)");
  EXPECT_EQ(to_string(blocked_product(block, arrangement)), "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))");  // CuTe's modes: (block, reps) per mode
  EXPECT_EQ(to_string(raked_product(block, arrangement)), "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))");
  // blocked and raked products compute the same function as the by-mode logical product.
  auto lp = logical_product(block, tiler);
  auto bp = blocked_product(block, arrangement);
  for (int m = 0; m < 6; ++m)
    for (int n = 0; n < 20; ++n) ASSERT_EQ(int(bp(m, n)), int(lp(m, n)));
  // A tiler with fewer modes than the block: the block's other modes stay as they are.
  EXPECT_EQ(to_string(logical_product(block, make_tile(Layout<_3, _5>{}))), "((_2,_3),_5):((_5,_10),_1)");
  EXPECT_EQ(to_string(zipped_product(block, make_tile(Layout<_3, _5>{}))), "((_2),(_3,_5)):((_5),(_10,_1))");
}

TEST(ProductModes, RankOneTilesAndRestsUnpack) {
  // tiled_/flat_ products and divides unpack a rest (or tile) mode that is a single integer, as
  // CuTe's slicing does; they used to fail to compile there.
  EXPECT_EQ(to_string(tiled_product(Layout<_4, _1>{}, Layout<_3, _4>{})), "(_4,_3):(_1,_16)");
  EXPECT_EQ(to_string(flat_product(Layout<_4, _1>{}, Layout<_3, _4>{})), "(_4,_3):(_1,_16)");
  EXPECT_EQ(to_string(flat_product(Layout<Shape<_2, _2>>{}, Layout<Shape<_3, _4>>{})), "(_2,_2,_3,_4):(_1,_2,_4,_12)");
  EXPECT_EQ(to_string(tiled_divide(Layout<_8, _1>{}, Layout<_2, _1>{})), "(_2,_4):(_1,_2)");
  EXPECT_EQ(to_string(flat_divide(Layout<_8, _1>{}, Layout<_2, _1>{})), "(_2,_4):(_1,_2)");
  EXPECT_EQ(to_string(tiled_divide(Layout<Shape<_8, _6>>{}, make_shape(_2{}, _3{}))), "((_2,_3),_4,_2):((_1,_8),_2,_24)");
}

TEST(CastRule, UpcastAndDowncastFollowCute) {
  EXPECT_EQ(to_string(upcast<2>(Layout<Shape<_4, _3>>{})), "(_2,_3):(_1,_2)");
  // A stride below N: its d-spaced elements share units, so the mode shrinks by N/d.
  EXPECT_EQ(to_string(upcast<4>(Layout<Shape<_8, _3>, Stride<_2, _16>>{})), "(_4,_3):(_1,_4)");
  EXPECT_EQ(to_string(upcast<4>(Layout<Shape<_8, _3>, Stride<_0, _16>>{})), "(_8,_3):(_0,_4)");  // broadcast stays
  EXPECT_EQ(to_string(downcast<4>(Layout<Shape<_2, _3>, Stride<_1, _2>>{})), "(_8,_3):(_1,_8)");
}
