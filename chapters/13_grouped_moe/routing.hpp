// Chapter 13: the router's choices (routing.cuh has the kernel that makes them).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "harness/random.hpp"  // random_uniform

namespace mm::ch13 {

/// How the router spreads tokens over experts.
enum class Routing { balanced, skewed };

/// "balanced" or "skewed".
inline std::string routing_name(Routing r) { return r == Routing::balanced ? "balanced" : "skewed"; }

/// The most experts a token picks (registers of the top-k insertion).
inline constexpr int kMaxTopK = 8;

/// The router's bias of expert e (see the file comment); -1e30 stands for -inf (never picked).
__host__ __device__ inline float routing_bias(Routing r, int e, int experts) {
  if (r == Routing::balanced) return 0.0f;
  if (e >= experts - experts / 8) return -1e30f;
  return e == 0 ? 1.3862944f : 0.0f;  // log(4)
}

/// The router's score of expert e for the draw `index` (token·E + e): its bias plus a Gumbel sample
/// -log(-log u), u in (0, 1) from random_uniform's [-1, 1) mapped and kept off 0 and 1. route_kernel
/// ranks these; the whole MoE pass (moe_layer.cu) takes them as the router's logits.
__host__ __device__ inline float router_score(Routing r, std::uint64_t seed, std::uint64_t index, int e, int experts) {
  const float u = 0.5f * (random_uniform(seed, index) + 1.0f);
  const float uu = fminf(fmaxf(u, 1e-7f), 1.0f - 1e-7f);
  return routing_bias(r, e, experts) - logf(-logf(uu));
}

}  // namespace mm::ch13
