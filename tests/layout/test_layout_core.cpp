// Layout library, core: integers, tuples, layouts, printing and the algebra.
// Expected strings are CuTe's documented results (CuTe prints compile-time ints as _N).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "layout/algebra.hpp"
#include "layout/print.hpp"

using namespace mm;

namespace {

// Every index of a layout, in 1-D coordinate order.
template <class L>
std::vector<long> image(L const& l) {
  std::vector<long> v;
  for (int i = 0; i < int(size(l)); ++i) v.push_back(long(l(i)));
  return v;
}

}  // namespace

// ---- integers and tuples ----------------------------------------------------------------------

TEST(LayoutIntTuple, StaticArithmeticStaysStatic) {
  auto p = _4{} * _8{} + _1{};
  static_assert(std::is_same_v<decltype(p), Int<33>>);
  static_assert(std::is_same_v<decltype(min(_4{}, _8{})), _4>);
  static_assert(std::is_same_v<decltype(ceil_div(_7{}, _2{})), _4>);
  static_assert(std::is_same_v<decltype(shape_div(_2{}, _8{})), _1>);
  int four = 4;
  auto q = _8{} * four;  // mixed: run-time
  static_assert(std::is_same_v<decltype(q), int>);
  EXPECT_EQ(q, 32);
  EXPECT_EQ(to_string(_8{}), "_8");
  EXPECT_EQ(to_string(make_shape(_2{}, make_shape(3, _4{}))), "(_2,(3,_4))");
}

TEST(LayoutIntTuple, ProductRankDepthFlatten) {
  auto s = make_shape(make_shape(2, 2), 3, make_shape(_4{}, make_shape(_1{}, 5)));
  EXPECT_EQ(product(s), 2 * 2 * 3 * 4 * 5);
  EXPECT_EQ(int(rank(s)), 3);
  EXPECT_EQ(int(depth(s)), 3);
  EXPECT_EQ(int(depth(7)), 0);
  EXPECT_EQ(to_string(flatten(s)), "(2,2,3,_4,_1,5)");
  EXPECT_EQ(to_string(product_each(s)), "(4,3,20)");
  EXPECT_EQ(to_string(compact_col_major(make_shape(4, make_shape(2, 3)))), "(_1,(4,8))");
  EXPECT_EQ(to_string(compact_row_major(make_shape(_4{}, _2{}, _3{}))), "(_6,_3,_1)");
  EXPECT_EQ(to_string(dice(Step<_1, X, _1>{}, make_shape(_128{}, _64{}, _8{}))), "(_128,_8)");
  EXPECT_TRUE(bool(elem_less(make_coord(1, 2), make_shape(2, 3))));
  EXPECT_FALSE(bool(elem_less(make_coord(1, 3), make_shape(2, 3))));
  auto [m, n] = make_shape(5, 7);
  EXPECT_EQ(m * n, 35);
}

TEST(LayoutIntTuple, StaticTuplesAreEmpty) {
  static_assert(std::is_empty_v<decltype(make_shape(_4{}, make_shape(_2{}, _8{})))>);
  static_assert(sizeof(make_shape(4, _8{})) == sizeof(int));
}

// ---- layouts: construction, indexing, printing -----------------------------------------------

TEST(LayoutBasics, PrintsLikeCute) {
  EXPECT_EQ(to_string(make_layout(make_shape(4, 2), make_stride(1, 4))), "(4,2):(1,4)");
  EXPECT_EQ(to_string(make_layout(make_shape(make_shape(2, 2), 3), make_stride(make_stride(1, 4), 2))),
            "((2,2),3):((1,4),2)");
  EXPECT_EQ(to_string(make_layout(8, 1)), "8:1");
  EXPECT_EQ(to_string(make_layout(make_shape(_4{}, _2{}))), "(_4,_2):(_1,_4)");
  EXPECT_EQ(to_string(make_layout(make_shape(4, 2))), "(4,2):(_1,4)");
  EXPECT_EQ(to_string(make_layout(make_shape(_4{}, _2{}), LayoutRight{})), "(_4,_2):(_2,_1)");
  EXPECT_EQ(to_string(make_row_major(make_shape(_2{}, _3{}, _4{}))), "(_2,_3,_4):(_12,_4,_1)");
  EXPECT_EQ(to_string(make_layout(make_layout(_4{}, _1{}), make_layout(_2{}, _4{}))), "(_4,_2):(_1,_4)");
}

TEST(LayoutBasics, SizeCosizeRankDepthModes) {
  auto l = make_layout(make_shape(_4{}, make_shape(_2{}, _3{})), make_stride(_1{}, make_stride(_4{}, _8{})));
  static_assert(decltype(size(l))::value == 24);
  static_assert(cosize_v<decltype(l)> == 24);
  static_assert(size_v<decltype(l)> == 24);
  EXPECT_EQ(int(rank(l)), 2);
  EXPECT_EQ(int(depth(l)), 2);
  EXPECT_EQ(to_string(shape<1>(l)), "(_2,_3)");
  EXPECT_EQ(to_string(stride<1, 0>(l)), "_4");
  EXPECT_EQ(to_string(layout<1>(l)), "(_2,_3):(_4,_8)");
  EXPECT_EQ(int(size<1>(l)), 6);
  EXPECT_EQ(int(cosize(make_layout(make_shape(_32{}, _32{}), make_stride(_1{}, _33{})))), 31 + 31 * 33 + 1);
}

TEST(LayoutBasics, CoordinatesAndIndices) {
  // (4,(2,3)):(1,(4,8)) is the compact column-major layout of 24 elements with a nested mode.
  auto l = make_layout(make_shape(4, make_shape(2, 3)), make_stride(1, make_stride(4, 8)));
  EXPECT_EQ(l(17), 17);                                       // 1-D coordinate
  EXPECT_EQ(l(1, 4), 1 + 4 * 4);                              // 2-D coordinate: column 4 = (0,2)
  EXPECT_EQ(l(make_coord(1, make_coord(0, 2))), 1 + 16);     // hierarchical coordinate
  EXPECT_EQ(to_string(idx2crd(17, make_shape(4, make_shape(2, 3)))), "(1,(0,2))");
  EXPECT_EQ(crd2idx(make_coord(1, make_coord(0, 2)), make_shape(4, make_shape(2, 3))), 17);
  // Row-major: get_hier_coord inverts it.
  auto r = make_layout(make_shape(_32{}, _8{}), LayoutRight{});
  EXPECT_EQ(to_string(r.get_hier_coord(19)), "(2,3)");
  for (int i = 0; i < 256; ++i) EXPECT_EQ(int(r(r.get_hier_coord(i))), i);
}

TEST(LayoutBasics, IndexCoordinateRoundTrips) {
  auto shapes = make_tuple(make_shape(_4{}, _2{}), make_shape(3, make_shape(2, 5)), make_shape(make_shape(_2{}, 3), _4{}, 2));
  for_each(shapes, [](auto const& s) {
    for (int i = 0; i < int(size(s)); ++i) {
      auto c = idx2crd(i, s);
      EXPECT_EQ(int(crd2idx(c, s)), i) << to_string(s) << " i=" << i;
    }
  });
}

TEST(LayoutBasics, SliceSelectFlattenAppendGroup) {
  auto l = make_layout(make_shape(_4{}, _3{}), make_stride(_1{}, _4{}));
  EXPECT_EQ(to_string(l(_, 2)), "(_4):(_1)");
  EXPECT_EQ(to_string(l(1, _)), "(_3):(_4)");
  auto h = make_layout(make_shape(make_shape(2, 3), make_shape(4, 5)), make_stride(make_stride(1, 2), make_stride(6, 24)));
  EXPECT_EQ(to_string(h(make_coord(_, 1), make_coord(2, _))), "(2,5):(1,24)");
  EXPECT_EQ(int(get<1>(slice_and_offset(make_coord(_, 1), l))), 4);
  EXPECT_EQ(to_string(select<1, 0>(l)), "(_3,_4):(_4,_1)");
  EXPECT_EQ(to_string(flatten(h)), "(2,3,4,5):(1,2,6,24)");
  EXPECT_EQ(to_string(append(l, make_layout(_2{}, _12{}))), "(_4,_3,_2):(_1,_4,_12)");
  EXPECT_EQ(to_string(append<3>(l)), "(_4,_3,_1):(_1,_4,_0)");
  EXPECT_EQ(to_string(group<1, 3>(make_layout(make_shape(4, 2, 3), make_stride(1, 4, 8)))), "(4,(2,3)):(1,(4,8))");
  EXPECT_EQ(to_string(take<1, 2>(make_layout(make_shape(4, 2, 3), make_stride(1, 4, 8)))), "(2):(4)");
}

TEST(LayoutBasics, PrintLayoutTable) {
  std::ostringstream os;
  print_layout(make_layout(make_shape(_2{}, _3{}), LayoutRight{}), os);
  EXPECT_EQ(os.str(),
            "(_2,_3):(_3,_1)\n"
            "       0   1   2\n"
            "    +---+---+---+\n"
            "  0 | 0 | 1 | 2 |\n"
            "    +---+---+---+\n"
            "  1 | 3 | 4 | 5 |\n"
            "    +---+---+---+\n");
}

// ---- algebra: CuTe documentation's worked examples --------------------------------------------

TEST(LayoutAlgebraDocs, Coalesce) {
  auto l = Layout<Shape<_2, Shape<_1, _6>>, Stride<_1, Stride<_6, _2>>>{};
  EXPECT_EQ(to_string(coalesce(l)), "_12:_1");
  EXPECT_EQ(to_string(coalesce(l, Step<_1, _1>{})), "(_2,_6):(_1,_2)");
  EXPECT_EQ(to_string(coalesce(make_layout(make_shape(_2{}, _4{}), make_stride(_1{}, _2{})))), "_8:_1");
  EXPECT_EQ(to_string(coalesce(make_layout(make_shape(_2{}, _4{}), make_stride(_4{}, _1{})))), "(_2,_4):(_4,_1)");
  EXPECT_EQ(to_string(coalesce(make_layout(make_shape(_1{}, _1{})))), "_1:_0");
}

TEST(LayoutAlgebraDocs, Composition) {
  // 20:2 o (5,4):(4,1) = (5,4):(8,2)
  EXPECT_EQ(to_string(composition(Layout<_20, _2>{}, Layout<Shape<_5, _4>, Stride<_4, _1>>{})), "(_5,_4):(_8,_2)");
  // (10,2):(16,4) o (5,4):(1,5) = (5,(2,2)):(16,(80,4))
  EXPECT_EQ(to_string(composition(Layout<Shape<_10, _2>, Stride<_16, _4>>{}, Layout<Shape<_5, _4>, Stride<_1, _5>>{})),
            "(_5,(_2,_2)):(_16,(_80,_4))");
  // (6,2):(8,2) o (4,3):(3,1) = ((2,2),3):((24,2),8)
  EXPECT_EQ(to_string(composition(Layout<Shape<_6, _2>, Stride<_8, _2>>{}, Layout<Shape<_4, _3>, Stride<_3, _1>>{})),
            "((_2,_2),_3):((_24,_2),_8)");
  // By-mode composition with a tiler, and a shape as a tiler.
  auto a = make_layout(make_shape(_12{}, make_shape(_4{}, _8{})), make_stride(Int<59>{}, make_stride(_13{}, _1{})));
  auto tiler = make_tile(Layout<_3, _4>{}, Layout<_8, _2>{});
  EXPECT_EQ(to_string(composition(a, tiler)), "(_3,(_2,_4)):(_236,(_26,_1))");
  EXPECT_EQ(to_string(composition(a, make_shape(_3{}, _8{}))), "(_3,(_4,_2)):(_59,(_13,_1))");
  // The same with run-time integers: same function, dynamic types.
  auto ad = make_layout(make_shape(12, make_shape(4, 8)), make_stride(59, make_stride(13, 1)));
  EXPECT_EQ(to_string(composition(ad, make_tile(make_layout(3, 4), make_layout(8, 2)))), "(3,(2,4)):(236,(26,1))");
}

TEST(LayoutAlgebraDocs, Complement) {
  EXPECT_EQ(to_string(complement(Layout<_4, _1>{}, _24{})), "_6:_4");
  EXPECT_EQ(to_string(complement(Layout<_6, _4>{}, _24{})), "_4:_1");
  EXPECT_EQ(to_string(complement(Layout<Shape<_4, _6>, Stride<_1, _4>>{}, _24{})), "_1:_0");
  EXPECT_EQ(to_string(complement(Layout<_4, _2>{}, _24{})), "(_2,_3):(_1,_8)");
  EXPECT_EQ(to_string(complement(Layout<Shape<_2, _4>, Stride<_1, _6>>{}, _24{})), "_3:_2");
  EXPECT_EQ(to_string(complement(Layout<Shape<_2, _2>, Stride<_1, _6>>{}, _24{})), "(_3,_2):(_2,_12)");
  EXPECT_EQ(to_string(complement(Layout<_4, _1>{}, 24)), "6:_4");  // run-time cotarget
}

TEST(LayoutAlgebraDocs, Divide) {
  auto a = Layout<Shape<_4, _2, _3>, Stride<_2, _1, _8>>{};
  EXPECT_EQ(to_string(logical_divide(a, Layout<_4, _2>{})), "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))");
  auto a2 = make_layout(make_shape(_9{}, make_shape(_4{}, _8{})), make_stride(Int<59>{}, make_stride(_13{}, _1{})));
  auto tiler = make_tile(Layout<_3, _3>{}, Layout<Shape<_2, _4>, Stride<_1, _8>>{});
  auto ld = logical_divide(a2, tiler);
  EXPECT_EQ(to_string(shape(ld)), "((_3,_3),((_2,_4),(_2,_2)))");
  auto zd = zipped_divide(a2, tiler);
  EXPECT_EQ(to_string(layout<0>(zd)), "(_3,(_2,_4)):(_177,(_13,_2))");
  EXPECT_EQ(to_string(layout<0>(zd)), to_string(composition(a2, tiler)));
  EXPECT_EQ(int(size<1>(zd)), 12);
  // zipped/tiled/flat divide of a 2-D matrix by a 2-D tile shape.
  auto m = make_layout(make_shape(_12{}, _32{}));
  EXPECT_EQ(to_string(zipped_divide(m, make_shape(_4{}, _8{}))), "((_4,_8),(_3,_4)):((_1,_12),(_4,_96))");
  EXPECT_EQ(to_string(tiled_divide(m, make_shape(_4{}, _8{}))), "((_4,_8),_3,_4):((_1,_12),_4,_96)");
  EXPECT_EQ(to_string(flat_divide(m, make_shape(_4{}, _8{}))), "(_4,_8,_3,_4):(_1,_12,_4,_96)");
  EXPECT_EQ(to_string(zipped_divide(make_layout(make_shape(12, 32)), make_shape(_4{}, _8{}))),
            "((_4,_8),(3,4)):((_1,12),(_4,96))");
}

TEST(LayoutAlgebraDocs, Product) {
  auto a = Layout<Shape<_2, _2>, Stride<_4, _1>>{};
  EXPECT_EQ(to_string(logical_product(a, Layout<_6, _1>{})), "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))");
  EXPECT_EQ(to_string(logical_product(a, Layout<Shape<_4, _2>, Stride<_2, _1>>{})), "((_2,_2),(_4,_2)):((_4,_1),(_8,_2))");
  auto tile = Layout<Shape<_2, _5>, Stride<_5, _1>>{};
  auto reps = Layout<Shape<_3, _4>, Stride<_1, _3>>{};
  // CuTe's worked example: mode i is (block_i, reps_i), not coalesced ((2,3):(5,10) stays two modes).
  EXPECT_EQ(to_string(blocked_product(tile, reps)), "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))");
  EXPECT_EQ(to_string(raked_product(tile, reps)), "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))");
}

TEST(LayoutAlgebraDocs, InversesTileToShapeUpcast) {
  EXPECT_EQ(to_string(right_inverse(Layout<Shape<_4, _2>, Stride<_2, _1>>{})), "(_2,_4):(_4,_1)");
  EXPECT_EQ(to_string(right_inverse(Layout<Shape<_4, _8>, Stride<_1, _4>>{})), "_32:_1");
  // CuTe's left_inverse: indices the layout never produces go through stride-0 gap modes.
  EXPECT_EQ(to_string(left_inverse(Layout<_4, _2>{})), "(_2,_4):(_0,_1)");
  EXPECT_EQ(to_string(left_inverse(Layout<_8, _2>{})), "(_2,_8):(_0,_1)");
  EXPECT_EQ(to_string(left_inverse(Layout<Shape<_4, _8>>{})), "_32:_1");
  EXPECT_EQ(to_string(left_inverse(Layout<Shape<_4, _8>, Stride<_8, _1>>{})), "(_8,_4):(_4,_1)");
  EXPECT_EQ(to_string(left_inverse(Layout<Shape<_2, _3, _4>, Stride<_12, _1, _3>>{})), "(_12,_2):(_2,_1)");
  EXPECT_EQ(to_string(left_inverse(Layout<Shape<_2, _4>, Stride<_1, _6>>{})), "(_6,_4):(_1,_2)");
  EXPECT_EQ(to_string(tile_to_shape(Layout<Shape<_2, _2>>{}, make_shape(_4{}, _6{}))), "((_2,_2),(_2,_3)):((_1,_4),(_2,_8))");
  EXPECT_EQ(to_string(upcast<2>(Layout<Shape<_4, _3>>{})), "(_2,_3):(_1,_2)");
  EXPECT_EQ(to_string(downcast<2>(Layout<Shape<_2, _3>>{})), "(_4,_3):(_1,_4)");
  EXPECT_EQ(to_string(upcast<4>(make_layout(make_shape(_8{}, 16), make_stride(16, _1{})))), "(_8,4):(4,_1)");
}

// ---- algebra: property tests ------------------------------------------------------------------

TEST(LayoutAlgebraProperties, CompositionIsFunctionComposition) {
  std::mt19937 rng(7);
  auto pick = [&](std::vector<int> const& v) { return v[rng() % v.size()]; };
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // A: three modes of powers of two with strides that need not be compact (all admissible).
    auto a = make_layout(make_shape(pick({1, 2, 4, 8}), pick({1, 2, 4}), pick({2, 4, 8})),
                         make_stride(pick({1, 2, 4}), pick({1, 8, 16}), pick({0, 32, 64})));
    auto b1 = make_layout(pick({1, 2, 4, 8, 16}), pick({0, 1, 2, 4, 8}));
    // B's modes must not carry into each other (CuTe's admissibility, not checked by
    // either library): the second stride is a multiple of the first mode's extent.
    int s0 = pick({1, 2, 4}), d0 = pick({1, 2, 4});
    auto b2 = make_layout(make_shape(s0, pick({2, 4})), make_stride(d0, s0 * d0 * pick({1, 2})));
    auto r1 = composition(a, b1);
    auto r2 = composition(a, b2);
    for (int i = 0; i < int(size(b1)); ++i) ASSERT_EQ(r1(i), a(b1(i))) << to_string(a) << " o " << to_string(b1);
    for (int i = 0; i < int(size(b2)); ++i) ASSERT_EQ(r2(i), a(b2(i))) << to_string(a) << " o " << to_string(b2);
    EXPECT_EQ(int(size(r1)), int(size(b1)));
    EXPECT_EQ(int(size(r2)), int(size(b2)));
    checked += 2;
  }
  EXPECT_EQ(checked, 800);
}

TEST(LayoutAlgebraProperties, CompositionNonPowerOfTwo) {
  auto check = [](auto a, auto b) {
    auto r = composition(a, b);
    for (int i = 0; i < int(size(b)); ++i) ASSERT_EQ(int(r(i)), int(a(b(i)))) << to_string(a) << " o " << to_string(b);
  };
  check(make_layout(make_shape(6, 2), make_stride(8, 2)), make_layout(make_shape(4, 3), make_stride(3, 1)));
  check(make_layout(make_shape(_6{}, _10{})), make_layout(make_shape(_3{}, _5{}), make_stride(_2{}, _12{})));
  check(make_layout(make_shape(12, 5), make_stride(5, 1)), make_layout(make_shape(4, 5), make_stride(3, 12)));
  check(make_layout(make_shape(_3{}, _6{}, _5{})), make_layout(make_shape(_9{}, _10{}), make_stride(_1{}, _9{})));
}

namespace {
// Static layouts for the properties that need compile-time strides.
using StaticLayouts = mm::tuple<Layout<_4, _1>, Layout<_4, _2>, Layout<Shape<_2, _2>, Stride<_1, _6>>,
                                Layout<Shape<_2, _4>, Stride<_1, _6>>, Layout<Shape<_4, _8>, Stride<_8, _1>>,
                                Layout<Shape<_2, _3>, Stride<_3, _1>>, Layout<Shape<Shape<_2, _2>, _2>, Stride<Stride<_1, _8>, _2>>,
                                Layout<Shape<_32, _8>, Stride<_8, _1>>, Layout<Shape<_2, _4, _2>, Stride<_8, _1, _32>>,
                                Layout<_1, _0>, Layout<Shape<_4, _2>, Stride<_0, _1>>>;
}

TEST(LayoutAlgebraProperties, Complement) {
  for_each(StaticLayouts{}, [](auto a) {
    for (int cotarget_mult : {1, 2, 3}) {
      int cotarget = int(cosize(a)) * cotarget_mult * 2;
      auto c = complement(a, cotarget);
      // Ordered: strides positive and increasing along the 1-D coordinate.
      for (int i = 1; i < int(size(c)); ++i) EXPECT_LT(c(i - 1), c(i)) << to_string(a) << " " << to_string(c);
      // Disjoint: no element of the complement but 0 is in the image of a.
      std::set<long> img;
      for (int j = 0; j < int(size(a)); ++j) img.insert(long(a(j)));
      for (int i = 1; i < int(size(c)); ++i) EXPECT_FALSE(img.count(long(c(i)))) << to_string(a) << " " << to_string(c);
      // Size: bounded by the cotarget.
      EXPECT_LE(long(size(c)), long(cotarget)) << to_string(a);
    }
  });
}

TEST(LayoutAlgebraProperties, RightAndLeftInverse) {
  for_each(StaticLayouts{}, [](auto l) {
    auto r = right_inverse(l);
    for (int i = 0; i < int(size(r)); ++i) EXPECT_EQ(int(l(r(i))), i) << to_string(l) << " " << to_string(r);
  });
  auto compact = make_tuple(Layout<Shape<_4, _8>, Stride<_8, _1>>{}, Layout<Shape<_2, _3>, Stride<_3, _1>>{},
                            Layout<Shape<Shape<_2, _2>, _2>, Stride<Stride<_1, _4>, _2>>{}, Layout<_4, _2>{},
                            Layout<Shape<_2, _4>, Stride<_1, _6>>{}, Layout<Shape<_3, _2>, Stride<_2, _12>>{});
  for_each(compact, [](auto l) {
    auto li = left_inverse(l);
    for (int i = 0; i < int(size(l)); ++i) EXPECT_EQ(int(li(l(i))), i) << to_string(l) << " " << to_string(li);
  });
}

TEST(LayoutAlgebraProperties, DivideAndProductSizes) {
  auto mats = make_tuple(make_layout(make_shape(_16{}, _32{})), make_layout(make_shape(_16{}, _32{}), LayoutRight{}),
                         make_layout(make_shape(64, 48)), make_layout(make_shape(_32{}, _32{}), make_stride(_1{}, _33{})));
  auto tiles = make_tuple(make_shape(_4{}, _8{}), make_shape(_16{}, _2{}), make_shape(_2{}, _16{}));
  for_each(mats, [&](auto a) {
    for_each(tiles, [&](auto t) {
      auto z = zipped_divide(a, t);
      EXPECT_EQ(int(size(z)), int(size(a)));
      EXPECT_EQ(int(size<0>(z)), int(size(t)));
      EXPECT_EQ(to_string(layout<0>(z)), to_string(composition(a, t)));  // first mode is the tile
      // Every element of a appears exactly once.
      std::vector<long> ia = image(a), iz = image(z);
      std::sort(ia.begin(), ia.end());
      std::sort(iz.begin(), iz.end());
      EXPECT_EQ(ia, iz);
      auto ld = logical_divide(a, t);
      EXPECT_EQ(int(size<0, 0>(ld)), int(get<0>(t)));
    });
  });
  auto blocks = make_tuple(Layout<Shape<_2, _2>>{}, Layout<Shape<_2, _5>, Stride<_5, _1>>{}, Layout<_4, _2>{});
  auto arrs = make_tuple(Layout<Shape<_2, _4>>{}, Layout<_6, _1>{}, Layout<Shape<_2, _2>, Stride<_2, _1>>{});
  for_each(blocks, [&](auto a) {
    for_each(arrs, [&](auto b) {
      auto p = logical_product(a, b);
      EXPECT_EQ(int(size(p)), int(size(a)) * int(size(b)));
      EXPECT_EQ(to_string(layout<0>(p)), to_string(a));  // first mode is the block
      auto bp = blocked_product(a, b);
      auto rp = raked_product(a, b);
      EXPECT_EQ(int(size(bp)), int(size(a)) * int(size(b)));
      EXPECT_EQ(int(size(rp)), int(size(a)) * int(size(b)));
    });
  });
}

TEST(LayoutAlgebraProperties, StaticAndDynamicComputeTheSameFunction) {
  auto s = make_layout(make_shape(_8{}, make_shape(_2{}, _4{})), make_stride(_4{}, make_stride(_1{}, _32{})));
  auto d = make_layout(make_shape(8, make_shape(2, 4)), make_stride(4, make_stride(1, 32)));
  static_assert(std::is_empty_v<decltype(s)>);
  EXPECT_EQ(image(s), image(d));
  auto ts = make_shape(_4{}, _2{});
  EXPECT_EQ(image(zipped_divide(s, ts)), image(zipped_divide(d, ts)));
  EXPECT_EQ(image(composition(s, Layout<_8, _2>{})), image(composition(d, make_layout(8, 2))));
  EXPECT_EQ(image(logical_product(Layout<_4, _1>{}, Layout<_3, _1>{})), image(logical_product(make_layout(4, 1), Layout<_3, _1>{})));
}

TEST(LayoutAlgebraDeath, DynamicInadmissibleCompositionStops) {
  auto a = make_layout(make_shape(8, 8), make_stride(8, 1));
  EXPECT_DEATH((void)composition(a, make_layout(4, 3)), "inadmissible composition");
}
