// Chapter 12, step 1b: tf32_transpose_b. C = A·B with B stored K×N row-major (RRR), which tf32's
// wgmma cannot read: it takes tf32 (and fp8) operands K-major only, and a row-major B is N-major
// (bf16 has a transposed descriptor mode for it; these types do not). So B goes through a transpose
// first, into an N×K workspace, and tf32_wgmma multiplies C = A·(Bᵀ)ᵀ as an RCR problem:
//
//   transpose_kernel   B (K×N) -> Bᵀ (N×K), 32×32 tiles through shared memory with a padded row
//                      (chapter 04's transpose: both global sides coalesced, no bank conflicts)
//   tf32_wgmma_kernel  unchanged, on the workspace
//
// What it costs is the transpose's traffic, 2·K·N·4 bytes at memory speed, against the GEMM's
// 2·M·N·K flops: about 10% at 4096³ (the page measures it), less as M grows. A library avoids it by
// transposing once (weights are stored K-major for tf32 and fp8 for this reason) or inside the main
// loop on the way to shared memory; the lesson is that the storage order is part of the datatype's
// contract here.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel tf32_transpose_b --layout RRR
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "12_hopper_datatypes/tf32_wgmma.cuh"

namespace mm::ch12 {

/// Bᵀ (N×K row-major) from B (K×N row-major): one 32×32 tile per block of 32×8 threads, read along N
/// and written along K, through a shared tile whose rows are padded to 33 so that the column reads
/// hit 32 different banks.
__global__ void transpose_kernel(const float* b, float* bt, int k, int n) {
  __shared__ float tile[32][33];
  const int n0 = int(blockIdx.x) * 32, k0 = int(blockIdx.y) * 32;
  for (int r = int(threadIdx.y); r < 32; r += 8) {
    const int kk = k0 + r, nn = n0 + int(threadIdx.x);
    if (kk < k && nn < n) tile[r][threadIdx.x] = b[std::int64_t(kk) * n + nn];
  }
  __syncthreads();
  for (int r = int(threadIdx.y); r < 32; r += 8) {
    const int nn = n0 + r, kk = k0 + int(threadIdx.x);
    if (nn < n && kk < k) bt[std::int64_t(nn) * k + kk] = tile[threadIdx.x][r];
  }
}

/// Empty when tf32_transpose_b takes `p`; otherwise the rule it breaks: RRR, and tf32_wgmma's rules
/// for the transposed problem (K and N multiples of 4).
inline std::string tf32_transpose_b_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.b != Order::row || p.c != Order::row)
    return "takes RRR only (B stored K×N, row-major): the step that needs no transpose is tf32_wgmma (RCR)";
  if (launch::ceil_div(p.k, 32) > launch::max_grid_y) return "needs K <= 2,097,120: the transpose's grid has a block per 32 k";
  GemmProblem rcr = p;
  rcr.b = Order::col;
  return tf32_wgmma_rejects(rcr);
}

/// The one-time preparation: Bᵀ's workspace (freed with the returned launch), tf32_wgmma's
/// preparation on it; the launch transposes B, then multiplies. Throws as prepare_tf32_wgmma does,
/// and std::runtime_error when the workspace cannot be allocated.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_tf32_transpose_b(const GemmProblem& p, const float* A, const float* B, float* C,
                                             int max_blocks = 0) {
  if (std::string why = tf32_transpose_b_rejects(p); !why.empty()) throw std::invalid_argument("tf32_transpose_b: " + why);
  float* raw = nullptr;
  if (cudaError_t e = cudaMalloc(&raw, std::size_t(p.n) * std::size_t(p.k) * sizeof(float)); e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("tf32_transpose_b: cannot allocate Bᵀ: ") + cudaGetErrorString(e));
  }
  std::shared_ptr<float> bt(raw, [](float* q) { cudaFree(q); });
  GemmProblem rcr = p;
  rcr.b = Order::col;  // Bᵀ stored N×K: the K-major B tf32_wgmma reads
  const PreparedGemm gemm = prepare_tf32_wgmma(rcr, A, bt.get(), C, max_blocks);
  const dim3 grid{unsigned(launch::ceil_div(p.n, 32)), unsigned(launch::ceil_div(p.k, 32))}, block{32, 8};
  const int k = int(p.k), n = int(p.n);
  auto run = [gemm, bt, grid, block, B, k, n](cudaStream_t stream) {
    transpose_kernel<<<grid, block, 0, stream>>>(B, bt.get(), k, n);
    gemm(stream);
  };
  return PreparedGemm(run, "transpose_b " + gemm.path);
}

}  // namespace mm::ch12
