// Chapter 02: the first GPU GEMM. One thread computes one element of C, in two
// mappings of threads to elements that differ only in which index threadIdx.x walks.
//
// Build: cmake --build build --target ch02_naive_gpu      Run: build/bin/ch02_naive_gpu
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"

namespace mm::ch02 {

/// Which index of C consecutive threads of a warp (consecutive threadIdx.x) walk along.
enum class Mapping {
  strided,    ///< threadIdx.x walks down a column of C: row i = blockIdx.x * blockDim.x + threadIdx.x
  coalesced,  ///< threadIdx.x walks along a row of C:   col j = blockIdx.x * blockDim.x + threadIdx.x
};

/// The block every naive launch uses: 32 threads along x (one warp per block row), 8 along y.
/// 256 threads, the tutorial's block size; blockDim.x = 32 makes "a warp" and "a block row" the same thing.
inline constexpr unsigned naive_block_x = 32;
inline constexpr unsigned naive_block_y = 8;

using launch::ceil_div;    // gemm/launch.hpp: blocks that cover an extent
using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks along grid y

/// An element of C: row and column.
struct RowCol {
  std::int64_t row, col;
};

/// The element of C that thread `thread` of block `block` computes. The kernel and the
/// tests call this same function, so the tests check the kernel's own index arithmetic.
template <Mapping map>
__host__ __device__ constexpr RowCol naive_element(dim3 block, dim3 block_dim, dim3 thread) {
  const std::int64_t x = std::int64_t(block.x) * block_dim.x + thread.x;  // the index a warp walks
  const std::int64_t y = std::int64_t(block.y) * block_dim.y + thread.y;
  if constexpr (map == Mapping::strided) return {x, y};  // x → row: neighbouring lanes read A K floats apart
  else return {y, x};                                    // x → column: neighbouring lanes read neighbouring floats of B
}

/// The grid that covers the M×N elements of C with blocks of `block` threads: one ceil-division per
/// dimension. Under the strided mapping x counts rows (M), under the coalesced one x counts columns (N).
inline dim3 naive_grid(const GemmProblem& p, dim3 block, Mapping map) {
  const std::int64_t along_x = map == Mapping::strided ? p.m : p.n;
  const std::int64_t along_y = map == Mapping::strided ? p.n : p.m;
  return dim3(unsigned(ceil_div(along_x, block.x)), unsigned(ceil_div(along_y, block.y)));
}

/// Empty when the naive kernels take `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
inline std::string naive_rejects(const GemmProblem& p, Mapping map) {
  if (p.layout_tag() != "RRR") return "needs row-major A, B and C (layout RRR), got " + p.layout_tag();
  const std::int64_t along_y = map == Mapping::strided ? p.n : p.m;
  if (ceil_div(along_y, naive_block_y) > max_grid_y)
    return std::string(map == Mapping::strided ? "needs N" : "needs M") + " <= " +
           std::to_string(max_grid_y * naive_block_y) + " (65535 blocks of 8 along grid y)";
  // The kernel indexes with 32-bit ints (gemm/launch.hpp, the 32-bit rule). Its tile is 1×1×1:
  // a thread outside C returns before it computes an offset, so the largest offsets are those of
  // the matrices' last elements. (Its row and column, up to the grid's extent rounded to whole
  // blocks of 32 or 8, fit whenever M and N do: 2^31 is a multiple of both.)
  return launch::int32_offset_rejects(p, 1, 1, 1);
}

/// C = A·B, all row-major, one thread per element of C. A is M×K, B is K×N, C is M×N.
/// Index arithmetic in 32-bit ints: naive_rejects refuses a problem whose offsets would not fit.
template <Mapping map>
__global__ void naive_gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  const RowCol e = naive_element<map>(blockIdx, blockDim, threadIdx);
  const int i = int(e.row), j = int(e.col);
  if (i >= M || j >= N) return;  // the last block of each dimension overhangs C
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];  // row i of A · column j of B
  C[i * N + j] = acc;
}

/// Host launch for one mapping: dim3 grid and dim3 block, never two bare integers (see the README).
template <Mapping map>
void launch_naive(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = naive_rejects(p, map); !why.empty()) throw std::invalid_argument("naive_gemm: " + why);
  const dim3 block(naive_block_x, naive_block_y);
  const dim3 grid = naive_grid(p, block, map);
  naive_gemm_kernel<map><<<grid, block, 0, stream>>>(int(p.m), int(p.n), int(p.k), A, B, C);
}

/// Lanes of a warp walk down a column of C: A is read with a stride of K floats, C written with a stride of N.
inline void launch_naive_strided(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_naive<Mapping::strided>(p, A, B, C, s);
}

/// Lanes of a warp walk along a row of C: B is read and C written as 128 contiguous bytes per warp.
inline void launch_naive_coalesced(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_naive<Mapping::coalesced>(p, A, B, C, s);
}

/// What the tutorial's `matMul<<<blocksPerGridX, blocksPerGridY>>>` really launches. The two numbers
/// of <<<a, b>>> are the grid and the *block*, so this is a 1-D grid of ceil(M/256) blocks of
/// ceil(N/256) threads, not a 2-D grid of 256-thread blocks. Kept only so that a test can show it
/// misses most of C; never launched.
struct LaunchConfig {
  dim3 grid, block;
};
inline LaunchConfig tutorial_launch_as_written(const GemmProblem& p) {
  const std::int64_t threads_per_block = 256;
  const auto blocks_x = unsigned(ceil_div(p.m, threads_per_block));
  const auto blocks_y = unsigned(ceil_div(p.n, threads_per_block));
  return {dim3(blocks_x), dim3(blocks_y)};  // what <<<blocks_x, blocks_y>>> converts its two arguments to
}

}  // namespace mm::ch02
