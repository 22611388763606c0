// Chapter 04: the layouts every copy and transpose of the chapter is written in (the threads of a
// block, the shared tiles, the matrix as a tensor), the grid of tiles, and the size rule they share.
// The kernels are one file each (copy_smem.cuh, copy_cp_async.cuh, copy_vec128.cuh,
// transpose_naive.cuh, transpose_smem.cuh); the list of steps is steps.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

/// The threads of a block: 8 rows of 32, numbered row by row, so that warp w is row w and
/// its 32 lanes sit on 32 neighbouring columns (neighbouring addresses of a row-major tile).
using ThreadLayout = Layout<Shape<_8, _32>, Stride<_32, _1>>;  // (THR_M,THR_N) -> thread index
/// Threads per block.
inline constexpr int kThreads = size_v<ThreadLayout>;  // 256

/// The threads over a tile of float4: 32 rows of 8, so that a warp covers 4 rows × 8 float4
/// (4 × 128 contiguous bytes).
using VecThreadLayout = Layout<Shape<_32, _8>, Stride<_8, _1>>;  // (THR_M,THR_N4) -> thread index
static_assert(size_v<VecThreadLayout> == kThreads, "both thread layouts describe the same 256-thread block");

/// A BM×BN tile of floats in shared memory, row-major like the matrix: element (i, j) at i·BN + j.
template <int BM, int BN>
using SmemRowMajor = Layout<Shape<Int<BM>, Int<BN>>, Stride<Int<BN>, _1>>;  // (BM,BN) -> offset
/// The same tile with one unused float after every row: element (i, j) at i·(BN+1) + j.
/// A column of the tile then falls into 32 different banks instead of one.
template <int BM, int BN>
using SmemPadded = Layout<Shape<Int<BM>, Int<BN>>, Stride<Int<BN + 1>, _1>>;  // (BM,BN) -> offset

/// The M×N row-major matrix at `p` as a tensor. The row stride is 64-bit so that offsets
/// of matrices with more than 2^31 elements do not overflow.
template <class T>
MM_HD auto row_major(T* p, int m, int n) {
  return make_tensor(make_gmem_ptr(p), make_shape(m, n), make_stride(std::int64_t(n), _1{}));  // (m,n)
}

using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks (tiles) along grid y

/// One block per BM×BN tile of the source: x counts tile columns (N), y tile rows (M).
template <int BM, int BN>
dim3 tile_grid(std::int64_t m, std::int64_t n) {
  return dim3(unsigned((n + BN - 1) / BN), unsigned((m + BM - 1) / BM));
}

/// Empty when a kernel whose configuration has kTileM×kTileN tiles takes an M×N matrix; otherwise the
/// constraint it breaks. The offsets are 64-bit (row_major's stride), so a matrix may have more than
/// 2^31 elements; M, N and the coordinates are ints (gemm/launch.hpp, the 32-bit rule).
template <class Cfg>
std::string tile_rejects(std::int64_t m, std::int64_t n) {
  constexpr int BM = Cfg::kTileM, BN = Cfg::kTileN;
  if (m < 1 || n < 1) return "needs M, N >= 1";
  if ((m + BM - 1) / BM > max_grid_y)
    return "needs M <= " + std::to_string(max_grid_y * BM) + " (65535 tiles of " + std::to_string(BM) +
           " rows along grid y)";
  return launch::int32_index_rejects(m, n, BM, BN);
}

/// Throws what tile_rejects says, prefixed with the kernel's name: the launch functions' check.
template <class Cfg>
void check_size(const char* kernel, std::int64_t m, std::int64_t n) {
  if (std::string why = tile_rejects<Cfg>(m, n); !why.empty()) throw std::invalid_argument(std::string(kernel) + ": " + why);
}

}  // namespace mm::ch04
