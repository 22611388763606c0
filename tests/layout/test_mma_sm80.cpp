// The sm_80 mma.sync atoms (layout/mma_sm80.hpp) on the CPU: their TV layouts against the PTX ISA's
// fragment formulas, and whole warps (and a TiledMMA of four warps) emulated on the host
// (layout/mma_emulation.hpp) against a double reference.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "layout/all.hpp"
#include "layout/mma_emulation.hpp"

using namespace mm;

namespace {

using Bf16Atom = SM80_16x8x16_F32BF16BF16F32_TN;
using Tf32Atom = SM80_16x8x8_F32TF32TF32F32_TN;

struct RowCol {
  int row, col;
  bool operator==(RowCol const&) const = default;
};

// The PTX ISA's formulas, written out as the ISA states them ("Matrix Fragments for mma.m16n8k16
// with floating point type", and for mma.m16n8k8 with .tf32): lane -> (groupID, threadID_in_group),
// element a_i / b_i / c_i -> (row, col) of A (M×K), B (K×N) and C (M×N).
int group_id(int lane) { return lane >> 2; }
int thread_in_group(int lane) { return lane % 4; }

RowCol ptx_bf16_a(int lane, int i) {
  int row = (i < 2 || (4 <= i && i < 6)) ? group_id(lane) : group_id(lane) + 8;
  int col = i < 4 ? thread_in_group(lane) * 2 + (i & 0x1) : thread_in_group(lane) * 2 + (i & 0x1) + 8;
  return {row, col};
}
RowCol ptx_bf16_b(int lane, int i) {
  int row = i < 2 ? thread_in_group(lane) * 2 + (i & 0x1) : thread_in_group(lane) * 2 + (i & 0x1) + 8;
  return {row, group_id(lane)};
}
RowCol ptx_f32_c(int lane, int i) {  // the accumulator of both shapes
  int row = i < 2 ? group_id(lane) : group_id(lane) + 8;
  return {row, thread_in_group(lane) * 2 + (i & 0x1)};
}
RowCol ptx_tf32_a(int lane, int i) {
  int row = (i == 0 || i == 2) ? group_id(lane) : group_id(lane) + 8;
  int col = (i == 0 || i == 1) ? thread_in_group(lane) : thread_in_group(lane) + 4;
  return {row, col};
}
RowCol ptx_tf32_b(int lane, int i) {
  int row = i == 0 ? thread_in_group(lane) : thread_in_group(lane) + 4;
  return {row, group_id(lane)};
}

// Checks every (lane, value) of a TV layout whose index is `r + rows * c` in a rows×cols tile against
// `expected(lane, i)` = (r, c), and that the layout is a bijection onto the tile.
template <class TV, class Expected>
void expect_tv_matches(TV const& tv, int rows, int cols, Expected expected, char const* what) {
  EXPECT_EQ(int(size<0>(tv)), 32) << what;
  EXPECT_EQ(int(size(tv)), rows * cols) << what;
  std::set<int> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < int(size<1>(tv)); ++i) {
      int idx = int(tv(lane, i));
      RowCol got{idx % rows, idx / rows};
      EXPECT_EQ(got, expected(lane, i)) << what << ": lane " << lane << ", value " << i << ": got (" << got.row << ","
                                        << got.col << ")";
      seen.insert(idx);
    }
  EXPECT_EQ(int(seen.size()), rows * cols) << what << ": not a bijection";
  EXPECT_EQ(*seen.begin(), 0) << what;
  EXPECT_EQ(*seen.rbegin(), rows * cols - 1) << what;
}

}  // namespace

TEST(MmaSm80Traits, Bf16M16N8K16MatchesThePtxFragmentFigures) {
  using Tr = MMA_Traits<Bf16Atom>;
  static_assert(std::is_same_v<Tr::Shape_MNK, Shape<_16, _8, _16>>);
  // A is (M,K) = 16×16: index m + 16k. B is stored by the traits as (N,K): index n + 8k, while the ISA
  // draws B as K×N (row = k, col = n): swap.
  expect_tv_matches(Tr::ALayout{}, 16, 16, ptx_bf16_a, "bf16 A");
  expect_tv_matches(Tr::BLayout{}, 8, 16, [](int l, int i) { auto rc = ptx_bf16_b(l, i); return RowCol{rc.col, rc.row}; },
                    "bf16 B");
  expect_tv_matches(Tr::CLayout{}, 16, 8, ptx_f32_c, "bf16 C");
}

TEST(MmaSm80Traits, Tf32M16N8K8MatchesThePtxFragmentFigures) {
  using Tr = MMA_Traits<Tf32Atom>;
  static_assert(std::is_same_v<Tr::Shape_MNK, Shape<_16, _8, _8>>);
  expect_tv_matches(Tr::ALayout{}, 16, 8, ptx_tf32_a, "tf32 A");
  expect_tv_matches(Tr::BLayout{}, 8, 8, [](int l, int i) { auto rc = ptx_tf32_b(l, i); return RowCol{rc.col, rc.row}; },
                    "tf32 B");
  expect_tv_matches(Tr::CLayout{}, 16, 8, ptx_f32_c, "tf32 C");
}

namespace {

// Random values exactly representable in the operand type: small integers over 8 (exact in bf16 and
// in tf32, so the emulated products are exact and the check is tight).
template <class T>
T random_operand(std::mt19937& rng) {
  float x = float(int(rng() % 17) - 8) / 8.f;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(x);
  else return x;
}
template <class T>
double as_double(T const& x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return double(__bfloat162float(x));
  else return double(x);
}

// One warp, one atom: the lanes' fragments are filled from random A, B, C by the formulas of the
// ISA (not by the layouts), emulated, and D read back by the formulas again.
template <class Op, class FA, class FB>
void one_warp_through_the_ptx_formulas(FA formula_a, FB formula_b, int M, int N, int K) {
  using Tr = MMA_Traits<Op>;
  using TA = typename Tr::ValTypeA;
  std::mt19937 rng(7);
  std::vector<TA> A(M * K), B(K * N);  // A row-major (M×K), B row-major (K×N), as the ISA draws them
  std::vector<float> Cm(M * N);
  for (auto& x : A) x = random_operand<TA>(rng);
  for (auto& x : B) x = random_operand<TA>(rng);
  for (auto& x : Cm) x = float(int(rng() % 9) - 4);
  constexpr int VA = size_v<decltype(layout<1>(typename Tr::ALayout{}))>;
  constexpr int VB = size_v<decltype(layout<1>(typename Tr::BLayout{}))>;
  std::array<decltype(make_tensor<TA>(Shape<Int<VA>>{})), 32> fa;
  std::array<decltype(make_tensor<TA>(Shape<Int<VB>>{})), 32> fb;
  std::array<decltype(make_tensor<float>(Shape<_4>{})), 32> fc, fd;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < VA; ++i) fa[lane](i) = A[formula_a(lane, i).row * K + formula_a(lane, i).col];
    for (int i = 0; i < VB; ++i) fb[lane](i) = B[formula_b(lane, i).row * N + formula_b(lane, i).col];
    for (int i = 0; i < 4; ++i) fc[lane](i) = Cm[ptx_f32_c(lane, i).row * N + ptx_f32_c(lane, i).col];
  }
  mma_sync_on_host(Op{}, [&](int l) { return fa[l](_); }, [&](int l) { return fb[l](_); },
                   [&](int l) { return fc[l](_); }, [&](int l) { return fd[l](_); });
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      auto [m, n] = ptx_f32_c(lane, i);
      double ref = Cm[m * N + n];
      for (int k = 0; k < K; ++k) ref += as_double(A[m * K + k]) * as_double(B[k * N + n]);
      ASSERT_EQ(double(fd[lane](i)), ref) << "lane " << lane << ", d" << i;
    }
}

}  // namespace

TEST(MmaSm80Emulation, OneWarpBf16) { one_warp_through_the_ptx_formulas<Bf16Atom>(ptx_bf16_a, ptx_bf16_b, 16, 8, 16); }

TEST(MmaSm80Emulation, OneWarpTf32) { one_warp_through_the_ptx_formulas<Tf32Atom>(ptx_tf32_a, ptx_tf32_b, 16, 8, 8); }

TEST(MmaSm80Emulation, Tf32IgnoresTheLow13MantissaBits) {
  // tf32 keeps 10 mantissa bits (an ulp of 2^-10 at 1). An unrounded operand 1 + 2^-11 + 2^-12 is read
  // truncated by the instruction: its single product with 1 gives exactly 1.
  std::array<decltype(make_tensor<float>(Shape<_4>{})), 32> fa, fc, fd;
  std::array<decltype(make_tensor<float>(Shape<_2>{})), 32> fb;
  for (int l = 0; l < 32; ++l) {
    clear(fa[l]);
    clear(fb[l]);
    clear(fc[l]);
  }
  float x = 1.f + std::ldexp(1.f, -11) + std::ldexp(1.f, -12);
  fa[0](0) = x;    // A(0,0)
  fb[0](0) = 1.f;  // B(0,0)
  mma_sync_on_host(Tf32Atom{}, [&](int l) { return fa[l](_); }, [&](int l) { return fb[l](_); },
                   [&](int l) { return fc[l](_); }, [&](int l) { return fd[l](_); });
  EXPECT_EQ(fd[0](0), 1.f);
  // to_tf32 (cvt.rna) rounds to nearest instead, ties away from zero.
  EXPECT_EQ(to_tf32(x), 1.f + std::ldexp(1.f, -10));                        // 0.75 ulp: up
  EXPECT_EQ(to_tf32(1.f + std::ldexp(1.f, -12)), 1.f);                      // 0.25 ulp: down
  EXPECT_EQ(to_tf32(1.f + std::ldexp(1.f, -11)), 1.f + std::ldexp(1.f, -10));  // the tie: away from zero
  EXPECT_EQ(to_tf32(-1.f - std::ldexp(1.f, -11)), -1.f - std::ldexp(1.f, -10));
}

namespace {

// A TiledMMA of warp-wide atoms run on the host: every thread of the block partitions A (M,K),
// B (N,K) and C (M,N) with the existing ThrMMA, copies its operands into fragments, and each warp's
// atoms are emulated; C must equal the double reference, and every element of C must belong to
// exactly one thread.
template <class T, int M, int N, int K, class TiledMma>
void tiled_mma_on_host(TiledMma const& mma, bool a_k_major, bool b_k_major) {
  constexpr int threads = size_v<decltype(size(TiledMma{}))>;
  static_assert(threads % 32 == 0);
  std::mt19937 rng(11);
  std::vector<T> a(M * K), b(N * K);
  std::vector<float> c(M * N, 0.f), c0(M * N);
  for (auto& x : a) x = random_operand<T>(rng);
  for (auto& x : b) x = random_operand<T>(rng);
  for (auto& x : c0) x = float(int(rng() % 9) - 4);
  c = c0;
  // A and B either K-major (K contiguous) or MN-major (run-time strides, compile-time shapes so that
  // the fragments are static); C row-major.
  auto sA = make_tensor(a.data(), make_layout(make_shape(Int<M>{}, Int<K>{}), a_k_major ? make_stride(K, 1) : make_stride(1, M)));  // (M,K)
  auto sB = make_tensor(b.data(), make_layout(make_shape(Int<N>{}, Int<K>{}), b_k_major ? make_stride(K, 1) : make_stride(1, N)));  // (N,K)
  auto gC = make_tensor(c.data(), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(N, 1)));                                  // (M,N)
  std::vector<int> owner(M * N, 0);
  using FragA = decltype(mma.get_slice(0).partition_fragment_A(sA));
  using FragB = decltype(mma.get_slice(0).partition_fragment_B(sB));
  using FragC = decltype(mma.get_slice(0).partition_fragment_C(gC));
  for (int warp = 0; warp < threads / 32; ++warp) {
    std::array<FragA, 32> ra;
    std::array<FragB, 32> rb;
    std::array<FragC, 32> rc;
    for (int lane = 0; lane < 32; ++lane) {
      auto thr = mma.get_slice(32 * warp + lane);
      copy(thr.partition_A(sA), ra[lane]);  // (MMA,MMA_M,MMA_K)
      copy(thr.partition_B(sB), rb[lane]);  // (MMA,MMA_N,MMA_K)
      copy(thr.partition_C(gC), rc[lane]);  // (MMA,MMA_M,MMA_N)
    }
    gemm_warp_on_host(mma, ra, rb, rc);
    for (int lane = 0; lane < 32; ++lane) {
      auto tCgC = mma.get_slice(32 * warp + lane).partition_C(gC);  // (MMA,MMA_M,MMA_N)
      copy(rc[lane], tCgC);
      for (int i = 0; i < int(size(tCgC)); ++i) owner[&tCgC(i) - c.data()] += 1;
    }
  }
  for (int i = 0; i < M * N; ++i) ASSERT_EQ(owner[i], 1) << "element " << i;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = c0[m * N + n];
      for (int k = 0; k < K; ++k) ref += as_double(sA(m, k)) * as_double(sB(n, k));
      ASSERT_EQ(double(gC(m, n)), ref) << "C(" << m << "," << n << ")";
    }
}

}  // namespace

TEST(TiledMmaWarpAtoms, FourWarpsOfBf16Over32x16x16) {
  // 2×2 warps over M×N: each warp one 16×8 atom of the 32×16 tile of C.
  auto mma = make_tiled_mma(Bf16Atom{}, Layout<Shape<_2, _2, _1>>{});
  EXPECT_EQ(int(size(mma)), 128);
  tiled_mma_on_host<__nv_bfloat16, 32, 16, 16>(mma, true, true);
}

TEST(TiledMmaWarpAtoms, Bf16RepeatedOverALargerTileInEveryStorageOrder) {
  // 64×64×32: each warp repeats its atom (MMA_M, MMA_N, MMA_K) = (2, 4, 2) times; the warps are laid
  // out N-first this time, and the permutation Tile<_32,_32,_16> gives each warp two atoms along N per
  // 32×32 tile (as chapter 08's ldmatrix.x4 for B wants).
  auto mma = make_tiled_mma(Bf16Atom{}, Layout<Shape<_2, _2, _1>, Stride<_2, _1, _0>>{}, Tile<_32, _32, _16>{});
  for (bool ak : {true, false})
    for (bool bk : {true, false}) tiled_mma_on_host<__nv_bfloat16, 64, 64, 32>(mma, ak, bk);
}

TEST(TiledMmaWarpAtoms, Tf32EightWarps) {
  auto mma = make_tiled_mma(Tf32Atom{}, Layout<Shape<_4, _2, _1>>{});
  EXPECT_EQ(int(size(mma)), 256);
  tiled_mma_on_host<float, 64, 32, 16>(mma, true, false);
}

TEST(TiledMmaWarpAtoms, ThreadNumberingAndFragmentShapes) {
  // Thread 37 is lane 5 (groupID 1, threadID_in_group 1) of warp 1 = (tm, tn) = (1, 0) in a column-major
  // 2×2 warp layout: its first A element is A(16 + 1, 2), its first B element B(1, 2), C(17, 2).
  auto mma = make_tiled_mma(Bf16Atom{}, Layout<Shape<_2, _2, _1>>{});
  std::vector<int> buf(64 * 64);
  auto sA = make_tensor(buf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (M,K)
  auto sB = make_tensor(buf.data(), make_layout(make_shape(_32{}, _32{}), LayoutRight{}));  // (N,K)
  auto gC = make_tensor(buf.data(), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));  // (M,N)
  auto thr = mma.get_slice(37);
  auto tCsA = thr.partition_A(sA);  // (MMA,MMA_M,MMA_K)
  auto tCsB = thr.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  auto tCgC = thr.partition_C(gC);  // (MMA,MMA_M,MMA_N)
  EXPECT_EQ(to_string(shape(tCsA)), "((_2,_2,_2),_2,_2)");
  EXPECT_EQ(to_string(shape(tCsB)), "((_2,_2),_2,_2)");
  EXPECT_EQ(to_string(shape(tCgC)), "((_2,_2),_2,_2)");
  EXPECT_EQ(&tCsA(0), &sA(17, 2));
  EXPECT_EQ(&tCsB(0), &sB(1, 2));
  EXPECT_EQ(&tCgC(0), &gC(17, 2));
  // Value 2 of A is a2 = A(groupID + 8, 2·tig) and value 4 is a4 = A(groupID, 2·tig + 8).
  EXPECT_EQ(&tCsA(2), &sA(25, 2));
  EXPECT_EQ(&tCsA(4), &sA(17, 10));
}

TEST(TiledMmaWarpAtoms, Tf32PlainCopiesWhereTheFragmentIsContiguous) {
  // tf32 operands are 32-bit, so ldmatrix.trans (16-bit halves) cannot load MN-major ones; plain
  // loads can, and they are wider than 32 bits where a thread's values are neighbours in memory:
  //  - A M-major: a0 and a1 are rows groupID and groupID+8. The permutation of M (8,2,2):(2,1,16)
  //    puts MMA row groupID + 8h at tile row 2·groupID + h: (a0,a1) and (a2,a3) are 64-bit pairs.
  //  - B K-major: b0 and b1 are k = tig and tig + 4; the permutation of K (4,2):(2,1) puts them at
  //    k = 2·tig + i: one 64-bit pair. K is permuted for A and B alike, so A·B is unchanged.
  //  - C row-major: c0, c1 (and c2, c3) are columns 2·tig, 2·tig+1: 64-bit pairs without permutation.
  // (A K-major tf32 A or B needs no permutation at all: ldmatrix loads it, see test_ldmatrix.cpp.)
  using PermM = Layout<Shape<_8, _2, _2>, Stride<_2, _1, _16>>;
  using PermK = Layout<Shape<_4, _2>, Stride<_2, _1>>;
  auto mma = make_tiled_mma(Tf32Atom{}, Layout<Shape<_2, _2, _1>>{}, Tile<PermM, _16, PermK>{});
  constexpr int M = 64, N = 32, K = 16;
  std::mt19937 rng(5);
  std::vector<float> a(M * K), b(N * K), c(M * N, 0.f);
  for (auto& x : a) x = random_operand<float>(rng);
  for (auto& x : b) x = random_operand<float>(rng);
  auto sA = make_tensor(a.data(), make_layout(make_shape(Int<M>{}, Int<K>{})));                  // (M,K) M-major
  auto sB = make_tensor(b.data(), make_layout(make_shape(Int<N>{}, Int<K>{}), LayoutRight{}));   // (N,K) K-major
  auto gC = make_tensor(c.data(), make_layout(make_shape(Int<M>{}, Int<N>{}), LayoutRight{}));   // (M,N) row-major
  Copy_Atom<UniversalCopy<std::uint64_t>, float> pair;  // one 64-bit load or store of 2 floats
  using FragA = decltype(mma.get_slice(0).partition_fragment_A(sA));
  using FragB = decltype(mma.get_slice(0).partition_fragment_B(sB));
  using FragC = decltype(mma.get_slice(0).partition_fragment_C(gC));
  // The same 64-bit loads as a TiledCopy made from the MMA (a one-thread atom works there too):
  // each thread's source elements are partition_A's, in the same order.
  auto copy_a = make_tiled_copy_A(pair, mma);
  for (int t = 0; t < 128; ++t) {
    auto tXsA = copy_a.get_slice(t).partition_S(sA);  // (CPY,CPY_M,CPY_K)
    auto tCsA = mma.get_slice(t).partition_A(sA);     // (MMA,MMA_M,MMA_K)
    ASSERT_EQ(int(size(tXsA)), int(size(tCsA)));
    for (int i = 0; i < int(size(tCsA)); ++i) ASSERT_EQ(&tXsA(i), &tCsA(i)) << t << "," << i;
  }
  for (int warp = 0; warp < 4; ++warp) {
    std::array<FragA, 32> ra;
    std::array<FragB, 32> rb;
    std::array<FragC, 32> rc;
    for (int lane = 0; lane < 32; ++lane) {
      auto thr = mma.get_slice(32 * warp + lane);
      auto thr_copy_a = copy_a.get_slice(32 * warp + lane);
      copy(copy_a, thr_copy_a.partition_S(sA), thr_copy_a.retile_D(ra[lane]));  // 64-bit loads, checked at compile time
      copy(pair, thr.partition_B(sB), rb[lane]);  // (MMA,MMA_N,MMA_K)
      clear(rc[lane]);
    }
    gemm_warp_on_host(mma, ra, rb, rc);
    for (int lane = 0; lane < 32; ++lane) copy(pair, rc[lane], mma.get_slice(32 * warp + lane).partition_C(gC));
  }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(sA(m, k)) * double(sB(n, k));
      ASSERT_EQ(double(gC(m, n)), ref) << m << "," << n;
    }
}

namespace {

// The (lane, value) labels of an svg_mma_atom figure, in the order the cells are written (row by row).
std::vector<std::pair<int, int>> svg_cell_labels(std::string const& svg) {
  std::vector<std::pair<int, int>> labels;
  std::regex label("<text[^>]*>T([0-9]+)V([0-9]+)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator(); ++it)
    labels.push_back({std::stoi((*it)[1]), std::stoi((*it)[2])});
  return labels;
}
int count_of(std::string const& s, std::string const& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(MmaSm80Svg, AccumulatorFigureHasTheIsasCells) {
  // C of m16n8k16 (16×8): 128 cells, cell (row, col) labelled with the lane and value that the ISA's
  // formula gives, coloured (one filled rect per cell, plus the background).
  std::ostringstream os;
  svg_mma_atom(os, Bf16Atom{}, 'C');
  auto svg = os.str();
  auto labels = svg_cell_labels(svg);
  ASSERT_EQ(labels.size(), 128u);
  EXPECT_EQ(count_of(svg, "<rect x="), 128);
  for (int i = 0; i < 128; ++i) {
    auto [lane, v] = labels[i];
    EXPECT_EQ(ptx_f32_c(lane, v), (RowCol{i / 8, i % 8})) << "cell " << i << ": T" << lane << "V" << v;
  }
}

TEST(MmaSm80Svg, OperandFiguresAreDrawnAsTheIsaDrawsThem) {
  // A (M×K = 16×16) and B (K×N = 16×8) of bf16, A (16×8) and B (8×8) of tf32: every cell as the ISA says.
  auto check = [](auto op, char which, int rows, int cols, auto formula) {
    std::ostringstream os;
    svg_mma_atom(os, op, which);
    auto labels = svg_cell_labels(os.str());
    ASSERT_EQ(int(labels.size()), rows * cols) << which;
    for (int i = 0; i < rows * cols; ++i)
      EXPECT_EQ(formula(labels[i].first, labels[i].second), (RowCol{i / cols, i % cols})) << which << " cell " << i;
  };
  check(Bf16Atom{}, 'A', 16, 16, ptx_bf16_a);
  check(Bf16Atom{}, 'B', 16, 8, ptx_bf16_b);
  check(Tf32Atom{}, 'A', 16, 8, ptx_tf32_a);
  check(Tf32Atom{}, 'B', 8, 8, ptx_tf32_b);
}
