// Chapter 04, step 2: copy_cp_async. copy_smem with the global → shared leg done by cp.async
// (sm_80 and later): each copy goes from global to shared memory without a register, the thread
// issues all four and waits once. The same tile and shared layout as copy_smem.
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose --kernel copy_smem,copy_cp_async --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "04_copy_and_transpose/copy_smem.cuh"
#include "04_copy_and_transpose/layouts.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// copy_cp_async: copy_smem's 32×32 tile and row-major shared tile, unchanged.
struct CopyCpAsyncCfg : CopySmemCfg {};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// copy_smem_kernel with the global -> shared leg done by cp.async. The body exists only where
/// cp.async does (layout/arch.hpp): an sm_75 build compiles a stub that the harness never launches
/// (the step's requirement is arch::sm80, in steps.cu).
template <class Cfg>
__global__ void __launch_bounds__(kThreads) copy_cp_async_kernel(int M, int N, const float* src, float* dst) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
    using SmemLayout = typename Cfg::SmemLayout;
    __shared__ float smem[cosize_v<SmemLayout>];

    auto mS = row_major(src, M, N);                             // (M,N)
    auto mD = row_major(dst, M, N);                             // (M,N)
    auto cM = make_identity_tensor(make_shape(M, N));           // (M,N) -> (m,n)
    auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});   // (BM,BN)

    auto tiler = Shape<Int<BM>, Int<BN>>{};
    auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
    auto tSgS = parallelize(tile(mS, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
    auto tSgD = parallelize(tile(mD, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
    auto tScS = parallelize(tile(cM, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32) -> (m,n)
    auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));                    // (BM/8,BN/32)
    auto tSp = make_predicate(tScS, make_shape(M, N));                                // (BM/8,BN/32)

    // Global -> shared without a register: each cp.async is issued and the thread moves on, so
    // all four are in flight at once without the register stage of copy_smem. Where tSp is
    // false the instruction reads nothing and writes a zero.
    copy_if(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{}, tSp, tSgS, tSsS);
    cp_async_fence();    // close the group of copies issued so far
    cp_async_wait<0>();  // wait until this thread's group has landed (also a compiler memory barrier)
    // No __syncthreads(): each thread reads back only the elements its own cp.async wrote.
    copy_if(tSp, tSsS, tSgD);
  }
}

/// Host launch (the harness's CopyLaunch): one block of 256 threads per tile.
template <class Cfg>
void launch_copy_cp_async(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  check_size<Cfg>("copy_cp_async", m, n);
  copy_cp_async_kernel<Cfg><<<tile_grid<Cfg::kTileM, Cfg::kTileN>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch04
