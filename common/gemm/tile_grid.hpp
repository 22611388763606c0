/// @file tile_grid.hpp
/// @brief The grid of a kernel that gives each block one BM×BN tile of C (blockIdx.x along M,
/// blockIdx.y along N), and the sizes such a kernel takes: the grid's y limit and the 32-bit rule.
///
///     kernel<<<tile_grid(p, BM, BN), threads>>>(...);
///     GemmKernel{..., .rejects = [](const GemmProblem& p) { return tile_grid_rejects(p, BM, BN, BK); }};
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"

namespace mm {

/// @brief One block per bm×bn tile of C: x counts the tiles along M, y those along N.
inline dim3 tile_grid(const GemmProblem& p, int bm, int bn) {
  return dim3(unsigned(launch::ceil_div(p.m, bm)), unsigned(launch::ceil_div(p.n, bn)));
}

/// @brief Empty when a kernel with block tile (bm, bn, bk) and tile_grid's grid takes `p`; otherwise
/// one line naming the constraint: N on grid y (65535 tiles of bn columns), then the 32-bit rule of
/// gemm/launch.hpp with the block tile (a partial tile's outside elements get offsets too, computed
/// and never read).
inline std::string tile_grid_rejects(const GemmProblem& p, int bm, int bn, int bk) {
  if (launch::ceil_div(p.n, bn) > launch::max_grid_y)
    return "needs N <= " + std::to_string(launch::max_grid_y * bn) + " (65535 tiles of " + std::to_string(bn) +
           " columns along grid y)";
  return launch::int32_offset_rejects(p, bm, bn, bk);
}

}  // namespace mm
