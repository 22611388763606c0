// The layout library compiled by nvcc: every main piece instantiated inside __global__
// kernels (so the headers stay device-capable), and run when a GPU is present.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "layout/all.hpp"

namespace {

using namespace mm;

// C = A * B^T over one 32x32 tile with 16x16 threads, MoYe-style: tile, parallelize,
// register accumulators, predication for any M, N (K multiple of 8 for brevity).
__global__ void tile_gemm_kernel(float const* A, float const* B, float* Cm, int M, int N, int K) {
  using BM = _32;
  using BN = _32;
  using BK = _8;
  __shared__ float smem_a[cosize_v<Layout<Shape<BM, BK>, Stride<_1, Int<33>>>>];
  __shared__ float smem_b[cosize_v<Layout<Shape<BN, BK>, Stride<_1, Int<33>>>>];
  auto sA = make_tensor(make_smem_ptr(smem_a), Layout<Shape<BM, BK>, Stride<_1, Int<33>>>{});  // (BM,BK)
  auto sB = make_tensor(make_smem_ptr(smem_b), Layout<Shape<BN, BK>, Stride<_1, Int<33>>>{});  // (BN,BK)
  auto mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));            // (M,K)
  auto mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, _1{}));            // (N,K)
  auto mC = make_tensor(make_gmem_ptr(Cm), make_shape(M, N), make_stride(N, _1{}));           // (M,N)
  auto cA = make_identity_tensor(shape(mA));
  auto cB = make_identity_tensor(shape(mB));
  auto cC = make_identity_tensor(shape(mC));

  auto tiler = make_shape(BM{}, BN{}, BK{});
  auto coord = make_coord(int(blockIdx.x), int(blockIdx.y), _);
  auto gA = local_tile(mA, tiler, coord, Step<_1, X, _1>{});  // (BM,BK,k)
  auto gB = local_tile(mB, tiler, coord, Step<X, _1, _1>{});  // (BN,BK,k)
  auto gC = local_tile(mC, tiler, coord, Step<_1, _1, X>{});  // (BM,BN)
  auto gcA = local_tile(cA, tiler, coord, Step<_1, X, _1>{});
  auto gcB = local_tile(cB, tiler, coord, Step<X, _1, _1>{});
  auto gcC = local_tile(cC, tiler, coord, Step<_1, _1, X>{});

  auto tCopy = Layout<Shape<_32, _8>>{};
  auto tAgA = local_partition(gA, tCopy, threadIdx.x);    // (1,1,k)
  auto tAsA = local_partition(sA, tCopy, threadIdx.x);    // (1,1)
  auto tAcA = local_partition(gcA, tCopy, threadIdx.x);
  auto tBgB = local_partition(gB, tCopy, threadIdx.x);
  auto tBsB = local_partition(sB, tCopy, threadIdx.x);
  auto tBcB = local_partition(gcB, tCopy, threadIdx.x);

  auto tC = Layout<Shape<_16, _16>>{};
  auto tCsA = parallelize(sA, tC, threadIdx.x, Step<_1, X>{});  // (2,BK)
  auto tCsB = parallelize(sB, tC, threadIdx.x, Step<X, _1>{});  // (2,BK)
  auto tCgC = parallelize(gC, tC, threadIdx.x);                 // (2,2)
  auto tCcC = parallelize(gcC, tC, threadIdx.x);
  auto tCrC = make_fragment_like(tCgC);
  clear(tCrC);

  for (int k = 0; k < int(size<2>(tAgA)); ++k) {
    auto pa = make_predicate(tAcA(_, _, k), shape(mA));
    auto pb = make_predicate(tBcB(_, _, k), shape(mB));
    clear(tAsA);
    clear(tBsB);
    copy_if(pa, tAgA(_, _, k), tAsA);
    copy_if(pb, tBgB(_, _, k), tBsB);
    __syncthreads();
    gemm(tCsA, tCsB, tCrC);
    __syncthreads();
  }
  copy_if(make_predicate(tCcC, shape(mC)), tCrC, tCgC);
}

// Algebra evaluated on the device: composition, swizzle, divides.
__global__ void algebra_kernel(int* out) {
  auto a = make_layout(make_shape(_6{}, _2{}), make_stride(_8{}, _2{}));
  auto r = composition(a, make_layout(make_shape(_4{}, _3{}), make_stride(_3{}, _1{})));
  auto z = zipped_divide(make_layout(make_shape(12, 32)), make_shape(_4{}, _8{}));
  for (int i = 0; i < 12; ++i) out[i] = r(i);
  out[12] = z(make_coord(3, 7), make_coord(2, 1));
  out[13] = right_inverse(Layout<Shape<_4, _2>, Stride<_2, _1>>{})(5);
  out[14] = composition(Swizzle<3, 2, 3>{}, make_layout(make_shape(_32{}, _32{}), LayoutRight{}))(5, 7);
}

// One 64x64 tile of C = A * B^T (A, B column-major (M,K), (N,K); K multiple of 8, M, N
// multiples of 64) with TiledCopy (cp.async, 128 bit) and TiledMMA (UniversalFMA 16x16).
// cp.async needs sm_80: the body exists only in the passes that can have it (arch.hpp), so the
// file builds for sm_75 too; a template, so that the other branch is discarded rather than compiled.
template <class T>
__global__ void tiled_copy_mma_kernel(T const* A, T const* B, T* Cm, int M, int N, int K) {
  if constexpr (!mm::arch::compiled_for(mm::arch::sm80)) {
    mm::arch::no_code_for_this_target();
  } else {
    using SmemLayout = Layout<Shape<_64, _8>>;
    __shared__ alignas(16) float smem_a[cosize_v<SmemLayout>];
    __shared__ alignas(16) float smem_b[cosize_v<SmemLayout>];
    auto sA = make_tensor(make_smem_ptr(smem_a), SmemLayout{});                     // (BM,BK)
    auto sB = make_tensor(make_smem_ptr(smem_b), SmemLayout{});                     // (BN,BK)
    auto mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(_1{}, M));  // (M,K)
    auto mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(_1{}, N));  // (N,K)
    auto mC = make_tensor(make_gmem_ptr(Cm), make_shape(M, N), make_stride(_1{}, M)); // (M,N)
    auto gA = local_tile(mA, make_shape(_64{}, _8{}), make_coord(int(blockIdx.x), _));  // (BM,BK,k)
    auto gB = local_tile(mB, make_shape(_64{}, _8{}), make_coord(int(blockIdx.y), _));  // (BN,BK,k)
    auto gC = local_tile(mC, make_shape(_64{}, _64{}), make_coord(int(blockIdx.x), int(blockIdx.y)));  // (BM,BN)

    auto copy_ab = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>, float>{},
                                   Layout<Shape<_16, _8>>{}, Layout<Shape<_4, _1>>{});
    auto thr_copy = copy_ab.get_slice(threadIdx.x);
    auto tAgA = thr_copy.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAsA = thr_copy.partition_D(sA);  // (CPY,CPY_M,CPY_K)
    auto tBgB = thr_copy.partition_S(gB);
    auto tBsB = thr_copy.partition_D(sB);

    auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _8>>{});
    auto thr_mma = mma.get_slice(threadIdx.x);
    auto tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
    auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCrC = thr_mma.partition_fragment_C(gC);
    clear(tCrC);
    for (int k = 0; k < int(size<3>(tAgA)); ++k) {
      copy(copy_ab, tAgA(_, _, _, k), tAsA);
      copy(copy_ab, tBgB(_, _, _, k), tBsB);
      cp_async_fence();
      cp_async_wait<0>();
      __syncthreads();
      gemm(mma, tCsA, tCsB, tCrC);
      __syncthreads();
    }
    copy(tCrC, tCgC);
  }
}

// The same tile with chapter 07's staging: a swizzled (BM,BK,stage) buffer filled by cp.async
// into a run-time stage, and the MMA reading its 4-element runs along M and N as float4s.
// (64,8,2) column-major: index m + 64 k + 512 s; Swizzle<3,2,4> XORs k (bits 6..8) into the
// 16-byte unit of m (bits 2..4). cp.async: guarded like tiled_copy_mma_kernel (a template, so the
// other target's branch is discarded).
template <class T>
__global__ void swizzled_tiled_copy_mma_kernel(T const* A, T const* B, T* Cm, int M, int N, int K) {
  if constexpr (!mm::arch::compiled_for(mm::arch::sm80)) {
    mm::arch::no_code_for_this_target();
  } else {
    using SmemLayout = decltype(composition(Swizzle<3, 2, 4>{}, make_layout(make_shape(_64{}, _8{}, _2{}))));
    __shared__ alignas(16) float smem_a[cosize_v<SmemLayout>];
    __shared__ alignas(16) float smem_b[cosize_v<SmemLayout>];
    auto sA = make_tensor(make_smem_ptr(smem_a), SmemLayout{});                       // (BM,BK,stage)
    auto sB = make_tensor(make_smem_ptr(smem_b), SmemLayout{});                       // (BN,BK,stage)
    auto mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(_1{}, M));    // (M,K)
    auto mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(_1{}, N));    // (N,K)
    auto mC = make_tensor(make_gmem_ptr(Cm), make_shape(M, N), make_stride(_1{}, M));   // (M,N)
    auto gA = local_tile(mA, make_shape(_64{}, _8{}), make_coord(int(blockIdx.x), _));  // (BM,BK,k)
    auto gB = local_tile(mB, make_shape(_64{}, _8{}), make_coord(int(blockIdx.y), _));  // (BN,BK,k)
    auto gC = local_tile(mC, make_shape(_64{}, _64{}), make_coord(int(blockIdx.x), int(blockIdx.y)));  // (BM,BN)

    auto copy_ab = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>, float>{},
                                   Layout<Shape<_16, _8>>{}, Layout<Shape<_4, _1>>{});
    auto thr_copy = copy_ab.get_slice(threadIdx.x);
    auto tAgA = thr_copy.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tBgB = thr_copy.partition_S(gB);

    // 16x8 threads; the permutations give each thread runs of 4 rows (and columns) of the tile.
    auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _8, _1>>{},
                              Tile<Layout<Shape<_16, _4>, Stride<_4, _1>>, Layout<Shape<_8, _4>, Stride<_4, _1>>, Underscore>{});
    auto thr_mma = mma.get_slice(threadIdx.x);
    auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCrA = make_fragment_like(thr_mma.partition_A(sA(_, _, 0)));  // (MMA,MMA_M,MMA_K)
    auto tCrB = make_fragment_like(thr_mma.partition_B(sB(_, _, 0)));  // (MMA,MMA_N,MMA_K)
    auto tCrC = thr_mma.partition_fragment_C(gC);
    clear(tCrC);
    Copy_Atom<UniversalCopy<mm::uint128_t>, float> vec4;
    for (int k = 0; k < int(size<3>(tAgA)); ++k) {
      int stage = k % 2;  // a run-time stage
      copy(copy_ab, tAgA(_, _, _, k), thr_copy.partition_D(sA(_, _, stage)));
      copy(copy_ab, tBgB(_, _, _, k), thr_copy.partition_D(sB(_, _, stage)));
      cp_async_fence();
      cp_async_wait<0>();
      __syncthreads();
      auto tCsA = thr_mma.partition_A(sA(_, _, stage));  // (MMA,MMA_M,MMA_K), swizzled
      auto tCsB = thr_mma.partition_B(sB(_, _, stage));  // (MMA,MMA_N,MMA_K)
      for (int kk = 0; kk < 8; ++kk) {
        copy(vec4, group_modes<0, 2>(tCsA(_, _, kk)), group_modes<0, 2>(tCrA(_, _, kk)));  // runs of 4 -> LDS.128
        copy(vec4, group_modes<0, 2>(tCsB(_, _, kk)), group_modes<0, 2>(tCrB(_, _, kk)));
      }
      gemm(mma, tCrA, tCrB, tCrC);
      __syncthreads();
    }
    copy(tCrC, tCgC);
  }
}

// Chapter 08's shared -> register path on one 64×64×32 tile: A (M,K) and B (N,K) in global memory,
// K-major or MN-major, copied into swizzled shared tiles, then into the MMA's register fragments with
// ldmatrix (make_tiled_copy_A/B; .trans for an MN-major operand, retile_D for B's two atoms per
// instruction), and multiplied by 4 warps of mma.sync: bf16 m16n8k16, or with T = float tf32
// m16n8k8 (K-major only: ldmatrix in fp32 units). The CPU tests check the same copies and MMAs by
// emulation (test_ldmatrix.cpp); this one runs them. ldmatrix and mma.sync need sm_75 / sm_80:
// guarded like the cp.async kernels.
template <bool AKMajor, bool BKMajor, class T>
__global__ void ldmatrix_mma_kernel(T const* A, T const* B, float* Cm) {
  if constexpr (!mm::arch::compiled_for(mm::arch::sm80)) {
    mm::arch::no_code_for_this_target();
  } else {
    constexpr bool tf32 = std::is_same_v<T, float>;
    static_assert(!tf32 || (AKMajor && BKMajor), "tf32 operands load with ldmatrix only K-major");
    // K-major rows of 32 elements: bf16 (64 bytes) Swizzle<2,3,3>, fp32 (128 bytes) Swizzle<3,2,3>,
    // both permuting 16-byte units by row; MN-major columns of 64 bf16: Swizzle<3,3,3>.
    using KMajor = Layout<Shape<_64, _32>, Stride<_32, _1>>;
    using MNMajor = Layout<Shape<_64, _32>, Stride<_1, _64>>;
    using KSwizzle = std::conditional_t<tf32, Swizzle<3, 2, 3>, Swizzle<2, 3, 3>>;
    using GA = std::conditional_t<AKMajor, KMajor, MNMajor>;
    using GB = std::conditional_t<BKMajor, KMajor, MNMajor>;
    using SA = decltype(composition(std::conditional_t<AKMajor, KSwizzle, Swizzle<3, 3, 3>>{}, GA{}));
    using SB = decltype(composition(std::conditional_t<BKMajor, KSwizzle, Swizzle<3, 3, 3>>{}, GB{}));
    __shared__ alignas(128) T smem_a[cosize_v<SA>];
    __shared__ alignas(128) T smem_b[cosize_v<SB>];
    auto gA = make_tensor(make_gmem_ptr(A), GA{});    // (M,K)
    auto gB = make_tensor(make_gmem_ptr(B), GB{});    // (N,K)
    auto gC = make_tensor(make_gmem_ptr(Cm), Layout<Shape<_64, _64>, Stride<_64, _1>>{});  // (M,N)
    auto sA = make_tensor(make_smem_ptr(smem_a), SA{});  // (M,K)
    auto sB = make_tensor(make_smem_ptr(smem_b), SB{});  // (N,K)
    for (int i = int(threadIdx.x); i < 64 * 32; i += 128) {
      sA(i) = gA(i);
      sB(i) = gB(i);
    }
    __syncthreads();

    // Four warps 2×2 over (M,N); the 32×32 tile gives each warp two atoms along N (one ldmatrix.x4 of B).
    auto mma = [] {
      if constexpr (tf32) return make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _8>{});
      else return make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _16>{});
    }();
    auto thr_mma = mma.get_slice(threadIdx.x);
    auto tCrA = thr_mma.partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCrB = thr_mma.partition_fragment_B(sB);  // (MMA,MMA_N,MMA_K)
    auto tCrC = thr_mma.partition_fragment_C(gC);  // (MMA,MMA_M,MMA_N)

    using LdsmA = std::conditional_t<AKMajor, SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T>;
    using LdsmB = std::conditional_t<BKMajor, SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T>;
    auto s2r_a = make_tiled_copy_A(Copy_Atom<LdsmA, T>{}, mma);
    auto s2r_b = make_tiled_copy_B(Copy_Atom<LdsmB, T>{}, mma);
    auto thr_a = s2r_a.get_slice(threadIdx.x);
    auto thr_b = s2r_b.get_slice(threadIdx.x);
    auto tXsA = thr_a.partition_S(sA);  // (CPY,CPY_M,CPY_K)
    auto tXrA = thr_a.retile_D(tCrA);   // (CPY,CPY_M,CPY_K)
    auto tXsB = thr_b.partition_S(sB);  // (CPY,CPY_N,CPY_K)
    auto tXrB = thr_b.retile_D(tCrB);   // (CPY,CPY_N,CPY_K): two atoms along N per ldmatrix.x4
    copy(s2r_a, tXsA, tXrA);
    copy(s2r_b, tXsB, tXrB);

    clear(tCrC);
    gemm(mma, tCrA, tCrB, tCrC);
    copy(tCrC, thr_mma.partition_C(gC));
  }
}

}  // namespace

TEST(LayoutCuda, SwizzledStagesTiledCopyTiledMma) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // cp.async
  int M = 128, N = 64, K = 32;
  std::vector<float> a(M * K), b(N * K), c(M * N, -1.f);
  for (int i = 0; i < M * K; ++i) a[i] = float(i % 7) - 3.f;
  for (int i = 0; i < N * K; ++i) b[i] = float(i % 5) - 2.f;
  mm::DeviceBuffer<float> dA(a), dB(b), dC(c);
  swizzled_tiled_copy_mma_kernel<float><<<dim3(M / 64, N / 64), 128>>>(dA.data(), dB.data(), dC.data(), M, N, K);
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> h = dC.download();
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0.f;
      for (int k = 0; k < K; ++k) ref += a[m + k * M] * b[n + k * N];
      ASSERT_EQ(h[m + n * M], ref) << m << "," << n;
    }
}

TEST(LayoutCuda, TiledCopyTiledMma) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // cp.async
  int M = 128, N = 64, K = 32;
  std::vector<float> a(M * K), b(N * K), c(M * N, -1.f);
  for (int i = 0; i < M * K; ++i) a[i] = float(i % 7) - 3.f;
  for (int i = 0; i < N * K; ++i) b[i] = float(i % 5) - 2.f;
  mm::DeviceBuffer<float> dA(a), dB(b), dC(c);
  tiled_copy_mma_kernel<float><<<dim3(M / 64, N / 64), 128>>>(dA.data(), dB.data(), dC.data(), M, N, K);
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> h = dC.download();
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0.f;
      for (int k = 0; k < K; ++k) ref += a[m + k * M] * b[n + k * N];
      ASSERT_EQ(h[m + n * M], ref) << m << "," << n;
    }
}

TEST(LayoutCuda, HostSideOfTheSameHeaders) {
  auto r = composition(make_layout(make_shape(_6{}, _2{}), make_stride(_8{}, _2{})),
                       make_layout(make_shape(_4{}, _3{}), make_stride(_3{}, _1{})));
  EXPECT_EQ(to_string(r), "((_2,_2),_3):((_24,_2),_8)");
}

TEST(LayoutCuda, AlgebraOnDevice) {
  MM_REQUIRE_GPU();
  mm::DeviceBuffer<int> out(15);
  algebra_kernel<<<1, 1>>>(out.data());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> h = out.download();
  auto r = composition(make_layout(make_shape(_6{}, _2{}), make_stride(_8{}, _2{})),
                       make_layout(make_shape(_4{}, _3{}), make_stride(_3{}, _1{})));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(h[i], int(r(i)));
  EXPECT_EQ(h[12], int(zipped_divide(make_layout(make_shape(12, 32)), make_shape(_4{}, _8{}))(make_coord(3, 7), make_coord(2, 1))));
  EXPECT_EQ(h[13], int(right_inverse(Layout<Shape<_4, _2>, Stride<_2, _1>>{})(5)));
  EXPECT_EQ(h[14], int(composition(Swizzle<3, 2, 3>{}, make_layout(make_shape(_32{}, _32{}), LayoutRight{}))(5, 7)));
}

TEST(LayoutCuda, TileGemmAnySize) {
  MM_REQUIRE_GPU();
  int M = 45, N = 70, K = 24;
  std::vector<float> a(M * K), b(N * K), c(M * N, -1.f);
  for (int i = 0; i < M * K; ++i) a[i] = float(i % 7) - 3.f;
  for (int i = 0; i < N * K; ++i) b[i] = float(i % 5) - 2.f;
  mm::DeviceBuffer<float> dA(a), dB(b), dC(c);
  tile_gemm_kernel<<<dim3((M + 31) / 32, (N + 31) / 32), 256>>>(dA.data(), dB.data(), dC.data(), M, N, K);
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> h = dC.download();
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0.f;
      for (int k = 0; k < K; ++k) ref += a[m * K + k] * b[n * K + k];
      ASSERT_EQ(h[m * N + n], ref) << m << "," << n;
    }
}

namespace {
template <bool AKMajor, bool BKMajor, class T>
void run_ldmatrix_mma() {
  // A (M,K), B (N,K): 64×32 each, stored K-major (row index · 32 + k) or MN-major (k · 64 + row);
  // small values, exact in bf16 and tf32 and in every partial sum.
  std::vector<T> a(64 * 32), b(64 * 32);
  std::vector<float> fa(64 * 32), fb(64 * 32);
  for (int i = 0; i < 64 * 32; ++i) {
    fa[i] = float(i % 7 - 3) / 4.f;
    fb[i] = float(i % 5 - 2) / 2.f;
    if constexpr (std::is_same_v<T, float>) {
      a[i] = fa[i];
      b[i] = fb[i];
    } else {
      a[i] = __float2bfloat16(fa[i]);
      b[i] = __float2bfloat16(fb[i]);
    }
  }
  auto at = [&](std::vector<float> const& v, bool k_major, int r, int k) { return k_major ? v[r * 32 + k] : v[k * 64 + r]; };
  mm::DeviceBuffer<T> dA(a), dB(b);
  mm::DeviceBuffer<float> dC(std::vector<float>(64 * 64, -1.f));
  ldmatrix_mma_kernel<AKMajor, BKMajor, T><<<1, 128>>>(dA.data(), dB.data(), dC.data());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> h = dC.download();
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      double ref = 0;
      for (int k = 0; k < 32; ++k) ref += double(at(fa, AKMajor, m, k)) * double(at(fb, BKMajor, n, k));
      ASSERT_EQ(double(h[m * 64 + n]), ref) << m << "," << n;
    }
}
}  // namespace

TEST(LayoutCuda, LdmatrixIntoMmaFragmentsEveryStorageOrder) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // mma.sync bf16
  run_ldmatrix_mma<true, true, __nv_bfloat16>();    // RCR
  run_ldmatrix_mma<true, false, __nv_bfloat16>();   // RRR: B through ldmatrix.trans
  run_ldmatrix_mma<false, true, __nv_bfloat16>();
  run_ldmatrix_mma<false, false, __nv_bfloat16>();
}

TEST(LayoutCuda, LdmatrixIntoTf32MmaFragments) {
  MM_REQUIRE_ARCH(mm::arch::sm80);  // mma.sync tf32
  run_ldmatrix_mma<true, true, float>();  // K-major A and B: ldmatrix.x4 in fp32 units
}
