// Chapter 03: shared-memory tiling. A block of TILE×TILE threads computes a TILE×TILE tile of C,
// staging a TILE×TILE tile of A and one of B in shared memory per step along K, so that every
// float read from global memory is used TILE times instead of once.
//
// What it adds over the step before (chapter 02's naive_coalesced, one thread per element of C with
// threadIdx.x along a row): the same mapping of threads to C, but the block first loads the K step's
// tiles of A and B cooperatively (one float of each per thread), waits, and reads every operand of
// its FMAs from shared memory.
//
// One kernel, two steps: the tile size is a named configuration (Tiled16Cfg, then Tiled32Cfg, the
// tutorial's choice, which changes only kTile).
//
// Build: cmake --build build --target ch03_tiled_shared_memory
// Run:   build/bin/ch03_tiled_shared_memory --kernel tiled_16,tiled_32 --sizes 4096
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"

namespace mm::ch03 {

using launch::ceil_div;    // gemm/launch.hpp: blocks that cover an extent
using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks along grid y

// ---- The two configurations: the tile size ------------------------------------------------------

/// tiled_16: 16×16 tiles, 256 threads per block, each float fetched from global memory used 16 times.
struct Tiled16Cfg {
  static constexpr int kTile = 16;
};

/// tiled_32: the tutorial's choice, the step's one change. Twice the reuse (each float used 32 times),
/// 32×32 = 1024 threads per block, the most a block may have.
struct Tiled32Cfg : Tiled16Cfg {
  static constexpr int kTile = 32;
};

// ---- Where each block and thread goes -----------------------------------------------------------

/// One block per TILE×TILE tile of C: x counts tile columns (N), y tile rows (M), so that
/// threadIdx.x walks along a row of C and every global access of a warp is coalesced.
template <class Cfg>
dim3 tiled_grid(const GemmProblem& p) {
  return dim3(unsigned(ceil_div(p.n, Cfg::kTile)), unsigned(ceil_div(p.m, Cfg::kTile)));
}

/// TILE×TILE threads: one per element of the tile of C.
template <class Cfg>
constexpr dim3 tiled_block() {
  return dim3(Cfg::kTile, Cfg::kTile);
}

/// An element of C: row and column.
struct RowCol {
  std::int64_t row, col;
};

/// The element of C that thread `thread` of block `block` owns. The kernel and the tests call
/// this same function, so the tests check the kernel's own index arithmetic.
template <class Cfg>
__host__ __device__ constexpr RowCol tiled_element(dim3 block, dim3 thread) {
  return {std::int64_t(block.y) * Cfg::kTile + thread.y, std::int64_t(block.x) * Cfg::kTile + thread.x};
}

/// Steps along K: the last one is partial when TILE does not divide K (its missing part is loaded as zeros).
template <class Cfg>
constexpr std::int64_t tiled_k_steps(const GemmProblem& p) {
  return ceil_div(p.k, Cfg::kTile);
}

/// Empty when the tiled kernel takes `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
template <class Cfg>
std::string tiled_rejects(const GemmProblem& p) {
  constexpr int TILE = Cfg::kTile;
  if (p.layout_tag() != "RRR") return "needs row-major A, B and C (layout RRR), got " + p.layout_tag();
  if (ceil_div(p.m, TILE) > max_grid_y)
    return "needs M <= " + std::to_string(max_grid_y * TILE) + " (65535 tiles of " + std::to_string(TILE) +
           " rows along grid y)";
  // The kernel indexes with 32-bit ints (gemm/launch.hpp, the 32-bit rule). It forms offsets only
  // inside the matrices, but its indices run over whole TILE×TILE tiles (k0 steps to the multiple of
  // TILE past K): counting A, B and C rounded up to whole tiles bounds both, a little conservatively.
  return launch::int32_offset_rejects(p, TILE, TILE, TILE);
}

// ---- The kernel ---------------------------------------------------------------------------------

#if defined(__CUDACC__)  // the kernel and its launch: nvcc's (the CPU tests include the rest of this file from C++)
/// C = A·B, all row-major: A is M×K, B is K×N, C is M×N. Any M, N, K ≥ 1: loads outside A or B
/// put zeros in shared memory (they add 0 to the sum), and only threads inside C store.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kTile * Cfg::kTile) tiled_gemm_kernel(int M, int N, int K, const float* A,
                                                                              const float* B, float* C) {
  constexpr int TILE = Cfg::kTile;
  static_assert(TILE * TILE <= 1024, "one thread per element of a tile: TILE*TILE <= 1024 threads per block");
  __shared__ float sA[TILE][TILE];  // (TILE_M, TILE_K): rows of this block's tile of C, one K step of A
  __shared__ float sB[TILE][TILE];  // (TILE_K, TILE_N): the same K step of B, columns of this block's tile

  const int tx = threadIdx.x;             // column inside the tile: consecutive lanes, consecutive columns
  const int ty = threadIdx.y;             // row inside the tile
  const RowCol e = tiled_element<Cfg>(blockIdx, threadIdx);  // the element of C this thread owns
  const int row = int(e.row), col = int(e.col);

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Cooperative load: each thread brings one float of A and one of B. A warp (fixed ty,
    // consecutive tx) reads consecutive floats of a row of A and of a row of B: both coalesced.
    // No thread returns early: threads outside C still load (zeros) and reach both barriers.
    sA[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + (k0 + tx)] : 0.0f;
    sB[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // 1: every float of both tiles is written before anyone reads another thread's float

#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) acc += sA[ty][kk] * sB[kk][tx];  // sA: broadcast, sB: one bank per lane

    __syncthreads();  // 2: everyone has finished reading these tiles before the next step overwrites them
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

/// Host launch: dim3 grid of tiles, dim3 block of TILE×TILE threads.
template <class Cfg>
void launch_tiled(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = tiled_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("tiled_gemm: " + why);
  tiled_gemm_kernel<Cfg><<<tiled_grid<Cfg>(p), tiled_block<Cfg>(), 0, stream>>>(int(p.m), int(p.n), int(p.k), A, B, C);
}

#else
/// The launch, as a C++ compiler sees it (the CPU tests, which call it for its refusals): declared here,
/// defined by the nvcc compile of steps.cu (ch03_steps), which instantiates it for each of the chapter's configurations.
template <class Cfg>
void launch_tiled(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream);
#endif  // defined(__CUDACC__)

}  // namespace mm::ch03
