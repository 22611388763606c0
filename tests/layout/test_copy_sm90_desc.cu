// TMA tensor maps (layout/copy_sm90_desc.hpp): every rule that keeps a map from describing a matrix is
// refused with a line that names it (CPU), and on a Hopper GPU a map the rules accept is encoded by
// the driver and a box it loads lands where the 128-byte swizzle says (GPU, sm_90a).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.hpp"
#include "layout/copy_sm90_desc.hpp"
#include "layout/all.hpp"
#include "layout/copy_sm90_tma.hpp"
#include "layout/mbarrier.hpp"

namespace {

using mm::TmaSwizzle;
alignas(16) const unsigned char kBuffer[64] = {};
const void* const kAligned = kBuffer;

std::string rejects(const void* p, std::int64_t inner, std::int64_t outer, std::int64_t stride, int bi, int bo,
                    TmaSwizzle s = TmaSwizzle::b128, int elem = 2) {
  return mm::tma_2d_rejects(elem, p, inner, outer, stride, bi, bo, s);
}
bool names(const std::string& why, const char* rule) { return why.find(rule) != std::string::npos; }

TEST(TmaMap, AcceptsTheChapterNineBoxes) {
  EXPECT_EQ(rejects(kAligned, 4096, 4096, 4096, 64, 128), "");  // A: 128 rows × 64 k
  EXPECT_EQ(rejects(kAligned, 4096, 4096, 4096, 64, 256), "");  // B (RCR): 256 rows
  EXPECT_EQ(rejects(kAligned, 8, 1, 8, 64, 64), "");             // one row of 16 bytes, a box larger than it
  EXPECT_EQ(rejects(kAligned, 1, 5, 8, 64, 64), "");             // a one-column matrix with a 16-byte pitch
}

TEST(TmaMap, RefusesEachRuleWithItsNumbers) {
  const unsigned char* base = kBuffer;
  std::string why = rejects(base + 2, 64, 64, 64, 64, 64);
  EXPECT_TRUE(names(why, "16-byte aligned base address") && names(why, "2 bytes past")) << why;
  why = rejects(kAligned, 9, 4, 9, 64, 64);
  EXPECT_TRUE(names(why, "row pitch that is a multiple of 16 bytes") && names(why, "18 bytes")) << why;
  why = rejects(kAligned, 64, 64, std::int64_t(1) << 39, 64, 64);
  EXPECT_TRUE(names(why, "below 2^40")) << why;
  why = rejects(kAligned, (std::int64_t(1) << 32) + 1, 1, (std::int64_t(1) << 32) + 8, 64, 64);
  EXPECT_TRUE(names(why, "extents from 1 to 2^32")) << why;
  why = rejects(kAligned, 64, 64, 32, 64, 64);
  EXPECT_TRUE(names(why, "rows that do not overlap")) << why;
  why = rejects(kAligned, 4096, 4096, 4096, 64, 257);
  EXPECT_TRUE(names(why, "extents from 1 to 256") && names(why, "257")) << why;
  why = rejects(kAligned, 4096, 4096, 4096, 4, 64, TmaSwizzle::none);
  EXPECT_TRUE(names(why, "multiple of 16 bytes: 4 elements = 8 bytes")) << why;
  why = rejects(kAligned, 4096, 4096, 4096, 128, 64);  // 256-byte rows under the 128-byte swizzle
  EXPECT_TRUE(names(why, "128-byte swizzle takes box rows of at most 128 bytes")) << why;
  EXPECT_EQ(rejects(kAligned, 4096, 4096, 4096, 32, 64, TmaSwizzle::b64), "");
  why = rejects(kAligned, 4096, 4096, 4096, 64, 64, TmaSwizzle::b64);
  EXPECT_TRUE(names(why, "64-byte swizzle")) << why;
  why = rejects(kAligned, 64, 64, 64, 64, 64, TmaSwizzle::none, 3);
  EXPECT_TRUE(names(why, "1, 2, 4 or 8 bytes")) << why;
}

TEST(TmaMap, TheLayoutChoosesTheInnerDimension) {
  // Refused before the driver is reached: the messages come from the layout's strides.
  const auto* p = reinterpret_cast<const __nv_bfloat16*>(kBuffer + 2);
  try {  // (M,K) row-major: K inner; the misaligned base is reported
    mm::make_tma_map(p, mm::make_layout(mm::make_shape(64, 64), mm::make_stride(64, mm::_1{})),
                     mm::make_shape(mm::_64{}, mm::_64{}), TmaSwizzle::b128);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(names(e.what(), "16-byte aligned")) << e.what();
  }
  const auto* q = reinterpret_cast<const __nv_bfloat16*>(kBuffer);
  try {  // (N,K) with N inner and a pitch of 9 elements
    mm::make_tma_map(q, mm::make_layout(mm::make_shape(9, 64), mm::make_stride(mm::_1{}, 9)),
                     mm::make_shape(mm::_64{}, mm::_64{}), TmaSwizzle::b128);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(names(e.what(), "18 bytes")) << e.what();
  }
  try {
    mm::make_tma_map(q, mm::make_layout(mm::make_shape(8, 8), mm::make_stride(2, 16)),
                     mm::make_shape(mm::_8{}, mm::_8{}), TmaSwizzle::none);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(names(e.what(), "no mode of stride 1")) << e.what();
  }
}

// ---- GPU: the driver encodes the map; a box lands in the 128-byte swizzle ----

// Loads the 64×64 box at (c0, c1) into a 1024-byte aligned tile and copies the tile out as it lies.
__global__ void tma_box_kernel(const __grid_constant__ CUtensorMap map, int c0, int c1, __nv_bfloat16* out) {
  if constexpr (mm::arch::compiled_for(mm::arch::sm90a)) {
    alignas(1024) __shared__ __nv_bfloat16 tile[64 * 64];
    __shared__ std::uint64_t bar;
    if (threadIdx.x == 0) {
      mm::mbarrier_init(&bar, 1);
      mm::fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      mm::mbarrier_arrive_expect_tx(&bar, sizeof(tile));
      mm::SM90_TMA_LOAD_2D::copy(&map, &bar, tile, c0, c1);
    }
    mm::mbarrier_wait(&bar, 0);
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[i] = tile[i];
  }
}

TEST(TmaMap, ABoxLandsSwizzledWithZerosOutside) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  // A 100×72 row-major matrix (K inner = 72, a 144-byte pitch), element (r, c) = r·72 + c (exact in bf16
  // below 256: the values are taken mod 256).
  const int rows = 100, cols = 72;
  std::vector<__nv_bfloat16> host(rows * cols);
  for (int i = 0; i < rows * cols; ++i) host[i] = __float2bfloat16(float(i % 256));
  mm::DeviceBuffer<__nv_bfloat16> a(rows * cols), out(64 * 64);
  MM_CUDA_CHECK(cudaMemcpy(a.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  const CUtensorMap map = mm::make_tma_map(a.data(), mm::make_layout(mm::make_shape(rows, cols), mm::make_stride(cols, mm::_1{})),
                                           mm::make_shape(mm::_64{}, mm::_64{}), TmaSwizzle::b128);
  const int c0 = 64, c1 = 64;  // the box from column 64, row 64: columns 72.. and rows 100.. are outside
  tma_box_kernel<<<1, 128>>>(map, c0, c1, out.data());
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<__nv_bfloat16> tile = out.download();
  // The 128-byte swizzle: element (r, c) of the box at r·64 + (c ^ 8·(r % 8)) (16-byte units XOR the row).
  auto swizzled = mm::composition(mm::Swizzle<3, 3, 3>{}, mm::Layout<mm::Shape<mm::_64, mm::_64>, mm::Stride<mm::_64, mm::_1>>{});
  int wrong = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      const int gr = c1 + r, gc = c0 + c;
      const float expect = (gr < rows && gc < cols) ? float((gr * cols + gc) % 256) : 0.0f;
      const float got = __bfloat162float(tile[int(swizzled(r, c))]);
      if (got != expect && ++wrong <= 5) ADD_FAILURE() << "box (" << r << "," << c << "): " << got << ", expected " << expect;
    }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
