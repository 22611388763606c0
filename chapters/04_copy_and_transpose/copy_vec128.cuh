// Chapter 04, step 3 and its tuned tile: copy_vec128. copy_smem on the matrix seen as M × N/4 float4
// (when N % 4 == 0): a BM×BN tile of floats is a BM × BN/4 tile of float4, and each thread moves whole
// float4 with one 128-bit load or store instead of four 32-bit ones. Rows that are not whole float4
// fall back to copy_smem with the same tile. copy_vec128_64x64 is the same kernel with a 64×64 tile
// (a named configuration): four float4 per thread, four times the bytes in flight.
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose --kernel copy_smem,copy_vec128,copy_vec128_64x64 --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "04_copy_and_transpose/copy_smem.cuh"
#include "04_copy_and_transpose/layouts.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// copy_vec128: a 32×32 tile of floats, moved as 32×8 float4, one float4 per thread.
struct CopyVec128Cfg {
  static constexpr int kTileM = 32;  // BM: rows of the block's tile
  static constexpr int kTileN = 32;  // BN: columns, in floats (BN/4 float4)
  using Fallback = CopySmemCfg;      // the scalar copy of the same tile, for rows that are not whole float4
};

/// copy_smem with a 64×64 tile: copy_vec128_64x64's fallback (not a step of its own).
struct CopySmem64x64Cfg : CopySmemCfg {
  static constexpr int kTileM = 64;
  static constexpr int kTileN = 64;
  using SmemLayout = SmemRowMajor<kTileM, kTileN>;  // (BM,BN) -> offset
};

/// copy_vec128_64x64: the step's one change is the tile, 64×64 floats moved as 64×16 float4, four
/// float4 per thread (the fallback follows the tile).
struct CopyVec128_64x64Cfg : CopyVec128Cfg {
  static constexpr int kTileM = 64;
  static constexpr int kTileN = 64;
  using Fallback = CopySmem64x64Cfg;
};

#if defined(__CUDACC__)  // the kernel: nvcc's (the CPU tests include the rest of this file from C++)
/// Copies the M×N row-major `src` to `dst`, viewed as M × N/4 float4 (needs N % 4 == 0), through a
/// BM × BN/4 shared tile of float4.
template <class Cfg>
__global__ void __launch_bounds__(kThreads) copy_vec128_kernel(int M, int N, const float* src, float* dst) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  constexpr int BN4 = BN / 4;
  static_assert(BN % 4 == 0 && BM % size<0>(VecThreadLayout{}) == 0 && BN4 % size<1>(VecThreadLayout{}) == 0,
                "the vector thread layout tiles the block tile: BM % 32 == 0, (BN/4) % 8 == 0");
  __shared__ float4 smem[BM * BN4];
  const int N4 = N / 4;  // the launch guarantees N % 4 == 0, so every row starts 16-byte aligned

  auto mS = row_major(reinterpret_cast<const float4*>(src), M, N4);                // (M,N/4)
  auto mD = row_major(reinterpret_cast<float4*>(dst), M, N4);                      // (M,N/4)
  auto cM = make_identity_tensor(make_shape(M, N4));                               // (M,N/4) -> (m,n4)
  auto sS = make_tensor(make_smem_ptr(smem), SmemRowMajor<BM, BN4>{});             // (BM,BN/4)

  auto tiler = Shape<Int<BM>, Int<BN4>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
  auto tSgS = parallelize(tile(mS, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32)
  auto tSgD = parallelize(tile(mD, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32)
  auto tScS = parallelize(tile(cM, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32) -> (m,n4)
  auto tSsS = parallelize(sS, VecThreadLayout{}, int(threadIdx.x));                    // (BM/32,BN/32)
  auto tSp = make_predicate(tScS, make_shape(M, N4));                             // (BM/32,BN/32)

  auto tSrS = make_fragment_like(tSsS);                                           // (BM/32,BN/32) float4 registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);
  copy(tSrS, tSsS);
  copy_if(tSp, tSsS, tSgD);
}
#endif  // defined(__CUDACC__)

/// True when the float4 view is legal: rows of a multiple of 4 floats and 16-byte aligned
/// pointers (cudaMalloc gives 256-byte alignment).
inline bool vec128_ok(std::int64_t n, const float* src, const float* dst) {
  return n % 4 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
}

#if defined(__CUDACC__)  // the launch: nvcc's
/// Host launch (the harness's CopyLaunch); when N % 4 != 0 (rows not 16-byte aligned) it falls back
/// to copy_smem with the same tile, so that any N is copied correctly.
template <class Cfg>
void launch_copy_vec128(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  check_size<Cfg>("copy_vec128", m, n);
  const dim3 grid = tile_grid<Cfg::kTileM, Cfg::kTileN>(m, n);
  if (vec128_ok(n, src, dst))
    copy_vec128_kernel<Cfg><<<grid, kThreads, 0, s>>>(int(m), int(n), src, dst);
  else
    copy_smem_kernel<typename Cfg::Fallback><<<grid, kThreads, 0, s>>>(int(m), int(n), src, dst);
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch04
