// Hopper's wgmma pieces (layout/mma_sm90.hpp) on the CPU: the accumulator TV layout against the PTX
// ISA's fragment formula, the matrix descriptor's bit fields against the ISA's "Matrix Descriptor
// Format", and the fields make_gmma_desc reads off the chapter's swizzled layouts.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <type_traits>

#include "layout/all.hpp"
#include "layout/mma_sm90.hpp"

using namespace mm;

namespace {

// "WGMMA .m64nNk16 register fragment layout for accumulator matrix D" (PTX ISA), as the ISA states it:
// thread t of the warpgroup is lane t % 32 of warp t / 32; its d_i lies at
//   row = 16·warp + lane/4 + 8·((i/2) % 2),   col = 8·(i/4) + 2·(lane % 4) + (i % 2).
struct RowCol {
  int row, col;
};
RowCol ptx_wgmma_d(int t, int i) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2};
}

template <int N, class Atom = SM90_64xNx16_F32BF16BF16_SS<N, GmmaMajor::K, GmmaMajor::K>>
void expect_accumulator_layout_matches_ptx() {
  using C = typename MMA_Traits<Atom>::CLayout;
  static_assert(size_v<decltype(get<0>(typename C::shape_type{}))> == 128, "a warpgroup");
  static_assert(size_v<decltype(get<1>(typename C::shape_type{}))> == N / 2, "N/2 accumulators per thread");
  std::set<int> seen;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < N / 2; ++i) {
      const RowCol e = ptx_wgmma_d(t, i);
      const int idx = int(C{}(t, i));
      ASSERT_EQ(idx % 64, e.row) << "N=" << N << " thread " << t << " d" << i;
      ASSERT_EQ(idx / 64, e.col) << "N=" << N << " thread " << t << " d" << i;
      seen.insert(idx);
    }
  EXPECT_EQ(int(seen.size()), 64 * N) << "every element of the 64×N tile exactly once";
}

TEST(MmaSm90, AccumulatorLayoutMatchesPtxFigure) {
  expect_accumulator_layout_matches_ptx<64>();
  expect_accumulator_layout_matches_ptx<128>();
  expect_accumulator_layout_matches_ptx<256>();
  // The same figure holds for the other input types with fp32 D (the ISA's m64nNk8 tf32 and m64nNk32
  // e4m3 accumulator fragments), and for the narrow and non-power-of-two N chapter 11 uses.
  expect_accumulator_layout_matches_ptx<16>();
  expect_accumulator_layout_matches_ptx<192>();
  expect_accumulator_layout_matches_ptx<128, SM90_64xNx8_F32TF32TF32_SS<128>>();
  expect_accumulator_layout_matches_ptx<16, SM90_64xNx8_F32TF32TF32_SS<16>>();
  expect_accumulator_layout_matches_ptx<256, SM90_64xNx32_F32E4M3E4M3_SS<256>>();
  expect_accumulator_layout_matches_ptx<32, SM90_64xNx32_F32E4M3E4M3_SS<32>>();
}

// Every wgmma reads 32 bytes of each row of A and B: k16 of bf16, k8 of tf32, k32 of e4m3. Sliced
// as gmma_k_block slices a K-major stage (128-byte swizzled rows: 64 bf16, 32 fp32, 128 fp8), the
// descriptors of consecutive instructions start 32 bytes apart, four to a swizzle row, with the
// same 1024-byte stride between 8-row groups and the 128-byte swizzle whatever the type.
template <class Atom, class T>
void expect_k_slices_32_bytes_apart() {
  constexpr int kRow = 128 / int(sizeof(T));  // elements in one 128-byte row
  using KI = Int<size_v<std::remove_cvref_t<decltype(get<2>(typename MMA_Traits<Atom>::Shape_MNK{}))>>>;
  static_assert(KI::value * int(sizeof(T)) == 32, "32 bytes of K per instruction");
  alignas(1024) static T smem[2 * 64 * kRow];
  auto stage = make_tensor(make_smem_ptr(smem), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(_64{}, Int<kRow>{}, _2{})));
  const auto base = std::uint32_t(reinterpret_cast<std::uintptr_t>(smem));
  for (int s = 0; s < 2; ++s)
    for (int kk = 0; kk < kRow / KI::value; ++kk) {
      auto slice = local_tile(stage(_, _, s), make_shape(_64{}, KI{}), make_coord(0, kk));  // (64,KI)
      const GmmaDescriptor d = make_gmma_desc<GmmaMajor::K>(slice);
      EXPECT_EQ(d.start_bytes(), (base + std::uint32_t(s * 64 * 128 + 32 * kk)) & 0x3FFF0u) << sizeof(T) << " " << kk;
      EXPECT_EQ(d.sbo_bytes(), 1024u);
      EXPECT_EQ(d.swizzle(), GmmaSwizzle::b128);
    }
}

TEST(MmaSm90, EveryInstructionReads32BytesOfARow) {
  expect_k_slices_32_bytes_apart<SM90_64xNx16_F32BF16BF16_SS<128, GmmaMajor::K, GmmaMajor::K>, __nv_bfloat16>();
  expect_k_slices_32_bytes_apart<SM90_64xNx8_F32TF32TF32_SS<128>, float>();
  expect_k_slices_32_bytes_apart<SM90_64xNx32_F32E4M3E4M3_SS<128>, __nv_fp8_e4m3>();
}

TEST(MmaSm90, TiledMmaOfTwoWarpgroupsCoversTheBlockOnce) {
  // Two warpgroups along M: threads 128..255 take rows 64..127 (partition_C of an identity tensor).
  auto mma = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<128, GmmaMajor::K, GmmaMajor::K>{}, Layout<Shape<_2, _1, _1>>{});
  static_assert(decltype(mma)::size() == 256);
  auto id = make_identity_tensor(make_shape(_128{}, _128{}));
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 256; ++t) {
    auto part = mma.get_slice(t).partition_C(id);  // (MMA,MMA_M,MMA_N)
    ASSERT_EQ(int(size(part)), 64);
    for (int i = 0; i < size(part); ++i) {
      auto c = part(i);
      const int m = get<0>(c), n = get<1>(c);
      const RowCol e = ptx_wgmma_d(t % 128, i);
      EXPECT_EQ(m, 64 * (t / 128) + e.row);
      EXPECT_EQ(n, e.col);
      seen.insert({m, n});
    }
  }
  EXPECT_EQ(seen.size(), 128u * 128u);
}

TEST(MmaSm90, AccumulatorFragmentIsTheRegistersInPtxOrder) {
  // partition_fragment_C of one warpgroup's TiledMMA over 128×256 (the ping-pong consumer's tile): two
  // atoms along M, each (c, r, g) = GmmaFragmentLayout, value (c, r, g) of atom h in register
  // c + 2r + 4g + 128h: the order of the wgmma's d registers, and of `float acc[2][128]`.
  using Atom = SM90_64xNx16_F32BF16BF16_SS<256, GmmaMajor::K, GmmaMajor::K>;
  auto accum = partition_fragment_C(make_tiled_mma(Atom{}, Layout<Shape<_1, _1, _1>>{}), make_shape(_128{}, _256{}));
  static_assert(std::is_same_v<decltype(accum.layout()), Layout<Shape<Shape<_2, _2, _32>, _2, _1>,
                                                                Stride<Stride<_1, _2, _4>, _128, _256>> const&>);
  auto part = make_tiled_mma(Atom{}, Layout<Shape<_1, _1, _1>>{}).get_slice(5).partition_C(make_identity_tensor(make_shape(_128{}, _256{})));
  for (int h = 0; h < 2; ++h) {
    auto acc = flatten(accum(_, h, 0));  // (2,2,32)
    static_assert(std::is_same_v<decltype(acc.layout()), GmmaFragmentLayout<256> const&>);
    EXPECT_EQ(acc.data() - accum.data(), 128 * h);
    for (int g = 0; g < 32; ++g)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          const int i = c + 2 * r + 4 * g;
          EXPECT_EQ(&acc(c, r, g) - accum.data(), 128 * h + i);
          // and the coordinate names the value's place in the tile, as the PTX ISA's figure has it
          auto mn = flatten(part(_, h, 0))(c, r, g);
          const RowCol e = ptx_wgmma_d(5, i);
          EXPECT_EQ(int(get<0>(mn)), 64 * h + e.row);
          EXPECT_EQ(int(get<1>(mn)), e.col);
        }
  }
  // A raw array viewed as the fragment: the same registers (chapters 09-10's helpers forward so).
  float raw[128] = {};
  auto view = make_gmma_fragment_view(raw);
  EXPECT_EQ(&view(1, 1, 31), &raw[127]);
}

TEST(MmaSm90, DescriptorBitFieldsFollowThePtxIsa) {
  // Start 0x1400 bytes, LBO 8192, SBO 1024, 128-byte swizzle: bits 0-13 = 0x140, 16-29 = 512,
  // 32-45 = 64, 62-63 = 1.
  const GmmaDescriptor d = GmmaDescriptor::make(0x1400, 8192, 1024, GmmaSwizzle::b128);
  EXPECT_EQ(d.desc & 0x3FFFu, 0x140u);
  EXPECT_EQ((d.desc >> 16) & 0x3FFFu, 512u);
  EXPECT_EQ((d.desc >> 32) & 0x3FFFu, 64u);
  EXPECT_EQ(d.desc >> 62, 1u);
  EXPECT_EQ((d.desc >> 14) & 0x3u, 0u) << "reserved bits stay zero";
  EXPECT_EQ((d.desc >> 46) & 0xFFFFu, 0u) << "bits 46-61 (base offset included) stay zero";
  EXPECT_EQ(d.start_bytes(), 0x1400u);
  EXPECT_EQ(d.lbo_bytes(), 8192u);
  EXPECT_EQ(d.sbo_bytes(), 1024u);
  EXPECT_EQ(d.swizzle(), GmmaSwizzle::b128);
  EXPECT_EQ(d.base_offset(), 0);
  // Swizzle modes: 0 none, 1 128B, 2 64B, 3 32B.
  EXPECT_EQ(GmmaDescriptor::make(0, 16, 16, GmmaSwizzle::b64).desc >> 62, 2u);
  EXPECT_EQ(GmmaDescriptor::make(0, 16, 16, GmmaSwizzle::b32).desc >> 62, 3u);
  // The largest shared address, 2^18 - 16 bytes, fills the 14-bit field.
  EXPECT_EQ(GmmaDescriptor::make((1u << 18) - 16, 0, 0, GmmaSwizzle::none).desc & 0x3FFFu, 0x3FFFu);
  // Advancing by 32 bytes (16 bf16 along K) moves the start field by 2 and nothing else.
  EXPECT_EQ(d.advanced(32).start_bytes(), 0x1420u);
  EXPECT_EQ(d.advanced(32).desc - d.desc, 2u);
}

TEST(MmaSm90, SwizzleModeOfALayout) {
  static_assert(gmma_swizzle_of<__nv_bfloat16, decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}))>() ==
                GmmaSwizzle::b128);
  static_assert(gmma_swizzle_of<__nv_bfloat16, decltype(composition(Swizzle<2, 3, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}))>() ==
                GmmaSwizzle::b64);
  static_assert(gmma_swizzle_of<__nv_bfloat16, decltype(composition(Swizzle<1, 3, 3>{}, Layout<Shape<_8, _16>, Stride<_16, _1>>{}))>() ==
                GmmaSwizzle::b32);
  static_assert(gmma_swizzle_of<float, decltype(composition(Swizzle<3, 2, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}))>() ==
                GmmaSwizzle::b128);
  static_assert(gmma_swizzle_of<__nv_bfloat16, Layout<Shape<_8, _64>, Stride<_64, _1>>>() == GmmaSwizzle::none);
  SUCCEED();
}

// The layouts chapter 09 uses, and the fields the PTX ISA asks for. A K-major stage (MN rows of 64
// bf16): SBO = 8 rows × 128 bytes = 1024; an MN-major stage (panels of 64 n × 64 k): SBO = 8 k-rows ×
// 128 bytes = 1024, LBO = one panel = 64 × 64 × 2 = 8192 bytes.
using AtomK = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
using AtomMN = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _64>, Stride<_1, _64>>{}));

TEST(MmaSm90, DescriptorOfAKMajorSwizzledTile) {
  alignas(1024) static __nv_bfloat16 smem[3 * 128 * 64];
  auto sA = make_tensor(make_smem_ptr(smem), tile_to_shape(AtomK{}, make_shape(_128{}, _64{}, _3{})));  // (128,64,3)
  for (int s = 0; s < 3; ++s)
    for (int wg = 0; wg < 2; ++wg)
      for (int kk = 0; kk < 4; ++kk) {
        auto rows = local_tile(sA(_, _, s), make_shape(_64{}, _64{}), make_coord(wg, 0));  // (64,64)
        auto a_k = local_tile(rows, make_shape(_64{}, _16{}), make_coord(0, kk));          // (64,16)
        const GmmaDescriptor d = make_gmma_desc<GmmaMajor::K>(a_k);
        const auto expect_start = std::uint32_t(reinterpret_cast<std::uintptr_t>(smem) +
                                                2 * (s * 128 * 64 + wg * 64 * 64 + 16 * kk));
        EXPECT_EQ(d.start_bytes(), expect_start & 0x3FFF0u) << "stage " << s << " wg " << wg << " kk " << kk;
        EXPECT_EQ(d.sbo_bytes(), 1024u);
        EXPECT_EQ(d.swizzle(), GmmaSwizzle::b128);
      }
}

TEST(MmaSm90, DescriptorOfAnMNMajorSwizzledTile) {
  alignas(1024) static __nv_bfloat16 smem[2 * 256 * 64];
  auto sB = make_tensor(make_smem_ptr(smem), tile_to_shape(AtomMN{}, make_shape(_256{}, _64{}, _2{})));  // (256,64,2)
  // Element (n, k) of a stage: panel n/64 (8192 bytes each), row k (128 bytes), column n % 64.
  EXPECT_EQ(&sB(64, 0, 0) - &sB(0, 0, 0), 64 * 64);
  EXPECT_EQ(&sB(0, 0, 1) - &sB(0, 0, 0), 256 * 64);
  for (int kk = 0; kk < 4; ++kk) {
    auto b_k = local_tile(sB(_, _, 1), make_shape(_256{}, _16{}), make_coord(0, kk));  // (256,16)
    const GmmaDescriptor d = make_gmma_desc<GmmaMajor::MN>(b_k);
    const auto expect_start =
        std::uint32_t(reinterpret_cast<std::uintptr_t>(smem) + 2 * (256 * 64 + 16 * kk * 64));  // 16 k-rows further
    EXPECT_EQ(d.start_bytes(), expect_start & 0x3FFF0u) << "kk " << kk;
    EXPECT_EQ(d.sbo_bytes(), 1024u);
    EXPECT_EQ(d.lbo_bytes(), 8192u);
    EXPECT_EQ(d.swizzle(), GmmaSwizzle::b128);
  }
}

}  // namespace
