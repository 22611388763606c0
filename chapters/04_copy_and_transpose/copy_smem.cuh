// Chapter 04, step 1: copy_smem. The M×N row-major matrix copied global → shared → global through a
// 32×32 tile, 8×32 threads, 4 floats per thread: MoYe's copy kernel written with the layout library
// (`tile` hands the block its tile, `parallelize` each thread its elements, an identity tensor
// guards the edges), plus a register stage that puts all of a thread's loads in flight at once.
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose --kernel copy_smem --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "04_copy_and_transpose/layouts.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// copy_smem: a 32×32 tile of floats, staged in a row-major shared tile.
struct CopySmemCfg {
  static constexpr int kTileM = 32;                   // BM: rows of the block's tile
  static constexpr int kTileN = 32;                   // BN: columns
  using SmemLayout = SmemRowMajor<kTileM, kTileN>;    // (BM,BN) -> offset
};

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// Copies the M×N row-major `src` to `dst` through a BM×BN shared-memory tile.
template <class Cfg>
__global__ void __launch_bounds__(kThreads) copy_smem_kernel(int M, int N, const float* src, float* dst) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  using SmemLayout = typename Cfg::SmemLayout;
  static_assert(BM % size<0>(ThreadLayout{}) == 0 && BN % size<1>(ThreadLayout{}) == 0,
                "the thread layout tiles the block tile: BM % 8 == 0, BN % 32 == 0");
  __shared__ float smem[cosize_v<SmemLayout>];

  auto mS = row_major(src, M, N);                             // (M,N)
  auto mD = row_major(dst, M, N);                             // (M,N)
  auto cM = make_identity_tensor(make_shape(M, N));           // (M,N) -> (m,n)
  auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});   // (BM,BN)

  auto tiler = Shape<Int<BM>, Int<BN>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));   // this block's tile
  auto gS = tile(mS, tiler, blk);                             // (BM,BN)
  auto gD = tile(mD, tiler, blk);                             // (BM,BN)
  auto cS = tile(cM, tiler, blk);                             // (BM,BN) -> (m,n)

  auto tSgS = parallelize(gS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tSgD = parallelize(gD, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tScS = parallelize(cS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32) -> (m,n)
  auto tSp = make_predicate(tScS, make_shape(M, N));          // (BM/8,BN/32) inside the matrix?

  // Global -> registers -> shared. A load from global memory lands in a register in any case
  // (LDG, then STS); writing the register stage out, with the whole fragment cleared first and
  // stored unpredicated, lets the compiler issue every load of the thread before the first
  // shared store: all its bytes are in flight at once.
  auto tSrS = make_fragment_like(tSsS);                       // (BM/8,BN/32) registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);
  copy(tSrS, tSsS);
  // No barrier: every thread reads back exactly the elements it wrote itself. (nvcc notices,
  // and stores to global straight from the registers: the SASS has STS but no LDS.)
  copy_if(tSp, tSsS, tSgD);
}

/// Host launch (the harness's CopyLaunch): one block of 256 threads per tile.
template <class Cfg>
void launch_copy_smem(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  check_size<Cfg>("copy_smem", m, n);
  copy_smem_kernel<Cfg><<<tile_grid<Cfg::kTileM, Cfg::kTileN>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}
#else
/// The launch, as a C++ compiler sees it (the CPU tests, which call it for its refusals): declared here,
/// defined by the nvcc compile of steps.cu (ch04_steps), which instantiates it for each of the chapter's
/// configurations.
template <class Cfg>
void launch_copy_smem(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s);
#endif  // defined(__CUDACC__)

}  // namespace mm::ch04
