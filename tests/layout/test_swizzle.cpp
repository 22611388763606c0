// Layout library, swizzles and swizzled (composed) layouts.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

TEST(Swizzle, PrintsLikeCute) {
  auto sw = composition(Swizzle<3, 4, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{});
  EXPECT_EQ(to_string(sw), "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)");
}

TEST(Swizzle, BijectionAndStaticValues) {
  Swizzle<3, 2, 3> sw;
  std::set<int> seen;
  for (int i = 0; i < 256; ++i) seen.insert(sw(i));
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(*seen.rbegin(), 255);
  static_assert(std::is_same_v<decltype(sw(Int<32>{})), Int<32 ^ 4>>);  // bit 5 -> bit 2
  EXPECT_EQ(sw(0b100000), 0b100100);
}

TEST(Swizzle, RowMajorFloatTileColumnWalkIsConflictFree) {
  // 32x32 floats, row-major: walking a column hits one bank 32 times; Swizzle<5,0,5> spreads it.
  auto plain = make_layout(make_shape(_32{}, _32{}), LayoutRight{});
  auto swz = composition(Swizzle<5, 0, 5>{}, plain);
  for (int n = 0; n < 32; ++n) {
    std::set<int> banks_plain, banks_swz;
    for (int m = 0; m < 32; ++m) {
      banks_plain.insert(int(plain(m, n)) % 32);
      banks_swz.insert(int(swz(m, n)) % 32);
    }
    EXPECT_EQ(banks_plain.size(), 1u);
    EXPECT_EQ(banks_swz.size(), 32u);
  }
  static_assert(cosize_v<decltype(swz)> == 1024);
}

TEST(Swizzle, TensorSlicingAndPartitioningKeepTheSwizzle) {
  std::vector<int> buf(1024, -1);
  auto sl = composition(Swizzle<3, 2, 3>{}, make_layout(make_shape(_32{}, _32{}), LayoutRight{}));
  auto s = make_tensor(buf.data(), sl);
  for (int m = 0; m < 32; ++m)
    for (int n = 0; n < 32; ++n) s(m, n) = m * 32 + n;
  // Every element stored once: the swizzle permutes within the buffer.
  std::set<int> vals(buf.begin(), buf.end());
  EXPECT_EQ(vals.size(), 1024u);
  auto row = s(5, _);
  for (int n = 0; n < 32; ++n) EXPECT_EQ(row(n), 5 * 32 + n);
  auto part = local_partition(s, Layout<Shape<_32, _8>>{}, 77);  // (1,4)
  for (int j = 0; j < 4; ++j) EXPECT_EQ(part(0, j), s(77 % 32, 77 / 32 + 8 * j));
  auto tile = local_tile(s, make_shape(_8{}, _16{}), make_coord(1, 1));
  EXPECT_EQ(tile(3, 4), s(8 + 3, 16 + 4));
  auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<int>, int>{}, Layout<Shape<_32, _8>>{}, Layout<Shape<_1, _4>>{});
  auto tp = tc.get_slice(3).partition_S(s);
  EXPECT_EQ(int(size(tp)), 4);
}
