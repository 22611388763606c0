// The TMA copy built from a shared layout (layout/copy_traits_sm90_tma.hpp), on the CPU: the boxes,
// swizzle and transaction bytes it reads off the Hopper chapters' stage layouts, the multicast split,
// a layout TMA cannot write box by box refused, and the GMMA rings (gemm/smem_layout_sm90.hpp) equal
// to the layouts chapter 09 used to spell out by hand.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <string>

#include "gemm/smem_layout_sm90.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"

using namespace mm;
using bf16 = __nv_bfloat16;

namespace {

using RingA = GmmaRing<bf16, GmmaMajor::K, _128, _64, 4>;    // A, and B of RCR: (128,64,4)
using RingBK = GmmaRing<bf16, GmmaMajor::K, _256, _64, 4>;   // B of RCR: (256,64,4)
using RingBMN = GmmaRing<bf16, GmmaMajor::MN, _256, _64, 4>; // B of RRR: (256,64,4)

TEST(TmaBoxes, KMajorStageIsOneBoxOfOneSwizzleRowByEveryRow) {
  using Boxes = TmaBoxes<bf16, GmmaStage<RingA>>;
  EXPECT_EQ(Boxes::kContiguous, 1);  // K
  EXPECT_EQ(Boxes::kSwizzle, TmaSwizzle::b128);
  EXPECT_EQ(Boxes::kBoxInner, 64);   // 128 bytes of k
  EXPECT_EQ(Boxes::kBoxOuter, 128);  // every row
  EXPECT_EQ(Boxes::kBoxes, 1);
  EXPECT_EQ(Boxes::kTransactionBytes, 128u * 64u * 2u);
  EXPECT_EQ(Boxes::layout_rejects(), "");
}

TEST(TmaBoxes, MNMajorStageIsOneBoxPerPanelOf64Columns) {
  using Boxes = TmaBoxes<bf16, GmmaStage<RingBMN>>;
  EXPECT_EQ(Boxes::kContiguous, 0);  // N
  EXPECT_EQ(Boxes::kBoxInner, 64);
  EXPECT_EQ(Boxes::kBoxOuter, 64);   // all 64 k of the stage
  EXPECT_EQ(Boxes::kBoxes, 4);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(Boxes::mode0_origin(b), 64 * b);  // panel b starts at n = 64b
    EXPECT_EQ(Boxes::mode1_origin(b), 0);
  }
  EXPECT_EQ(Boxes::kTransactionBytes, 256u * 64u * 2u);
  EXPECT_EQ(Boxes::layout_rejects(), "");
}

TEST(TmaBoxes, AMulticastSplitsTheBoxesAmongTheBlocks) {
  // RCR's B shared by 2 blocks: the one box becomes two of 128 rows; each block issues one, and each
  // block's barrier still expects the whole stage.
  using K2 = TmaBoxes<bf16, GmmaStage<RingBK>, 2>;
  EXPECT_EQ(K2::kBoxes, 2);
  EXPECT_EQ(K2::kBoxesPerBlock, 1);
  EXPECT_EQ(K2::kBoxOuter, 128);
  EXPECT_EQ(K2::mode0_origin(1), 128);
  EXPECT_EQ(K2::kTransactionBytes, 256u * 64u * 2u);
  EXPECT_EQ(K2::layout_rejects(), "");
  // RRR's B: four panels, two per block.
  using MN2 = TmaBoxes<bf16, GmmaStage<RingBMN>, 2>;
  EXPECT_EQ(MN2::kBoxes, 4);
  EXPECT_EQ(MN2::kBoxesPerBlock, 2);
}

TEST(TmaBoxes, KMajorStageOf128KIsTwoPanelsTheSecondAfterEveryRow) {
  // K steps of 128 bf16 (chapter 11's appendix tiles 128×96 and 128×128 of 128 k, swap_ab's 16-wide
  // tile): the ring tiles the 8×64 atom over rows first, so k 64..127 of the stage start after all
  // its rows; TMA fills it as two boxes of one swizzle row (64 k) by every row, the second at that
  // element, and wgmma's k-blocks 4..7 (k = 64, 80, ...) start inside that second panel.
  using RingA128 = GmmaRing<bf16, GmmaMajor::K, _128, _128, 3>;  // A: (128,128,3)
  using RingB96 = GmmaRing<bf16, GmmaMajor::K, Int<96>, _128, 3>;  // B of RCR: (96,128,3)
  using A = TmaBoxes<bf16, GmmaStage<RingA128>>;
  EXPECT_EQ(A::kContiguous, 1);  // K
  EXPECT_EQ(A::kBoxInner, 64);   // a box is one 128-byte swizzle row wide ...
  EXPECT_EQ(A::kBoxOuter, 128);  // ... by every row
  EXPECT_EQ(A::kBoxes, 2);
  EXPECT_EQ(A::mode0_origin(1), 0);
  EXPECT_EQ(A::mode1_origin(1), 64);
  EXPECT_EQ(int(RingA128{}(0, 64, 0)), 128 * 64);  // panel 1: after the 128 rows of panel 0
  EXPECT_EQ(int(RingA128{}(0, 0, 1)), 128 * 128);  // stage 1 after both panels
  EXPECT_EQ(A::kTransactionBytes, 128u * 128u * 2u);
  EXPECT_EQ(A::layout_rejects(), "");
  using B = TmaBoxes<bf16, GmmaStage<RingB96>>;
  EXPECT_EQ(B::kBoxes, 2);
  EXPECT_EQ(B::kBoxOuter, 96);
  EXPECT_EQ(int(RingB96{}(0, 64, 0)), 96 * 64);
  EXPECT_EQ(B::kTransactionBytes, 96u * 128u * 2u);
  EXPECT_EQ(B::layout_rejects(), "");
  // A consumer's 64-row slice of the stage, k-block 4 (k 64..79): row r of it one 128-byte swizzle row
  // below row r - 1 within each 8-row pattern, the patterns 1024 bytes apart, as wgmma's K-major SW128
  // descriptor reads it from the slice's first element.
  // (Consumer 1's slice: rows 64..127; k-block 4: k 64..79.)
  const RingA128 ring{};
  EXPECT_EQ(int(ring(64, 64, 0)), 128 * 64 + 64 * 64);                 // its first element, 24 KB in
  EXPECT_EQ(int(ring(72, 64, 0)) - int(ring(64, 64, 0)), 8 * 64);      // the next 8-row pattern: 1024 bytes on
  EXPECT_EQ(int(ring(65, 64, 0)) - int(ring(64, 64, 0)), 64 + 8);      // row 1 of a pattern: 128 bytes on, 16 B swizzled
}

TEST(TmaBoxes, ALayoutTmaCannotWriteBoxByBoxIsRefused) {
  // K-major rows of 64 k, but the rows 65 elements apart (a padded layout): a box would not land
  // densely, and make_tma_copy must say so rather than build a map that scatters the tile.
  using Padded = Layout<Shape<_128, _64>, Stride<Int<65>, _1>>;
  const std::string why = TmaBoxes<bf16, Padded>::layout_rejects();
  EXPECT_NE(why.find("is not where TMA writes it"), std::string::npos) << why;
}

TEST(TmaBoxes, TheEpiloguePieceIsOneBoxOf64By64) {
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{}, make_shape(_64{}, _64{})));
  using Boxes = TmaBoxes<bf16, Piece>;
  EXPECT_EQ(Boxes::kContiguous, 1);  // N: C is row-major
  EXPECT_EQ(Boxes::kBoxes, 1);
  EXPECT_EQ(Boxes::kBoxInner, 64);
  EXPECT_EQ(Boxes::kBoxOuter, 64);
  EXPECT_EQ(Boxes::layout_rejects(), "");
}

// The rings from the library's GMMA atoms are the very layouts chapter 09 wrote by hand before (the
// same function of every coordinate), so the kernels read and write the same addresses.
TEST(GmmaRing, EqualsTheHandWrittenLayoutsOfChapter09) {
  auto old_k = tile_to_shape(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}),
                             make_shape(_256{}, _64{}, _4{}));
  auto old_mn = tile_to_shape(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _64>, Stride<_1, _64>>{}),
                              make_shape(_256{}, _64{}, _4{}));
  const RingBK new_k{};
  const RingBMN new_mn{};
  for (int s = 0; s < 4; ++s)
    for (int k = 0; k < 64; ++k)
      for (int mn = 0; mn < 256; ++mn) {
        ASSERT_EQ(int(new_k(mn, k, s)), int(old_k(mn, k, s))) << mn << "," << k << "," << s;
        ASSERT_EQ(int(new_mn(mn, k, s)), int(old_mn(mn, k, s))) << mn << "," << k << "," << s;
      }
}

}  // namespace
