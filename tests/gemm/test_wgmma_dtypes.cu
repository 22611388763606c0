// The three wgmma atoms with fp32 accumulators (layout/mma_sm90.hpp) on an H100/H200: one warpgroup
// multiplies a 64×K tile of A by an N×K tile of B, both K-major in 128-byte swizzled shared memory,
// with gmma_k_block, and its accumulators are compared with the float64 product of the same values
// (GPU, sm_90a; skipped elsewhere with the reason). What chapter 12 will build on: bf16 (the control,
// K = 16 per instruction), tf32 (K = 8) and fp8 e4m3 (K = 32), at K of one and of two swizzle rows
// (the second row of a stage is a second 1024-byte-aligned block of rows), and at narrow and wide N.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gemm/epilogue_sm90.hpp"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "layout/all.hpp"
#include "layout/arch.hpp"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared
#include "layout/mma_sm90.hpp"

namespace {

using namespace mm;

// One warpgroup: A (64×K) and B (N×K), row-major in global memory, into swizzled shared tiles; one
// gmma_k_block; the 64×N accumulators out, row-major. Static shared memory: (64 + N)·K elements,
// kept under the 48 KB a kernel may declare statically.
template <class Atom, class T, int N, int K>
__global__ void wgmma_dtype_kernel(const T* a, const T* b, float* c) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    static_assert((64 + N) * K * int(sizeof(T)) <= 48 * 1024, "static shared memory stops at 48 KB");
    __shared__ __align__(1024) T a_smem[64 * K];
    __shared__ __align__(1024) T b_smem[N * K];
    auto sA = make_tensor(make_smem_ptr(a_smem), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(_64{}, Int<K>{})));
    auto sB = make_tensor(make_smem_ptr(b_smem), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(Int<N>{}, Int<K>{})));
    const int t = int(threadIdx.x);
    for (int i = t; i < 64 * K; i += 128) sA(i / K, i % K) = a[i];
    for (int i = t; i < N * K; i += 128) sB(i / K, i % K) = b[i];
    fence_proxy_async_shared();  // the ordinary stores, visible to wgmma's operand reads
    __syncthreads();
    float acc[N / 2];
    gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(sA, sB, acc, false);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc);
    store_accumulators_strided<Atom>(acc, c, N, 1, 0, 0, 64, N, t);
  }
}

float to_float(float x) { return x; }
float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
float to_float(__nv_fp8_e4m3 x) { return float(x); }

// Values the type holds exactly, so that the products are exact and only the accumulation rounds:
// bf16 and tf32 multiples of 2^-7 in [-1, 1] (8 significant bits at most), e4m3 from its own rounding
// of a value in [-8, 8] (the format's range in this test: normals and subnormals alike).
template <class T>
T random_value(std::mt19937& rng) {
  std::uniform_int_distribution<int> q(-128, 128);
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
    std::uniform_real_distribution<float> u(-8.0f, 8.0f);
    return __nv_fp8_e4m3(u(rng));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(float(q(rng)) / 128.0f);
  } else {
    return float(q(rng)) / 128.0f;
  }
}

template <class Atom, class T, int N, int K>
void expect_product_matches_fp64(double relative_tolerance) {
  std::mt19937 rng(N * 1000 + K);
  std::vector<T> a(64 * K), b(N * K);
  for (auto& x : a) x = random_value<T>(rng);
  for (auto& x : b) x = random_value<T>(rng);
  DeviceBuffer<T> da(a.size()), db(b.size());
  DeviceBuffer<float> dc(64 * N);
  MM_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  MM_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));
  MM_CUDA_CHECK(cudaMemset(dc.data(), 0xFF, 64 * N * sizeof(float)));  // poisoned: NaN
  wgmma_dtype_kernel<Atom, T, N, K><<<1, 128>>>(da.data(), db.data(), dc.data());
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> c = dc.download();
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        const double p = double(to_float(a[m * K + k])) * double(to_float(b[n * K + k]));
        ref += p;
        mag += std::fabs(p);
      }
      const double got = c[m * N + n];
      if (!(std::fabs(got - ref) <= relative_tolerance * mag + 1e-30) && bad++ < 5)
        ADD_FAILURE() << "C(" << m << "," << n << ") = " << got << ", want " << ref << " (N=" << N << ", K=" << K << ")";
    }
  EXPECT_EQ(bad, 0) << bad << " of " << 64 * N << " elements off";
}

TEST(WgmmaDtypes, Bf16TheControl) {
  MM_REQUIRE_ARCH(arch::sm90a);
  expect_product_matches_fp64<SM90_64xNx16_F32BF16BF16_SS<128, GmmaMajor::K, GmmaMajor::K>, __nv_bfloat16, 128, 64>(1e-5);
  expect_product_matches_fp64<SM90_64xNx16_F32BF16BF16_SS<64, GmmaMajor::K, GmmaMajor::K>, __nv_bfloat16, 64, 128>(1e-5);
}

TEST(WgmmaDtypes, Tf32AtOneAndTwoSwizzleRows) {
  MM_REQUIRE_ARCH(arch::sm90a);
  expect_product_matches_fp64<SM90_64xNx8_F32TF32TF32_SS<128>, float, 128, 32>(1e-5);
  expect_product_matches_fp64<SM90_64xNx8_F32TF32TF32_SS<16>, float, 16, 64>(1e-5);
  expect_product_matches_fp64<SM90_64xNx8_F32TF32TF32_SS<256>, float, 256, 32>(1e-5);
}

TEST(WgmmaDtypes, E4m3AtOneAndTwoSwizzleRows) {
  // The products of e4m3 values are exact; the tensor core adds them with fewer bits than fp32
  // keeps, so the bound is looser than bf16's (2^-10 of the sum of magnitudes).
  MM_REQUIRE_ARCH(arch::sm90a);
  expect_product_matches_fp64<SM90_64xNx32_F32E4M3E4M3_SS<128>, __nv_fp8_e4m3, 128, 128>(1.0 / 1024);
  expect_product_matches_fp64<SM90_64xNx32_F32E4M3E4M3_SS<32>, __nv_fp8_e4m3, 32, 256>(1.0 / 1024);
  expect_product_matches_fp64<SM90_64xNx32_F32E4M3E4M3_SS<256>, __nv_fp8_e4m3, 256, 128>(1.0 / 1024);
}

}  // namespace
