// Chapter 11, step 7: ragged_decode. Decode (M <= 16) with a B that TMA cannot read: its rows are
// not a multiple of 16 bytes long (RRR with N % 8 != 0, RCR with K % 8 != 0) or it starts off a
// 16-byte boundary. any_shape.cuh copies such a B into 128-byte rows before swap_ab: at
// 1×11009×4096 that moves B's 90 MB three times (read, write, read) where cuBLAS reads it once.
//
// At M <= 16 the product is a stream over B: each value of B is used M times, A and C are small.
// The tensor cores are not needed to keep up with memory, and plain loads read a row at any pitch
// and address, so this step drops TMA and wgmma: a SIMT kernel that reads B once, in place, with
// loads as wide as its alignment allows, fp32 sums, C stored by the registers. What matters is the
// number of bytes in flight (DRAM's latency × bandwidth, ~25-40 KB an SM): each thread issues all of
// a step's loads before it uses them.
//
//   RRR (B K×N, N contiguous)  lanes along N (a warp reads 64 contiguous bytes of a row of B), 32 rows
//                              of B a step: 32 loads in flight per thread; A's 32 values of the step
//                              loaded by the lanes and handed round by shuffles
//   RCR (B N×K, K contiguous)  lanes along K, V values each (V = 4, 2 or 1: what the pitch and the
//                              pointers allow), 4 columns (rows of B) a warp: each value of A loaded
//                              is used 4 times; lanes' sums added by shuffles
//
// In both, the block's warps split K (steps interleaved) and add their sums in warp order through
// shared memory: deterministic, one launch, no workspace. Rows of A in blocks of MR = 1, 2, 4, 8 or
// 16 (M rounded up; grid.y walks them past 16).
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel every_shape --layout RRR --sizes 1x11009x4096
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "11_every_shape/any_shape.cuh"

namespace mm::ch11 {

/// The operands as the kernels take them: A M×K (pitch K), B K×N (pitch N: RRR) or N×K (pitch K: RCR),
/// C M×N (pitch N), all packed, any address a bf16 may have.
struct RaggedDecodeArgs {
  const bf16* A;
  const bf16* B;
  bf16* C;
  std::int64_t m, n, k;
};

constexpr int kRaggedWarpsRrr = 16;  ///< warps of an RRR block, splitting K (8 left 1×11009×4096 at 1.9 TB/s)
constexpr int kRaggedWarpsRcr = 4;  ///< warps of an RCR block, splitting K
constexpr int kRaggedCols = 4;      ///< RCR: columns of C (rows of B) a block

namespace detail {
/// bf16 → fp32 of the low and high halves of a 32-bit word (a bf16 is an fp32's upper 16 bits).
__device__ inline float bf16_lo(std::uint32_t w) { return __uint_as_float(w << 16); }
__device__ inline float bf16_hi(std::uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

/// The V values at `ptr` (2V-byte aligned) as fp32, in one load; zeros when `ok` is false.
template <int V>
__device__ void load_values(const bf16* ptr, bool ok, float (&out)[V]) {
  static_assert(V == 1 || V == 2 || V == 4, "loads of 2, 4 or 8 bytes");
  if constexpr (V == 1) {
    out[0] = ok ? __bfloat162float(*ptr) : 0.0f;
  } else if constexpr (V == 2) {
    const std::uint32_t w = ok ? *reinterpret_cast<const std::uint32_t*>(ptr) : 0u;
    out[0] = bf16_lo(w), out[1] = bf16_hi(w);
  } else {
    const uint2 w = ok ? *reinterpret_cast<const uint2*>(ptr) : make_uint2(0, 0);
    out[0] = bf16_lo(w.x), out[1] = bf16_hi(w.x), out[2] = bf16_lo(w.y), out[3] = bf16_hi(w.y);
  }
}

/// The sum of `v` over the warp's 32 lanes, in every lane.
__device__ inline float warp_sum(float v) {
  MM_UNROLL
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}
}  // namespace detail

/// RRR: a block is 32 columns of C (a lane each) × MR rows; its warps take K's steps of 32 rows of B
/// in turn (warp w: steps w, w + 16, ...).
template <int MR>
__global__ void __launch_bounds__(32 * kRaggedWarpsRrr) ragged_decode_rrr(RaggedDecodeArgs p) {
  __shared__ float partial[kRaggedWarpsRrr][MR][32];  // each warp's sums, (warp, row, lane)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t n = std::int64_t(blockIdx.x) * 32 + lane, m0 = std::int64_t(blockIdx.y) * MR;
  const bool column = n < p.n;
  float acc[MR] = {};  // (MR): C[m0 + i][n]
  for (std::int64_t k0 = 32 * warp; k0 < p.k; k0 += 32 * kRaggedWarpsRrr) {
    float a[MR];  // (MR): A[m0 + i][k0 + lane], shuffled to every lane below
    MM_UNROLL
    for (int i = 0; i < MR; ++i) {
      const bool ok = m0 + i < p.m && k0 + lane < p.k;
      a[i] = ok ? __bfloat162float(p.A[(m0 + i) * p.k + k0 + lane]) : 0.0f;
    }
    bf16 b[32];  // (32): B[k0 + j][n], all 32 loads issued before the first is used
    MM_UNROLL
    for (int j = 0; j < 32; ++j) b[j] = column && k0 + j < p.k ? p.B[(k0 + j) * p.n + n] : bf16(0.0f);
    MM_UNROLL
    for (int j = 0; j < 32; ++j) {
      const float bj = __bfloat162float(b[j]);
      MM_UNROLL
      for (int i = 0; i < MR; ++i) acc[i] += __shfl_sync(0xffffffffu, a[i], j) * bj;
    }
  }
  MM_UNROLL
  for (int i = 0; i < MR; ++i) partial[warp][i][lane] = acc[i];
  __syncthreads();
  for (int t = threadIdx.x; t < MR * 32; t += 32 * kRaggedWarpsRrr) {  // the warps' sums in warp order
    const int i = t / 32, c = t % 32;
    float sum = 0.0f;
    MM_UNROLL
    for (int w = 0; w < kRaggedWarpsRrr; ++w) sum += partial[w][i][c];
    const std::int64_t col = std::int64_t(blockIdx.x) * 32 + c;
    if (m0 + i < p.m && col < p.n) p.C[(m0 + i) * p.n + col] = __float2bfloat16(sum);
  }
}

/// RCR: a block is kRaggedCols columns of C × MR rows; lanes along K, V values each; its warps take
/// K's steps of 32·V values in turn.
template <int MR, int V>
__global__ void __launch_bounds__(32 * kRaggedWarpsRcr) ragged_decode_rcr(RaggedDecodeArgs p) {
  __shared__ float partial[kRaggedWarpsRcr][MR][kRaggedCols];  // each warp's sums, (warp, row, column)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t n0 = std::int64_t(blockIdx.x) * kRaggedCols, m0 = std::int64_t(blockIdx.y) * MR;
  float acc[MR][kRaggedCols] = {};  // (MR, cols): this lane's part of C[m0 + i][n0 + c]
  for (std::int64_t k = V * (32 * warp + lane); k < p.k; k += V * 32 * kRaggedWarpsRcr) {
    float b[kRaggedCols][V];  // (cols, V): B[n0 + c][k .. k + V)
    MM_UNROLL
    for (int c = 0; c < kRaggedCols; ++c) detail::load_values<V>(p.B + (n0 + c) * p.k + k, n0 + c < p.n, b[c]);
    MM_UNROLL
    for (int i = 0; i < MR; ++i) {
      float a[V];  // (V): A[m0 + i][k .. k + V), used kRaggedCols times
      detail::load_values<V>(p.A + (m0 + i) * p.k + k, m0 + i < p.m, a);
      MM_UNROLL
      for (int c = 0; c < kRaggedCols; ++c)
        MM_UNROLL
        for (int v = 0; v < V; ++v) acc[i][c] += a[v] * b[c][v];
    }
  }
  MM_UNROLL
  for (int i = 0; i < MR; ++i)
    MM_UNROLL
    for (int c = 0; c < kRaggedCols; ++c) {
      const float sum = detail::warp_sum(acc[i][c]);
      if (lane == 0) partial[warp][i][c] = sum;
    }
  __syncthreads();
  if (threadIdx.x < MR * kRaggedCols) {  // the warps' sums in warp order
    const int i = threadIdx.x / kRaggedCols, c = threadIdx.x % kRaggedCols;
    float sum = 0.0f;
    MM_UNROLL
    for (int w = 0; w < kRaggedWarpsRcr; ++w) sum += partial[w][i][c];
    if (m0 + i < p.m && n0 + c < p.n) p.C[(m0 + i) * p.n + n0 + c] = __float2bfloat16(sum);
  }
}

/// Rows of A a block takes: M rounded up to 1, 2, 4, 8 or 16 (16 past 16: grid.y walks the rest).
inline int ragged_rows(std::int64_t m) {
  int mr = 1;
  while (mr < 16 && mr < m) mr *= 2;
  return mr;
}

/// The step's rule: any_shape's, and M <= 16 (the kernel takes any M; past 16 it reads B once per 16
/// rows of A, which the tensor-core paths do better).
inline std::string ragged_decode_rejects(const GemmProblem& p) {
  if (std::string why = any_shape_rejects(p); !why.empty()) return why;
  if (p.m > 16) return "takes M <= 16 (decode: B streamed once by plain loads)";
  return {};
}

/// Rows up to which every_shape sends a B that TMA cannot read here rather than staging it: where the
/// fp32 FMAs (M per value of B) and, in RRR, the shuffles of A (M per row of B) still hide under the
/// stream of B. Measured in one process beside the staged path (appendix step any_shape_staged; the
/// page's step 7): at M = 8 and 16 the kernel lost or drew in both orders (RCR 16×4096×4100 38.6 µs
/// against 38.4, 8×4096×4100 43.4 against 39.2; RRR 8×11009×4096 89.0 against 86.6), at M <= 4 it won
/// by 30% or more (RRR 4×11009×4096 60.9 against 86.7 µs, RCR 4×4096×4100 21.0 against 38.5).
constexpr std::int64_t kRaggedDecodeMaxM = 4;

/// RCR's load width: 4, 2 or 1 values, the widest that A's and B's rows (pitch K) and pointers allow.
inline int ragged_vector(std::int64_t k, const void* A, const void* B) {
  const auto addr = reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B);
  for (int v : {4, 2})
    if (k % v == 0 && addr % (2 * v) == 0) return v;
  return 1;
}

/// The step: ragged_decode's kernel for `p` (RCR or RRR, any M, N, K >= 1 with M / 16 blocks of rows
/// within grid.y's 65535), nothing allocated. Throws std::invalid_argument for what it refuses.
inline PreparedGemm prepare_ragged_decode(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = any_shape_rejects(p); !why.empty()) throw std::invalid_argument("ragged_decode: " + why);
  check_bf16_pointers(A, B, C);
  const int mr = ragged_rows(p.m);
  const std::int64_t row_blocks = launch::ceil_div(p.m, mr);
  if (row_blocks > 65535) throw std::invalid_argument("ragged_decode: takes M up to 16·65535");
  const RaggedDecodeArgs args{A, B, C, p.m, p.n, p.k};
  const bool rrr = p.b == Order::row;
  const int v = rrr ? 1 : ragged_vector(p.k, A, B);
  const dim3 grid(unsigned(launch::ceil_div(p.n, rrr ? 32 : kRaggedCols)), unsigned(row_blocks));
  auto run = [=](cudaStream_t stream) {
    auto launch_rows = [&](auto rows) {  // MR as a compile-time constant
      constexpr int MR = decltype(rows)::value;
      if (rrr) ragged_decode_rrr<MR><<<grid, 32 * kRaggedWarpsRrr, 0, stream>>>(args);
      else if (v == 4) ragged_decode_rcr<MR, 4><<<grid, 32 * kRaggedWarpsRcr, 0, stream>>>(args);
      else if (v == 2) ragged_decode_rcr<MR, 2><<<grid, 32 * kRaggedWarpsRcr, 0, stream>>>(args);
      else ragged_decode_rcr<MR, 1><<<grid, 32 * kRaggedWarpsRcr, 0, stream>>>(args);
    };
    switch (mr) {
      case 1: launch_rows(std::integral_constant<int, 1>{}); break;
      case 2: launch_rows(std::integral_constant<int, 2>{}); break;
      case 4: launch_rows(std::integral_constant<int, 4>{}); break;
      case 8: launch_rows(std::integral_constant<int, 8>{}); break;
      default: launch_rows(std::integral_constant<int, 16>{}); break;
    }
  };
  return PreparedGemm(run, rrr ? "ragged_decode RRR" : "ragged_decode RCR, loads of " + std::to_string(2 * v) + " bytes");
}

}  // namespace mm::ch11
