// The second half of a split-K GEMM: each of `splits` slices of K has left its partial product of C
// (M×N fp32, row-major) in a workspace, slice after slice; this kernel adds them in slice order and
// stores C as bf16. CUTLASS's counterpart is cutlass/reduction/kernel/reduce_split_k.h (ReduceSplitK).
//
// Deterministic: every element is the same sum in the same order (slice 0 + slice 1 + ...) on every
// run, whichever block computed which slice and when; a split-K with atomicAdd into C would not be.
// Memory-bound: it reads splits × 4 bytes and writes 2 bytes per element of C; threads take 4
// consecutive elements (one 16-byte load per slice) when the element count allows it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gemm/launch.hpp"

namespace mm {

/// C[i] = bf16(Σ_s workspace[s · count + i]) for i < count, the slices added in order s = 0, 1, ...
/// `workspace` is 16-byte aligned (cudaMalloc'ed); C need not be. (A template so that the header can
/// be included by several translation units.)
template <class TOut = __nv_bfloat16>
__global__ void reduce_split_k_bf16(const float* __restrict__ workspace, int splits, std::int64_t count,
                                    TOut* __restrict__ c) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x * 4;
  const bool vector = count % 4 == 0;  // every slice's rows then start 16-byte aligned
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4; i < count; i += stride) {
    if (vector) {
      float4 sum = *reinterpret_cast<const float4*>(workspace + i);
      for (int s = 1; s < splits; ++s) {
        const float4 v = *reinterpret_cast<const float4*>(workspace + std::int64_t(s) * count + i);
        sum.x += v.x;
        sum.y += v.y;
        sum.z += v.z;
        sum.w += v.w;
      }
      c[i] = __float2bfloat16_rn(sum.x);
      c[i + 1] = __float2bfloat16_rn(sum.y);
      c[i + 2] = __float2bfloat16_rn(sum.z);
      c[i + 3] = __float2bfloat16_rn(sum.w);
    } else {
      for (std::int64_t j = i; j < i + 4 && j < count; ++j) {
        float sum = workspace[j];
        for (int s = 1; s < splits; ++s) sum += workspace[std::int64_t(s) * count + j];
        c[j] = __float2bfloat16_rn(sum);
      }
    }
  }
}

/// Launches reduce_split_k_bf16 on `stream` with enough blocks to cover C once (at most 8 per SM of
/// `sms`, then a grid-stride loop).
inline void launch_reduce_split_k_bf16(const float* workspace, int splits, std::int64_t count, __nv_bfloat16* c,
                                       int sms, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::int64_t blocks = std::clamp<std::int64_t>(launch::ceil_div(count, 4 * kThreads), 1, std::int64_t(sms) * 8);
  reduce_split_k_bf16<__nv_bfloat16><<<unsigned(blocks), kThreads, 0, stream>>>(workspace, splits, count, c);
}

}  // namespace mm
