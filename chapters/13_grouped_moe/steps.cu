// Chapter 13's kernels and router, compiled once.
#include "13_grouped_moe/steps.hpp"

#include "13_grouped_moe/routing.cuh"

#include <stdexcept>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"

namespace mm::ch13 {

PreparedGemm prepare_grouped_gemm(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks,
                                  int tile_rows, bool skip_padding) {
  if (skip_padding && tile_rows != 128)
    throw std::invalid_argument("grouped_skip_padding: its tiles are 128 rows (two consumer warpgroups), not " +
                                std::to_string(tile_rows));
  if (skip_padding) return prepare_grouped<GroupedSkipCfg>(g, A, B, C, max_blocks);
  if (tile_rows == 128) return prepare_grouped<GroupedCfg>(g, A, B, C, max_blocks);
  if (tile_rows == 64) return prepare_grouped<GroupedCfg64>(g, A, B, C, max_blocks);
  throw std::invalid_argument("grouped_contiguous: tiles of 128 or 64 rows, not " + std::to_string(tile_rows));
}

Routed route(int tokens, int experts, int topk, Routing routing, std::uint64_t seed) {
  const int active = experts - (routing == Routing::skewed ? experts / 8 : 0);
  if (tokens < 0 || experts < 1 || topk < 1 || topk > kMaxTopK || topk > active)
    throw std::invalid_argument("route: needs tokens >= 0, 1 <= topk <= " + std::to_string(kMaxTopK) +
                                " and topk <= the experts the routing leaves active (" + std::to_string(active) + ")");
  Routed r;
  r.rows.assign(experts, 0);
  if (tokens == 0) return r;
  DeviceBuffer<int> ids(std::size_t(tokens) * topk), counts(experts);
  DeviceBuffer<float> weights(std::size_t(tokens) * topk);
  MM_CUDA_CHECK(cudaMemset(counts.data(), 0, sizeof(int) * experts));
  route_kernel<<<(tokens + 127) / 128, 128>>>(tokens, experts, topk, routing, seed, ids.data(), weights.data(), counts.data());
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int> c = counts.download();
  for (int e = 0; e < experts; ++e) r.rows[e] = c[e];
  r.ids = ids.download();
  r.weights = weights.download();
  return r;
}

}  // namespace mm::ch13
