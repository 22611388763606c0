// Compiled (not run) by CTest for sm_75 and sm_80 together. ldmatrix exists from sm_75, so a kernel
// that only loads with it builds for sm_75 unguarded; the mma.sync that consumes the fragments needs
// sm_80, so that kernel guards its body (layout/arch.hpp) and its sm_75 pass is a stub.
#include <cuda_bf16.h>

#include "layout/all.hpp"

using namespace mm;

// Four 8×8 b16 matrices, one row address per lane: sm_75+.
__global__ void ldmatrix_only(std::uint32_t* out) {
  __shared__ alignas(16) __nv_bfloat16 s[32 * 8];
  for (int i = int(threadIdx.x); i < 32 * 8; i += 32) s[i] = __float2bfloat16(float(i));
  __syncthreads();
  std::uint32_t r[4], t[4];
  SM75_U32x4_LDSM_N::copy(*reinterpret_cast<mm::uint128_t const*>(&s[8 * threadIdx.x]), r[0], r[1], r[2], r[3]);
  SM75_U16x8_LDSM_T::copy(*reinterpret_cast<mm::uint128_t const*>(&s[8 * threadIdx.x]), t[0], t[1], t[2], t[3]);
  for (int j = 0; j < 4; ++j) out[4 * threadIdx.x + j] = r[j] ^ t[j];
}

// ldmatrix into the fragments of mma.sync bf16 (sm_80+): guarded.
template <class T>
__global__ void ldmatrix_mma(T const* a, float* c) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    __shared__ alignas(16) T s[16 * 16];
    for (int i = int(threadIdx.x); i < 16 * 16; i += 32) s[i] = a[i];
    __syncthreads();
    auto sA = make_tensor(make_smem_ptr(s), Layout<Shape<_16, _16>, Stride<_16, _1>>{});  // (M,K) = (N,K)
    auto gC = make_tensor(make_gmem_ptr(c), Layout<Shape<_16, _16>, Stride<_16, _1>>{});  // (M,N)
    auto mma = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, Layout<Shape<_1, _1, _1>>{}, Tile<_16, _16, _16>{});
    auto thr = mma.get_slice(threadIdx.x);
    auto tCrA = thr.partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K)
    auto tCrB = thr.partition_fragment_B(sA);  // (MMA,MMA_N,MMA_K)
    auto tCrC = thr.partition_fragment_C(gC);  // (MMA,MMA_M,MMA_N)
    auto s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, T>{}, mma);
    auto s2r_b = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, T>{}, mma);
    copy(s2r_a, s2r_a.get_slice(threadIdx.x).partition_S(sA), s2r_a.get_slice(threadIdx.x).retile_D(tCrA));
    copy(s2r_b, s2r_b.get_slice(threadIdx.x).partition_S(sA), s2r_b.get_slice(threadIdx.x).retile_D(tCrB));
    clear(tCrC);
    gemm(mma, tCrA, tCrB, tCrC);
    copy(tCrC, thr.partition_C(gC));
  }
}

template __global__ void ldmatrix_mma<__nv_bfloat16>(__nv_bfloat16 const*, float*);
