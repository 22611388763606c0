// Chapter 04, step 4: transpose_naive. dst (N×M, row-major) = srcᵀ, written as a copy: the
// destination viewed as an M×N matrix with strides (1, M), column-major, receives copy_smem's
// partition of the source tile straight from registers, without shared memory. Each warp reads 32
// neighbours of a row of src (coalesced) and writes them 32 rows apart in dst (strided).
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose --kernel copy_smem,transpose_naive --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "04_copy_and_transpose/layouts.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// transpose_naive: copy_smem's 32×32 tile of the source, no shared memory.
struct TransposeNaiveCfg {
  static constexpr int kTileM = 32;  // BM: rows of the block's source tile
  static constexpr int kTileN = 32;  // BN: columns
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// dst (N×M, row-major) = srcᵀ: the M×N source copied into the column-major view of dst.
template <class Cfg>
__global__ void __launch_bounds__(kThreads) transpose_naive_kernel(int M, int N, const float* src, float* dst) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  auto mS = row_major(src, M, N);                                                          // (M,N)
  auto mDt = make_tensor(make_gmem_ptr(dst), make_shape(M, N), make_stride(_1{}, std::int64_t(M)));  // (M,N) = dstᵀ
  auto cM = make_identity_tensor(make_shape(M, N));                                        // (M,N) -> (m,n)

  auto tiler = Shape<Int<BM>, Int<BN>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
  auto tSgS = parallelize(tile(mS, tiler, blk), ThreadLayout{}, int(threadIdx.x));    // (BM/8,BN/32)
  auto tSgDt = parallelize(tile(mDt, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tScS = parallelize(tile(cM, tiler, blk), ThreadLayout{}, int(threadIdx.x));    // (BM/8,BN/32) -> (m,n)
  auto tSp = make_predicate(tScS, make_shape(M, N));                             // (BM/8,BN/32)

  // Through registers: src and dst are both plain global pointers, so the compiler must assume
  // that a store to dst may change a later load from src and would issue load, store, load,
  // store... The register fragment states the order we want: all loads, then all stores.
  auto tSr = make_fragment_like(tSgS);                                           // (BM/8,BN/32) registers
  copy_if(tSp, tSgS, tSr);
  copy_if(tSp, tSr, tSgDt);
}

/// Host launch (the harness's CopyLaunch): one block of 256 threads per tile of the source.
template <class Cfg>
void launch_transpose_naive(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  check_size<Cfg>("transpose_naive", m, n);
  transpose_naive_kernel<Cfg><<<tile_grid<Cfg::kTileM, Cfg::kTileN>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch04
