// Chapter 13: the router of a mixture-of-experts layer, made on the device from a seed, so that every
// run of the chapter sees the same tokens per expert. Each token picks its k experts as top-k of
//
//   score(token, e) = bias(e) + gumbel(token, e)       gumbel = -log(-log u), u uniform from a hash
//
// which draws k distinct experts with probabilities proportional to exp(bias) (the Gumbel top-k trick).
//
//   balanced  every bias 0: each expert gets about tokens·k / E rows
//   skewed    expert 0's bias log(4), the last E/8 experts' -inf: the busiest expert gets about 4× the
//             mean (with top-8 of 256: 4.6×; Mixtral's top-2 of 8 caps it at every token) and E/8 get none
//
// The counts per expert come from an atomic histogram of the choices. The routing weights (a softmax
// over each token's k chosen scores) are kept for the whole layer's combine.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "13_grouped_moe/routing.hpp"

namespace mm::ch13 {

/// One thread per token: its k experts (distinct, best first) into ids[token·k ..], their weights
/// (softmax over the k scores) into weights[token·k ..], and one count each into counts[expert].
__global__ void route_kernel(int tokens, int experts, int topk, Routing routing, std::uint64_t seed, int* ids, float* weights,
                             int* counts) {
  const int token = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (token >= tokens) return;
  float best[kMaxTopK];
  int best_id[kMaxTopK];
  for (int j = 0; j < topk; ++j) best[j] = -3e38f, best_id[j] = -1;
  for (int e = 0; e < experts; ++e) {
    const float bias = routing_bias(routing, e, experts);
    if (bias < -1e29f) continue;
    float score = router_score(routing, seed, std::uint64_t(token) * std::uint64_t(experts) + std::uint64_t(e), e, experts);
    int id = e;
    for (int j = 0; j < topk; ++j) {  // insertion into the sorted top-k
      if (score > best[j]) {
        const float s = best[j];
        const int i = best_id[j];
        best[j] = score, best_id[j] = id;
        score = s, id = i;
      }
    }
  }
  float sum = 0.0f;
  for (int j = 0; j < topk; ++j) sum += expf(best[j] - best[0]);
  for (int j = 0; j < topk; ++j) {
    ids[std::int64_t(token) * topk + j] = best_id[j];
    weights[std::int64_t(token) * topk + j] = expf(best[j] - best[0]) / sum;
    if (best_id[j] >= 0) atomicAdd(&counts[best_id[j]], 1);
  }
}

}  // namespace mm::ch13
