// Chapter 13: the router's choices (routing.cuh has the kernel that makes them).
#pragma once

#include <cuda_runtime.h>

#include <string>

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

}  // namespace mm::ch13
