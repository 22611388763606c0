// Chapter 13's kernels and router, compiled once (steps.cu) for the binary and the tests.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "13_grouped_moe/grouped_contiguous.cuh"  // GroupedProblem, grouped_rejects, contiguous_layout
#include "13_grouped_moe/grouped_skip_padding.cuh"
#include "13_grouped_moe/routing.hpp"
#include "gemm/prepared_gemm.hpp"

namespace mm::ch13 {

/// grouped_contiguous's kernel (or its masked form, by g's), ready to run: see grouped_contiguous.cuh.
/// `tile_rows`: 128 (GroupedCfg) or 64 (GroupedCfg64, decode's); std::invalid_argument otherwise.
/// `skip_padding`: step 3's kernel (grouped_skip_padding.cuh, 128-row tiles only).
PreparedGemm prepare_grouped_gemm(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0,
                                  int tile_rows = 128, bool skip_padding = false);

/// What the router made on the device (routing.cuh): each token's k experts and weights, and the
/// rows per expert (copied to the host).
struct Routed {
  std::vector<std::int64_t> rows;  ///< E: tokens routed to each expert
  std::vector<int> ids;            ///< tokens · k: each token's experts, best first
  std::vector<float> weights;      ///< tokens · k: their routing weights (sum 1 per token)
};

/// Routes `tokens` tokens to `topk` of `experts` experts on the device from `seed`. Throws
/// std::invalid_argument for sizes it cannot route (topk above kMaxTopK or the experts a routing
/// leaves active).
Routed route(int tokens, int experts, int topk, Routing routing, std::uint64_t seed);

}  // namespace mm::ch13
