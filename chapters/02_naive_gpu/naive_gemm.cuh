// Chapter 02: the first GPU GEMM. One thread computes one element of C: row i of A · column j of B.
// Chapter 01's triple loop, with its two outer loops replaced by a 2-D grid of 2-D blocks.
//
// One kernel, two steps. They differ only in the mapping of threads to elements of C, which is a
// named configuration (NaiveStridedCfg, then NaiveCoalescedCfg: the same configuration with x and y
// swapped), because the kernel body is the same line for line: which index of C the 32 lanes of a
// warp (consecutive threadIdx.x) walk along decides which addresses a warp loads together.
//
//   naive_strided    x → row of C: a warp reads 32 floats of a column of A, K floats apart
//   naive_coalesced  x → column of C: a warp reads 32 neighbouring floats of a row of B
//
// Build: cmake --build build --target ch02_naive_gpu
// Run:   build/bin/ch02_naive_gpu --kernel naive_strided,naive_coalesced --sizes 1024
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"

namespace mm::ch02 {

using launch::ceil_div;    // gemm/launch.hpp: blocks that cover an extent
using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks along grid y

/// An element of C: row and column.
struct RowCol {
  std::int64_t row, col;
};

/// How many threads the grid must span along x and along y, and which of M and N lies along y
/// (for the message when grid y cannot hold it).
struct GridExtent {
  std::int64_t x, y;
  const char* y_is;
};

// ---- The two configurations: the mapping of threads to elements of C ----------------------------

/// naive_strided: the tutorial's mapping. x, the index the 32 lanes of a warp walk, counts rows of C:
/// neighbouring lanes read A K floats apart and write C N floats apart, one sector each.
struct NaiveStridedCfg {
  /// 256 threads, the tutorial's block size; blockDim.x = 32 makes "a warp" and "a block row" the same thing.
  static constexpr unsigned kBlockX = 32;
  static constexpr unsigned kBlockY = 8;
  /// The element of C that the thread at (x, y) of the whole grid computes: x → row, y → column.
  __host__ __device__ static constexpr RowCol element(std::int64_t x, std::int64_t y) { return {x, y}; }
  /// So the grid spans the M rows along x and the N columns along y.
  static GridExtent grid_extent(const GemmProblem& p) { return {p.m, p.n, "N"}; }
};

/// naive_coalesced: the same kernel with x and y swapped, the step's one change. x counts columns of C:
/// a warp reads 32 neighbouring floats of B (128 bytes, four sectors, all used) and writes a row of C;
/// all its lanes read the same float of A (one broadcast).
struct NaiveCoalescedCfg : NaiveStridedCfg {
  __host__ __device__ static constexpr RowCol element(std::int64_t x, std::int64_t y) { return {y, x}; }  // x → column
  static GridExtent grid_extent(const GemmProblem& p) { return {p.n, p.m, "M"}; }  // N along x, M along y
};

// ---- Where each thread goes ---------------------------------------------------------------------

/// The element of C that thread `thread` of block `block` computes. The kernel and the tests call
/// this same function, so the tests check the kernel's own index arithmetic.
template <class Cfg>
__host__ __device__ constexpr RowCol naive_element(dim3 block, dim3 block_dim, dim3 thread) {
  const std::int64_t x = std::int64_t(block.x) * block_dim.x + thread.x;  // the index a warp walks
  const std::int64_t y = std::int64_t(block.y) * block_dim.y + thread.y;
  return Cfg::element(x, y);
}

/// The block every naive launch uses: kBlockX threads along x (one warp per block row), kBlockY along y.
template <class Cfg>
constexpr dim3 naive_block() {
  return dim3(Cfg::kBlockX, Cfg::kBlockY);
}

/// The grid that covers the M×N elements of C with blocks of `block` threads: one ceil-division per
/// dimension, of the extents the configuration puts along x and y.
template <class Cfg>
dim3 naive_grid(const GemmProblem& p, dim3 block) {
  const GridExtent e = Cfg::grid_extent(p);
  return dim3(unsigned(ceil_div(e.x, block.x)), unsigned(ceil_div(e.y, block.y)));
}

/// Empty when the naive kernel takes `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
template <class Cfg>
std::string naive_rejects(const GemmProblem& p) {
  if (p.layout_tag() != "RRR") return "needs row-major A, B and C (layout RRR), got " + p.layout_tag();
  const GridExtent e = Cfg::grid_extent(p);
  if (ceil_div(e.y, Cfg::kBlockY) > max_grid_y)
    return std::string("needs ") + e.y_is + " <= " + std::to_string(max_grid_y * Cfg::kBlockY) +
           " (65535 blocks of " + std::to_string(Cfg::kBlockY) + " along grid y)";
  // The kernel indexes with 32-bit ints (gemm/launch.hpp, the 32-bit rule). Its tile is 1×1×1:
  // a thread outside C returns before it computes an offset, so the largest offsets are those of
  // the matrices' last elements. (Its row and column, up to the grid's extent rounded to whole
  // blocks of 32 or 8, fit whenever M and N do: 2^31 is a multiple of both.)
  return launch::int32_offset_rejects(p, 1, 1, 1);
}

// ---- The kernel ---------------------------------------------------------------------------------

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// C = A·B, all row-major, one thread per element of C. A is M×K, B is K×N, C is M×N.
/// Index arithmetic in 32-bit ints: naive_rejects refuses a problem whose offsets would not fit.
template <class Cfg>
__global__ void naive_gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  const RowCol e = naive_element<Cfg>(blockIdx, blockDim, threadIdx);
  const int i = int(e.row), j = int(e.col);
  if (i >= M || j >= N) return;  // the last block of each dimension overhangs C
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];  // row i of A · column j of B
  C[i * N + j] = acc;
}

/// Host launch: dim3 grid and dim3 block, never two bare integers (see the README).
template <class Cfg>
void launch_naive(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = naive_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("naive_gemm: " + why);
  const dim3 block = naive_block<Cfg>();
  const dim3 grid = naive_grid<Cfg>(p, block);
  naive_gemm_kernel<Cfg><<<grid, block, 0, stream>>>(int(p.m), int(p.n), int(p.k), A, B, C);
}

#else
/// The launch, as a C++ compiler sees it (the CPU tests, which call it for its refusals): declared here,
/// defined by the nvcc compile of steps.cu (ch02_steps), which instantiates it for each of the chapter's configurations.
template <class Cfg>
void launch_naive(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream);
#endif  // defined(__CUDACC__)

}  // namespace mm::ch02
