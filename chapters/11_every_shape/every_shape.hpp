// Chapter 11, step 4: every_shape. No new kernel: the entry point that picks one of the chapter's
// kernels for a problem, from its shape and the GPU's SM count. It is what the chapter's binary and
// figures call "ours".
//
//   M <= 64          swap_ab: the small side in wgmma's N, K split until the units fill the GPU
//                    (choose_swap_splits)
//   otherwise        split_k: the tile of choose_tile_shape (waves × work / efficiency), K split only
//                    when the tiles fill less than half the GPU (choose_splits); with one slice it
//                    is tile_shapes' kernel
//
// choose() returns the decision as data, for the tests and the page. It composes the helpers the
// launches call themselves (choose_tile_shape, choose_splits, choose_swap_splits: the rule lives
// there once), so the two agree by construction; what choose() adds is only the M <= 64 switch,
// which prepare_every_shape makes the same way.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel every_shape
#pragma once

#include "11_every_shape/swap_ab.cuh"

namespace mm::ch11 {

/// Which of the chapter's kernels a problem gets, and with what.
struct Choice {
  enum Kernel { split_k, swap_ab } kernel;  ///< split_k (tile_shapes when splits == 1) or swap_ab
  int tile_bm;                             ///< the kernel's tile: rows (of C; of Cᵀ for swap_ab)
  int tile_bn;                             ///< columns
  int splits;                              ///< K slices per tile
};

/// The kernel, tile and K slices every_shape runs for `p` on a GPU of `sms` SMs (RCR problems).
inline Choice choose(const GemmProblem& p, int sms) {
  if (p.m <= kSwapMaxM) {
    return with_swap_tile(p.m, [&](auto cfg) {
      using Cfg = decltype(cfg);
      const int k_steps = int(std::max<std::int64_t>(1, launch::ceil_div(p.k, Cfg::BK::value)));
      const int bm = Cfg::BM::value, bn = Cfg::BN::value;
      const std::int64_t tiles = launch::ceil_div(p.n, bm) * launch::ceil_div(p.m, bn);
      const int wanted = choose_swap_splits(p, bn, tiles, k_steps, sms);
      return Choice{Choice::swap_ab, bm, bn, SplitKTileScheduler::make({1, 1, 1}, k_steps, wanted).splits};
    });
  }
  const int k_steps = int(std::max<std::int64_t>(1, launch::ceil_div(p.k, Tile128x256Cfg::BK::value)));  // every tile's BK
  const TileShape s = kTileShapes[choose_tile_shape(p, sms)];
  const std::int64_t tiles = launch::ceil_div(p.m, s.bm) * launch::ceil_div(p.n, s.bn);
  const int wanted = choose_splits(tiles, k_steps, sms);
  return {Choice::split_k, s.bm, s.bn, SplitKTileScheduler::make({1, 1, 1}, k_steps, wanted).splits};
}

/// every_shape's rule: the chapter's (RCR, TMA's rules), and N % 8 == 0 for M > 64 (split_k's TMA store).
inline std::string every_shape_rejects(const GemmProblem& p) {
  if (p.m <= kSwapMaxM) return swap_ab_rejects(p);
  return split_k_rejects(p);
}

/// The step: the kernel choose() names.
inline std::function<void(cudaStream_t)> prepare_every_shape(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                             int max_blocks = 0) {
  if (std::string why = every_shape_rejects(p); !why.empty()) throw std::invalid_argument("every_shape: " + why);
  if (p.m <= kSwapMaxM) return prepare_swap_ab(p, A, B, C, max_blocks);
  return prepare_split_k(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
