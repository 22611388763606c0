// ldmatrix (layout/ldmatrix.hpp) on the CPU: the traits against the PTX ISA's description, the warp
// emulation, and the shared -> register copies of chapter 08 (make_tiled_copy_A/B with ldmatrix,
// partition_S of swizzled tiles, retile_D of the MMA's fragments) emulated warp by warp: every value
// each thread receives must be the element partition_A/B of the TiledMMA gives that thread.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "layout/all.hpp"

using namespace mm;

namespace {

using bf16 = __nv_bfloat16;

// An element of ldmatrix's R matrices: (matrix, row, col), row = the address a lane gives.
struct MatElem {
  int matrix, row, col;
  bool operator==(MatElem const&) const = default;
};
MatElem mat_elem(int e) { return {e / 64, (e % 64) / 8, e % 8}; }

// The PTX ISA's description of ldmatrix, written out: lanes 8j..8j+7 give the rows of matrix j, and
// lane t receives, in register j, matrix j's (row t/4, cols 2(t%4), 2(t%4)+1), or with .trans
// (rows 2(t%4), 2(t%4)+1, col t/4): value v = register v/2, half v%2.
MatElem ptx_source(int lane, int w) { return {lane / 8, lane % 8, w}; }
MatElem ptx_dest(int lane, int v, bool trans) {
  int j = v / 2, h = v % 2;
  if (trans) return {j, 2 * (lane % 4) + h, lane / 4};
  return {j, lane / 4, 2 * (lane % 4) + h};
}

template <class Op>
void expect_ldmatrix_traits(int matrices, bool trans) {
  using Tr = Copy_Traits<Op>;
  typename Tr::SrcLayout src;
  typename Tr::DstLayout dst;
  EXPECT_EQ(int(size<0>(src)), 32);
  EXPECT_EQ(int(size<1>(src)), 8);
  EXPECT_EQ(int(size<0>(dst)), 32);
  EXPECT_EQ(int(size<1>(dst)), 2 * matrices);
  std::set<int> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int w = 0; w < 8; ++w) {
      // The lanes that give addresses (8 per matrix) as the ISA says; the others repeat them.
      int giver = lane % (8 * matrices);
      EXPECT_EQ(mat_elem(int(src(lane, w))), ptx_source(giver, w)) << "source lane " << lane << " value " << w;
    }
  for (int lane = 0; lane < 32; ++lane)
    for (int v = 0; v < 2 * matrices; ++v) {
      EXPECT_EQ(mat_elem(int(dst(lane, v))), ptx_dest(lane, v, trans)) << "lane " << lane << " value " << v;
      seen.insert(int(dst(lane, v)));
    }
  EXPECT_EQ(int(seen.size()), 64 * matrices);  // a bijection onto the matrices
  EXPECT_EQ(*seen.rbegin(), 64 * matrices - 1);
  static_assert(std::is_same_v<typename Tr::RefLayout, typename Tr::DstLayout>);
}

}  // namespace

TEST(Ldmatrix, TraitsMatchThePtxIsa) {
  expect_ldmatrix_traits<SM75_U32x1_LDSM_N>(1, false);
  expect_ldmatrix_traits<SM75_U32x2_LDSM_N>(2, false);
  expect_ldmatrix_traits<SM75_U32x4_LDSM_N>(4, false);
  expect_ldmatrix_traits<SM75_U16x2_LDSM_T>(1, true);
  expect_ldmatrix_traits<SM75_U16x4_LDSM_T>(2, true);
  expect_ldmatrix_traits<SM75_U16x8_LDSM_T>(4, true);
}

TEST(Ldmatrix, CopyAtomSeesTheTraitsInItsElementType) {
  using A16 = Copy_Atom<SM75_U32x4_LDSM_N, bf16>;
  static_assert(A16::NumThr == 32 && A16::NumValSrc == 8 && A16::NumValDst == 8);
  // In 32-bit units (tf32 in fp32 registers): a row is 4 fp32, and lane t receives one fp32 of each
  // matrix, row t/4, column t%4: e = col + 4·row + 32·matrix.
  using A32 = Copy_Atom<SM75_U32x4_LDSM_N, float>;
  static_assert(A32::NumThr == 32 && A32::NumValSrc == 4 && A32::NumValDst == 4);
  typename A32::ValLayoutDst dst;
  typename A32::ValLayoutSrc src;
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(int(dst(lane, j)), lane % 4 + 4 * (lane / 4) + 32 * j) << lane << "," << j;
      EXPECT_EQ(int(src(lane, j)), 4 * lane + j);
    }
  // One-thread atoms keep their vector: Src = Dst = (1 thread, NumVal values).
  using V4 = Copy_Atom<UniversalCopy<mm::uint128_t>, float>;
  static_assert(V4::NumThr == 1 && V4::NumVal == 4 && V4::NumValSrc == 4 && V4::NumValDst == 4);
  static_assert(std::is_same_v<V4::ValLayoutSrc, Layout<Shape<_1, _4>, Stride<_0, _1>>>);
}

TEST(Ldmatrix, WarpEmulationMatchesThePtxIsa) {
  // Shared memory of 64 rows × 8 b16, every element distinct; each lane points at a random row.
  std::vector<std::uint16_t> smem(64 * 8);
  for (int i = 0; i < 64 * 8; ++i) smem[i] = std::uint16_t(1000 + i);
  std::mt19937 rng(3);
  std::array<void const*, 32> rows;
  std::array<int, 32> row_of;
  for (int lane = 0; lane < 32; ++lane) {
    row_of[lane] = int(rng() % 64);
    rows[lane] = &smem[8 * row_of[lane]];
  }
  auto element = [&](MatElem e) { return smem[8 * row_of[8 * e.matrix + e.row] + e.col]; };
  auto check = [&](auto regs, int matrices, bool trans) {
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < matrices; ++j) {
        std::uint32_t expect = element(ptx_dest(lane, 2 * j, trans)) | (std::uint32_t(element(ptx_dest(lane, 2 * j + 1, trans))) << 16);
        ASSERT_EQ(regs[lane][j], expect) << "lane " << lane << " register " << j << (trans ? " (trans)" : "");
      }
  };
  check(ldmatrix_on_host<SM75_U32x1_LDSM_N>(rows), 1, false);
  check(ldmatrix_on_host<SM75_U32x2_LDSM_N>(rows), 2, false);
  check(ldmatrix_on_host<SM75_U32x4_LDSM_N>(rows), 4, false);
  check(ldmatrix_on_host<SM75_U16x2_LDSM_T>(rows), 1, true);
  check(ldmatrix_on_host<SM75_U16x4_LDSM_T>(rows), 2, true);
  check(ldmatrix_on_host<SM75_U16x8_LDSM_T>(rows), 4, true);
}

namespace {

template <class T>
std::uint32_t bits_of(T const& x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof x);
  return u;
}
// Distinct bit patterns for every element of a buffer (as bf16: tiny normal numbers; as fp32: the
// index itself), so that a value in a register says which element it came from.
template <class T>
std::vector<T> distinct_elements(int n) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 2) {
      std::uint16_t b = std::uint16_t(0x0400 + i);
      std::memcpy(static_cast<void*>(&v[i]), &b, 2);
    } else {
      v[i] = T(i);
    }
  }
  return v;
}

// For every warp of `mma`: each lane's partition_S of the shared tile `s` and retile_D of its register
// fragment (shaped as partition_X(s) of the MMA, X = A or B), one emulated ldmatrix per CPY group of
// the lanes, then every value of every lane's fragment compared with what partition_X(s) gives that
// thread. Returns the lanes' fragments (thread t's in frags[t]).
template <class Mma, class S2R, class Smem, class PartitionX>
auto expect_copy_gives_mma_fragments(Mma const& mma, S2R const& s2r, Smem const& s, PartitionX partition_x) {
  using T = typename S2R::value_type;
  constexpr int threads = size_v<decltype(size(Mma{}))>;
  using Frag = decltype(make_fragment_like<T>(partition_x(mma.get_slice(0), s)));  // (MMA,MMA_X,MMA_K)
  std::vector<Frag> frags(threads);
  for (int warp = 0; warp < threads / 32; ++warp) {
    using Src = decltype(s2r.get_slice(0).partition_S(s));
    using Dst = decltype(s2r.get_slice(0).retile_D(frags[0]));
    std::array<Src, 32> srcs;
    std::array<Dst, 32> dsts;
    for (int lane = 0; lane < 32; ++lane) {
      auto thr = s2r.get_slice(32 * warp + lane);
      srcs[lane] = thr.partition_S(s);                      // (CPY,CPY_X,CPY_K)
      dsts[lane] = thr.retile_D(frags[32 * warp + lane]);   // (CPY,CPY_X,CPY_K)
    }
    copy_warp_on_host(s2r, srcs, dsts);
  }
  for (int t = 0; t < threads; ++t) {
    auto expected = partition_x(mma.get_slice(t), s);  // (MMA,MMA_X,MMA_K)
    EXPECT_EQ(int(size(expected)), int(size(frags[t])));
    for (int i = 0; i < int(size(expected)); ++i)
      if (bits_of(frags[t](i)) != bits_of(expected(i))) {
        ADD_FAILURE() << "thread " << t << ", fragment value " << i << ": got element #"
                      << (bits_of(frags[t](i)) - bits_of(s(0))) << ", partition says #" << (bits_of(expected(i)) - bits_of(s(0)));
        return frags;
      }
  }
  return frags;
}

auto part_A = [](auto const& thr, auto const& s) { return thr.partition_A(s); };
auto part_B = [](auto const& thr, auto const& s) { return thr.partition_B(s); };

// Chapter 08's TiledMMA: four warps, 2×2 over (M,N), each warp one 16×8×16 atom, and the tile made
// 32×32×16 by the permutation: a warp then holds two atoms along N per tile (N atoms tn and tn+2),
// which is what one ldmatrix.x4 of B fills: 4 matrices = 2 atoms × (k 0-7, k 8-15).
using Bf16Mma = decltype(make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _16>{}));

}  // namespace

TEST(LdmatrixTiledCopy, MmaOperandLayoutsAreThePartitions) {
  // get_layoutA/B/C_TV: thread t's values are partition_A/B/C's of thread t, in order.
  Bf16Mma mma;
  auto check = [&](auto tv, auto tile_shape, auto part) {
    std::vector<int> buf(size(tile_shape));
    auto t = make_tensor(buf.data(), make_layout(tile_shape));  // one tile, column-major
    for (int tid = 0; tid < 128; ++tid) {
      auto p = part(mma.get_slice(tid), t);
      ASSERT_EQ(int(size(p)), int(size<1>(tv)));
      for (int v = 0; v < int(size(p)); ++v) ASSERT_EQ(int(&p(v) - buf.data()), int(tv(tid, v))) << tid << "," << v;
    }
  };
  check(mma.get_layoutA_TV(), mma.tile_shape_A(), part_A);
  check(mma.get_layoutB_TV(), mma.tile_shape_B(), part_B);
  check(mma.get_layoutC_TV(), mma.tile_shape_C(), [](auto const& thr, auto const& s) { return thr.partition_C(s); });
  EXPECT_EQ(to_string(mma.tile_shape_A()), "(_32,_16)");
  EXPECT_EQ(to_string(mma.tile_shape_B()), "(_32,_16)");
  EXPECT_EQ(to_string(mma.value_groups_B()), "(_2,_1)");  // two atoms along N per warp and tile
  // Warps 0 and 2 differ only along N: they read the same A (stride 0 there).
  auto tvA = mma.get_layoutA_TV();
  for (int v = 0; v < 8; ++v) EXPECT_EQ(int(tvA(5, v)), int(tvA(64 + 5, v)));
}

TEST(LdmatrixTiledCopy, CopyCStoresTheAccumulatorsWith64BitStores) {
  // make_tiled_copy_C with a one-thread 64-bit atom: in a row-major C, c0 and c1 (columns 2·tig and
  // 2·tig + 1) are neighbours. Each thread's accumulators (MMA,MMA_M,MMA_N), retiled as the copy's
  // source, land where partition_C says: the epilogue's register -> memory copy.
  Bf16Mma mma;
  auto copy_c = make_tiled_copy_C(Copy_Atom<UniversalCopy<std::uint64_t>, float>{}, mma);
  EXPECT_EQ(to_string(mma.value_groups_C()), "(_1,_2)");  // two atoms along N per tile
  std::vector<float> c(64 * 64, -1.f);
  auto gC = make_tensor(c.data(), make_layout(make_shape(_64{}, _64{}), LayoutRight{}));  // (M,N)
  for (int t = 0; t < 128; ++t) {
    auto thr_mma = mma.get_slice(t);
    auto tCrC = thr_mma.partition_fragment_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCgC = thr_mma.partition_C(gC);           // (MMA,MMA_M,MMA_N)
    for (int i = 0; i < int(size(tCrC)); ++i) tCrC(i) = float(&tCgC(i) - c.data());  // each value: its own index
    auto thr = copy_c.get_slice(t);
    auto tXrC = thr.retile_S(tCrC);     // (CPY,CPY_M,CPY_N)
    auto tXgC = thr.partition_D(gC);    // (CPY,CPY_M,CPY_N)
    ASSERT_EQ(int(size(tXrC)), int(size(tXgC)));
    copy(copy_c, tXrC, tXgC);
  }
  for (int i = 0; i < 64 * 64; ++i) ASSERT_EQ(c[i], float(i)) << i;
}

TEST(LdmatrixTiledCopy, RetileRegroupsTheMmaFragmentIntoInstructions) {
  Bf16Mma mma;
  std::vector<bf16> buf(64 * 32);
  auto sB = make_tensor(buf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (N,K)
  auto tCrB = mma.get_slice(0).partition_fragment_B(sB);  // (MMA,MMA_N,MMA_K)
  EXPECT_EQ(to_string(tCrB.layout()), "((_2,_2),_4,_2):((_1,_2),_4,_16)");
  auto s2r = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
  auto tXrB = s2r.get_slice(0).retile_D(tCrB);  // (CPY,CPY_N,CPY_K): 8 values = 2 atoms along N
  EXPECT_EQ(to_string(tXrB.layout()), "((_8,_1),_2,_2):((_1,_8),_8,_16)");
  EXPECT_EQ(tXrB.data(), tCrB.data());
  // A with x4: one atom per instruction, nothing to regroup.
  std::vector<bf16> abuf(64 * 32);
  auto sA = make_tensor(abuf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (M,K)
  auto tCrA = mma.get_slice(0).partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K)
  auto s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
  EXPECT_EQ(to_string(s2r_a.get_slice(0).retile_D(tCrA).layout()), to_string(tCrA.layout()));
  // The source side: thread 37 (warp 1 = (tm, tn) = (1, 0), lane 5) gives the address of row 5 of
  // matrix 0, A(16 + 5, 0..7): 8 contiguous b16.
  auto tXsA = s2r_a.get_slice(37).partition_S(sA);  // (CPY,CPY_M,CPY_K)
  EXPECT_EQ(&tXsA(0), &sA(21, 0));
  EXPECT_EQ(to_string(shape(tXsA)), "(((_2,_4),_1),_2,_2)");
  for (int w = 0; w < 8; ++w) EXPECT_EQ(&tXsA(w), &sA(21, w));
}

TEST(LdmatrixTiledCopy, Bf16KMajorSwizzledAAndBGiveTheMmaFragments) {
  // RCR: A (M,K) and B (N,K) both K-contiguous, in swizzled shared tiles of 64×32 bf16 (64-byte rows):
  // ldmatrix (non-transposing) x4 for both; then the warps' MMAs on the loaded fragments.
  Bf16Mma mma;
  auto a = distinct_elements<bf16>(64 * 32);
  auto b = distinct_elements<bf16>(64 * 32);
  auto sA = make_tensor(a.data(), composition(Swizzle<2, 3, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));  // (M,K)
  auto sB = make_tensor(b.data(), composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));  // (N,K)
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma), sA, part_A);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma), sB, part_B);
  // x2 for A: two instructions per atom (a0-a3, then a4-a7); x2 for B: one atom per instruction.
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_A(Copy_Atom<SM75_U32x2_LDSM_N, bf16>{}, mma), sA, part_A);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U32x2_LDSM_N, bf16>{}, mma), sB, part_B);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U32x1_LDSM_N, bf16>{}, mma), sB, part_B);
}

TEST(LdmatrixTiledCopy, Bf16MnMajorSwizzledAAndBGiveTheMmaFragmentsThroughTrans) {
  // RRR's B is K×N row-major: as (N,K) it is N-contiguous, and ldmatrix.trans turns its 8-wide rows of
  // n into the (k, k+1) pairs the MMA wants. The same for an M-contiguous (column-major) A.
  Bf16Mma mma;
  auto a = distinct_elements<bf16>(64 * 32);
  auto b = distinct_elements<bf16>(64 * 32);
  auto sA = make_tensor(a.data(), composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_64{}, _32{}))));  // (M,K), M-major
  auto sB = make_tensor(b.data(), composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_64{}, _32{}))));  // (N,K), N-major
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_A(Copy_Atom<SM75_U16x8_LDSM_T, bf16>{}, mma), sA, part_A);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, bf16>{}, mma), sB, part_B);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U16x4_LDSM_T, bf16>{}, mma), sB, part_B);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_A(Copy_Atom<SM75_U16x4_LDSM_T, bf16>{}, mma), sA, part_A);
}

namespace {

template <class T>
double value_of(T const& x) {
  if constexpr (std::is_same_v<T, bf16>) return double(__bfloat162float(x));
  else return double(x);
}

// Shared -> registers with `copy_a`/`copy_b` (emulated ldmatrix), then every warp's MMAs (emulated
// mma.sync) into C = A·Bᵀ over the whole (M,N) tile: C must equal the double reference.
template <class Mma, class CopyA, class CopyB, class SA, class SB>
void s2r_then_mma(Mma const& mma, CopyA const& copy_a, CopyB const& copy_b, SA const& sA, SB const& sB) {
  constexpr int M = size_v<decltype(layout<0>(sA.layout()))>;
  constexpr int N = size_v<decltype(layout<0>(sB.layout()))>;
  constexpr int K = size_v<decltype(layout<1>(sA.layout()))>;
  auto fa = expect_copy_gives_mma_fragments(mma, copy_a, sA, part_A);
  auto fb = expect_copy_gives_mma_fragments(mma, copy_b, sB, part_B);
  std::vector<float> c(M * N, 0.f);
  auto gC = make_tensor(c.data(), make_layout(make_shape(Int<M>{}, Int<N>{})));  // (M,N)
  constexpr int threads = size_v<decltype(size(Mma{}))>;
  using FragC = decltype(mma.get_slice(0).partition_fragment_C(gC));
  for (int warp = 0; warp < threads / 32; ++warp) {
    std::array<typename decltype(fa)::value_type, 32> ra;
    std::array<typename decltype(fb)::value_type, 32> rb;
    std::array<FragC, 32> rc;
    for (int lane = 0; lane < 32; ++lane) {
      ra[lane] = fa[32 * warp + lane];
      rb[lane] = fb[32 * warp + lane];
      clear(rc[lane]);
    }
    gemm_warp_on_host(mma, ra, rb, rc);
    for (int lane = 0; lane < 32; ++lane) copy(rc[lane], mma.get_slice(32 * warp + lane).partition_C(gC));
  }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += value_of(sA(m, k)) * value_of(sB(n, k));
      ASSERT_NEAR(gC(m, n), ref, 1e-4 * (1 + std::abs(ref))) << m << "," << n;
    }
}

template <class T>
std::vector<T> small_values(int n, int seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    float f = float(int(rng() % 17) - 8) / 4.f;
    if constexpr (std::is_same_v<T, bf16>) x = __float2bfloat16(f);
    else x = f;
  }
  return v;
}

}  // namespace

TEST(LdmatrixTiledCopy, Bf16SharedToRegistersToMmaEveryStorageOrder) {
  Bf16Mma mma;
  auto a = small_values<bf16>(64 * 32, 1);
  auto b = small_values<bf16>(64 * 32, 2);
  auto a_k = make_tensor(a.data(), composition(Swizzle<2, 3, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));
  auto b_k = make_tensor(b.data(), composition(Swizzle<2, 3, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));
  auto a_m = make_tensor(a.data(), composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_64{}, _32{}))));
  auto b_n = make_tensor(b.data(), composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_64{}, _32{}))));
  auto ldsm_n = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
  auto ldsm_t = make_tiled_copy_A(Copy_Atom<SM75_U16x8_LDSM_T, bf16>{}, mma);
  auto ldsm_n_b = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
  auto ldsm_t_b = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, bf16>{}, mma);
  s2r_then_mma(mma, ldsm_n, ldsm_n_b, a_k, b_k);  // RCR
  s2r_then_mma(mma, ldsm_n, ldsm_t_b, a_k, b_n);  // RRR
  s2r_then_mma(mma, ldsm_t, ldsm_n_b, a_m, b_k);  // CCR
  s2r_then_mma(mma, ldsm_t, ldsm_t_b, a_m, b_n);  // CRR
}

// tf32 operands are 32-bit: a transposing ldmatrix (16-bit halves) cannot serve them, but the
// non-transposing one, seen in 32-bit units, moves 4 fp32 per row and gives lane t the fp32 at (row
// t/4, column t%4) of each matrix: exactly tf32 m16n8k8's fragments of a K-major A (a0..a3 = the four
// 8×4 blocks) and of a K-major B (b0, b1 = k 0-3 and 4-7). So K-major tf32 operands load with
// SM75_U32x4_LDSM_N as CuTe does; MN-major ones need plain 32-bit (or, with a permutation, 64-bit)
// loads: see test_mma_sm80.cpp, TiledMmaWarpAtoms.Tf32PlainCopiesWhereTheFragmentIsContiguous.
using Tf32Mma = decltype(make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _8>{}));

TEST(LdmatrixTiledCopy, Tf32KMajorOperandsLoadWithLdmatrixInFp32Units) {
  Tf32Mma mma;
  auto a = distinct_elements<float>(64 * 32);
  auto b = distinct_elements<float>(64 * 32);
  // K-major fp32 tiles, 128-byte rows; Swizzle<3,2,3>: units of 4 fp32 (16 bytes) permuted by row.
  auto sA = make_tensor(a.data(), composition(Swizzle<3, 2, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));  // (M,K)
  auto sB = make_tensor(b.data(), composition(Swizzle<3, 2, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));  // (N,K)
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, float>{}, mma), sA, part_A);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, float>{}, mma), sB, part_B);
  expect_copy_gives_mma_fragments(mma, make_tiled_copy_B(Copy_Atom<SM75_U32x2_LDSM_N, float>{}, mma), sB, part_B);
  auto va = small_values<float>(64 * 32, 3);
  auto vb = small_values<float>(64 * 32, 4);
  auto tA = make_tensor(va.data(), sA.layout());
  auto tB = make_tensor(vb.data(), sB.layout());
  s2r_then_mma(mma, make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, float>{}, mma),
               make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, float>{}, mma), tA, tB);
}

TEST(Recast, Bf16RegisterReadsAPairWholeOnlyWhereItsValuesAreNeighbours) {
  // detail::bf16_register<j> hands mma.sync register j of a fragment: the 32-bit word at values 2j,
  // 2j+1 where the fragment's static layout keeps them side by side, else the two packed. Either way
  // the bits are pack_bf16x2's, the lower value in the lower half.
  Bf16Mma mma;
  std::vector<bf16> buf(64 * 32);
  auto sA = make_tensor(buf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (M,K)
  auto tCrA = mma.get_slice(0).partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K): a register fragment
  auto vals = distinct_elements<bf16>(int(size(tCrA)));
  for (int i = 0; i < int(size(tCrA)); ++i) tCrA(i) = vals[i];
  auto frag = tCrA(_, 1, 1);  // one atom's 8 values, neighbours in pairs
  EXPECT_EQ(detail::bf16_register<0>(frag), detail::pack_bf16x2(frag(0), frag(1)));
  EXPECT_EQ(detail::bf16_register<3>(frag), detail::pack_bf16x2(frag(6), frag(7)));
  // A view whose pairs are not neighbours (every other element of a row) takes the packing path.
  auto strided = make_tensor(buf.data(), Layout<_8, _2>{});
  for (int i = 0; i < 16; ++i) buf[std::size_t(i)] = vals[std::size_t(i)];
  EXPECT_EQ(detail::bf16_register<1>(strided), detail::pack_bf16x2(buf[4], buf[6]));
  EXPECT_NE(detail::bf16_register<1>(strided), detail::pack_bf16x2(buf[4], buf[5]));
}

TEST(Recast, Bf16FragmentAsTheRegistersOfAnMma) {
  // An A fragment of m16n8k16 holds 8 bf16 per atom; the instruction takes them as 4 registers, two
  // bf16 each, the lower value in the lower half (mma_sm80.hpp's pack_bf16x2).
  Bf16Mma mma;
  std::vector<bf16> buf(64 * 32);
  auto sA = make_tensor(buf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (M,K)
  auto tCrA = mma.get_slice(0).partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K) of bf16
  auto vals = distinct_elements<bf16>(int(size(tCrA)));
  for (int i = 0; i < int(size(tCrA)); ++i) tCrA(i) = vals[i];
  auto regs = recast<std::uint32_t>(tCrA);  // (MMA/2,MMA_M,MMA_K) of uint32
  EXPECT_EQ(to_string(regs.layout()), "((_1,_2,_2),_2,_2):((_1,_1,_2),_4,_8)");
  for (int m = 0; m < 2; ++m)
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(std::uint32_t(regs(j, m, k)), detail::pack_bf16x2(tCrA(2 * j, m, k), tCrA(2 * j + 1, m, k)));
  // Writing through the view writes the fragment (a register written whole by an instruction).
  regs(3, 1, 1) = detail::pack_bf16x2(vals[0], vals[1]);
  EXPECT_EQ(bits_of(tCrA(6, 1, 1)), bits_of(vals[0]));
  EXPECT_EQ(bits_of(tCrA(7, 1, 1)), bits_of(vals[1]));
  // And back: the registers seen as bf16 again are the fragment, value by value (upcast left an
  // extent-1 mode where the (k, k+1) pair was, and downcast puts the pair in the next mode).
  auto again = recast<bf16>(regs);
  EXPECT_EQ(to_string(again.layout()), "((_1,_4,_2),_2,_2):((_1,_1,_4),_8,_16)");
  for (int i = 0; i < int(size(tCrA)); ++i) EXPECT_EQ(bits_of(bf16(again(i))), bits_of(tCrA(i)));
}

TEST(Recast, FloatAndUint32ShareTheLayout) {
  auto f = make_tensor<float>(Shape<_4, _2>{});
  for (int i = 0; i < 8; ++i) f(i) = 1.5f * float(i) - 2.f;
  auto u = recast<std::uint32_t>(f);
  EXPECT_EQ(to_string(u.layout()), to_string(f.layout()));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(std::uint32_t(u(i)), bits_of(f(i)));
  u(5) = bits_of(42.f);
  EXPECT_EQ(f(5), 42.f);
  // A const tensor gives a read-only view.
  auto const& cf = f;
  auto cu = recast<std::uint32_t>(cf);
  EXPECT_EQ(std::uint32_t(cu(5)), bits_of(42.f));
  // copy() and make_fragment_like see the element type behind the view.
  auto g = make_fragment_like(u);
  copy(u, g);
  static_assert(std::is_same_v<decltype(g(0)), std::uint32_t&>);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(g(i), bits_of(f(i)));
}

TEST(Recast, SwizzledSharedTileInWiderUnits) {
  // A K-major bf16 tile swizzled in 16-byte units, seen as uint32 pairs: Sw<2,3,3> becomes Sw<2,2,3>
  // and element (m, j) is the pair (k, k+1) = (2j, 2j+1) of row m.
  auto a = distinct_elements<bf16>(64 * 32);
  auto sA = make_tensor(a.data(), composition(Swizzle<2, 3, 3>{}, make_layout(make_shape(_64{}, _32{}), LayoutRight{})));  // (M,K)
  auto sA32 = recast<std::uint32_t>(sA);  // (M,K/2)
  EXPECT_EQ(to_string(sA32.layout()), "Sw<2,2,3> o _0 o (_64,_16):(_16,_1)");
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < 16; ++j) ASSERT_EQ(std::uint32_t(sA32(m, j)), detail::pack_bf16x2(sA(m, 2 * j), sA(m, 2 * j + 1)));
}
