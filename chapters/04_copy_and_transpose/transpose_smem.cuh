// Chapter 04, steps 5 and 6 and the tuned tile: transpose_smem and two named configurations of it.
// dst (N×M, row-major) = srcᵀ through a shared tile: the block loads its BM×BN source tile as
// copy_smem does, then, after a barrier, stores the BN×BM destination tile with the same thread
// layout (coalesced rows of dst), reading shared memory through the transposed view of the same
// layout, `select<1,0>(SmemLayout)`. That view is the new idea over transpose_naive; the steps after
// it change only the configuration:
//
//   transpose_smem               32×32 tile, row-major shared layout: a column read is one bank (32-way conflicts)
//   transpose_smem_padded        the shared layout padded to rows of 33 floats: no bank conflicts
//   transpose_smem_padded_64x64  a 64×64 tile, padded (64,64):(65,1): 16 floats per thread
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose --kernel transpose_smem,transpose_smem_padded --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "04_copy_and_transpose/layouts.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// transpose_smem: a 32×32 tile staged in a row-major shared tile, read back transposed.
struct TransposeSmemCfg {
  static constexpr int kTileM = 32;                   // BM: rows of the block's source tile
  static constexpr int kTileN = 32;                   // BN: columns
  using SmemLayout = SmemRowMajor<kTileM, kTileN>;    // (BM,BN) -> offset
};

/// transpose_smem_padded: the step's one change is the shared layout, (32,32):(32,1) → (32,32):(33,1).
struct TransposeSmemPaddedCfg : TransposeSmemCfg {
  using SmemLayout = SmemPadded<kTileM, kTileN>;      // (BM,BN) -> offset, one unused float after every row
};

/// transpose_smem_padded_64x64: the step's one change is the tile, 64×64 (the padded layout follows it,
/// (64,64):(65,1)): the same 8×32 threads now take 16 floats each.
struct TransposeSmemPadded64x64Cfg : TransposeSmemPaddedCfg {
  static constexpr int kTileM = 64;
  static constexpr int kTileN = 64;
  using SmemLayout = SmemPadded<kTileM, kTileN>;      // (BM,BN) -> offset
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// dst (N×M, row-major) = srcᵀ through a shared tile read back through its transposed view.
template <class Cfg>
__global__ void __launch_bounds__(kThreads) transpose_smem_kernel(int M, int N, const float* src, float* dst) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  using SmemLayout = typename Cfg::SmemLayout;
  __shared__ float smem[cosize_v<SmemLayout>];

  auto mS = row_major(src, M, N);                                          // (M,N)
  auto mD = row_major(dst, N, M);                                          // (N,M)
  auto cMS = make_identity_tensor(make_shape(M, N));                       // (M,N) -> (m,n)
  auto cMD = make_identity_tensor(make_shape(N, M));                       // (N,M) -> (n,m)
  auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});                // (BM,BN) as loaded
  auto sD = make_tensor(make_smem_ptr(smem), select<1, 0>(SmemLayout{}));  // (BN,BM) the same floats, transposed

  // Block (by, bx) owns source tile (by, bx) and destination tile (bx, by).
  auto gS = tile(mS, Shape<Int<BM>, Int<BN>>{}, make_coord(int(blockIdx.y), int(blockIdx.x)));   // (BM,BN)
  auto cS = tile(cMS, Shape<Int<BM>, Int<BN>>{}, make_coord(int(blockIdx.y), int(blockIdx.x)));  // (BM,BN)
  auto gD = tile(mD, Shape<Int<BN>, Int<BM>>{}, make_coord(int(blockIdx.x), int(blockIdx.y)));   // (BN,BM)
  auto cD = tile(cMD, Shape<Int<BN>, Int<BM>>{}, make_coord(int(blockIdx.x), int(blockIdx.y)));  // (BN,BM)

  auto tSgS = parallelize(gS, ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tSp = make_predicate(parallelize(cS, ThreadLayout{}, int(threadIdx.x)), make_shape(M, N));  // (BM/8,BN/32)
  auto tDsD = parallelize(sD, ThreadLayout{}, int(threadIdx.x));  // (BN/8,BM/32)
  auto tDgD = parallelize(gD, ThreadLayout{}, int(threadIdx.x));  // (BN/8,BM/32)
  auto tDp = make_predicate(parallelize(cD, ThreadLayout{}, int(threadIdx.x)), make_shape(N, M));  // (BN/8,BM/32)

  auto tSrS = make_fragment_like(tSsS);                     // (BM/8,BN/32) registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);                                 // all loads first, as in copy_smem
  copy(tSrS, tSsS);
  __syncthreads();  // a thread now reads elements that other threads (other warps) wrote
  copy_if(tDp, tDsD, tDgD);
}

/// Host launch (the harness's CopyLaunch): one block of 256 threads per tile of the source.
template <class Cfg>
void launch_transpose_smem(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  check_size<Cfg>("transpose_smem", m, n);
  transpose_smem_kernel<Cfg><<<tile_grid<Cfg::kTileM, Cfg::kTileN>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch04
