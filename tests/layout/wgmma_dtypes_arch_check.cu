// The tf32 and e4m3 wgmma atoms (layout/mma_sm90.hpp) through gmma_k_block on K-major 128-byte
// swizzled stages, compiled for sm_90a: ptxas checks every instruction's syntax (CTest
// layout_wgmma_dtypes_*), and the PTX must hold the two instruction names. Never launched.
#include <cuda_fp8.h>

#include "layout/all.hpp"
#include "layout/arch.hpp"
#include "layout/mma_sm90.hpp"

using namespace mm;

template <class Atom, class T, int N>
__global__ void wgmma_dtype_kernel(float* out) {
  if constexpr (arch::compiled_for(arch::sm90a)) {
    constexpr int kRow = 128 / int(sizeof(T));  // one 128-byte swizzle row of K
    __shared__ __align__(1024) T a[64 * kRow];
    __shared__ __align__(1024) T b[N * kRow];
    auto sA = make_tensor(make_smem_ptr(a), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(_64{}, Int<kRow>{})));
    auto sB = make_tensor(make_smem_ptr(b), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(Int<N>{}, Int<kRow>{})));
    float acc[N / 2];
    gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(sA, sB, acc, false);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc);
    out[threadIdx.x] = acc[0] + acc[N / 2 - 1];
  }
}

template __global__ void wgmma_dtype_kernel<SM90_64xNx8_F32TF32TF32_SS<128>, float, 128>(float*);
template __global__ void wgmma_dtype_kernel<SM90_64xNx8_F32TF32TF32_SS<16>, float, 16>(float*);
template __global__ void wgmma_dtype_kernel<SM90_64xNx32_F32E4M3E4M3_SS<128>, __nv_fp8_e4m3, 128>(float*);
template __global__ void wgmma_dtype_kernel<SM90_64xNx32_F32E4M3E4M3_SS<256>, __nv_fp8_e4m3, 256>(float*);
