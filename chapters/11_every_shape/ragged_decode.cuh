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
// What every_shape runs since (the forms below): RCR on mma.sync from M = 3 (the second form), RRR in
// 16-byte chunks with K split across blocks (the third form, ragged_decode_rrr_chunks); the kernels
// above serve RCR at M <= 2.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel every_shape --layout RRR --sizes 1x11009x4096
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "11_every_shape/any_shape.cuh"
#include "layout/mma_sm80.hpp"

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

// ---- The second form (session t): the tensor cores for RCR, 4-byte words for RRR ----
//
// RCR at M = 8-16 lost to the staged path: 64 fp32 accumulators a thread, the FMAs and conversions set
// the time (ncu: FMA pipe 39%, 23% of the warps). mma.sync m16n8k16 takes a 16×16 piece of A and a
// 16×8 piece of B from registers, and nothing says where those registers come from: here from the
// same plain loads, B in place. Each lane's B register pair is 4 consecutive values of one row of B
// (one 8-byte load where K % 4 == 0): the fragment wants k = 2t, 2t+1 and 2t+8, 2t+9 (t = lane % 4)
// and gets the values 4t..4t+3 instead, A loaded the same way; a sum over k does not care about the
// order. RRR keeps the SIMT sums (B's pairs of k would be in two rows) but reads B in 4-byte words.

constexpr int kRaggedMmaTiles = 4;  ///< RCR mma: 8-column tiles of C a block (32 columns)
constexpr int kRaggedMmaSteps = 4;  ///< RCR mma: K steps of 16 a warp loads before its first mma (128 bytes a row)
constexpr int kRaggedMmaMaxWarps = 16;  ///< RCR mma: most warps a block (splitting K)

namespace detail {
/// Values k..k+3 of `row` (those below `k_end`; zeros past it and where `ok` is false) as two bf16x2
/// words, in V-value loads: V = 4 (row + k on 8 bytes, k_end % 4 == 0), 2 (4 bytes, k_end even) or 1.
/// `stream`: a load that leaves L1 to other data (ld.global.cs: B, read once).
template <int V, bool Stream>
__device__ uint2 load_quad(const bf16* row, std::int64_t k, std::int64_t k_end, bool ok) {
  static_assert(V == 1 || V == 2 || V == 4, "loads of 2, 4 or 8 bytes");
  if constexpr (V == 4) {
    const auto* q = reinterpret_cast<const uint2*>(row + k);
    return ok && k < k_end ? (Stream ? __ldcs(q) : __ldg(q)) : make_uint2(0, 0);
  } else if constexpr (V == 2) {
    const auto* q = reinterpret_cast<const unsigned*>(row + k);
    uint2 w;
    w.x = ok && k < k_end ? (Stream ? __ldcs(q) : __ldg(q)) : 0u;
    w.y = ok && k + 2 < k_end ? (Stream ? __ldcs(q + 1) : __ldg(q + 1)) : 0u;
    return w;
  } else {
    const auto* q = reinterpret_cast<const unsigned short*>(row + k);
    unsigned h[4];
    MM_UNROLL
    for (int i = 0; i < 4; ++i) h[i] = ok && k + i < k_end ? (Stream ? __ldcs(q + i) : __ldg(q + i)) : 0u;
    return make_uint2(h[0] | h[1] << 16, h[2] | h[3] << 16);
  }
}
}  // namespace detail

/// RCR on the tensor cores: a block is kRaggedMmaTiles·8 columns of C × 16 rows of A (grid.y walks M);
/// its warps (blockDim.x / 32 of them) take K's steps of 16·kRaggedMmaSteps values in turn and add
/// their sums in warp order through shared memory. Rows16 false: M <= 8 (A's rows 8-15 are zeros, not
/// loaded).
template <int V, bool Rows16>
__global__ void __launch_bounds__(32 * kRaggedMmaMaxWarps) ragged_decode_mma_rcr(RaggedDecodeArgs p) {
  constexpr int NT = kRaggedMmaTiles, U = kRaggedMmaSteps, kChunk = 16 * U;
  __shared__ float partial[kRaggedMmaMaxWarps][16][8 * NT];  // each warp's sums, (warp, row, column)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int g = lane / 4, t = lane % 4;  // the fragments' groupID and threadID_in_group
  const std::int64_t n0 = std::int64_t(blockIdx.x) * 8 * NT, m0 = std::int64_t(blockIdx.y) * 16;
  const bf16* b_row[NT];  // (NT): row n0 + 8j + g of B (column of C), its lane's fragment values
  bool b_ok[NT];
  MM_UNROLL
  for (int j = 0; j < NT; ++j) {
    b_ok[j] = n0 + 8 * j + g < p.n;
    b_row[j] = p.B + (b_ok[j] ? n0 + 8 * j + g : 0) * p.k;
  }
  const bool a_ok0 = m0 + g < p.m, a_ok1 = Rows16 && m0 + g + 8 < p.m;  // rows g and g + 8 of the fragment
  const bf16* a_row0 = p.A + (a_ok0 ? m0 + g : 0) * p.k;
  const bf16* a_row1 = p.A + (a_ok1 ? m0 + g + 8 : 0) * p.k;
  float acc[NT][4] = {};  // (NT, 4): tile j's C fragment, rows g and g + 8, columns 8j + 2t, +1
  for (std::int64_t k0 = std::int64_t(kChunk) * warp; k0 < p.k; k0 += std::int64_t(kChunk) * warps) {
    uint2 b[U][NT], a0[U], a1[U];  // every load of the step issued before the first mma
    MM_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::int64_t k = k0 + 16 * u + 4 * t;  // this lane's 4 values of the u-th k step
      MM_UNROLL
      for (int j = 0; j < NT; ++j) b[u][j] = detail::load_quad<V, true>(b_row[j], k, p.k, b_ok[j]);
      a0[u] = detail::load_quad<V, false>(a_row0, k, p.k, a_ok0);
      a1[u] = Rows16 ? detail::load_quad<V, false>(a_row1, k, p.k, a_ok1) : make_uint2(0, 0);
    }
    MM_UNROLL
    for (int u = 0; u < U; ++u)
      MM_UNROLL
      for (int j = 0; j < NT; ++j)  // a0..a3: (g, k 0-1), (g+8, k 0-1), (g, k 2-3), (g+8, k 2-3) of the lane's 4
        SM80_16x8x16_F32BF16BF16F32_TN::fma(acc[j][0], acc[j][1], acc[j][2], acc[j][3], a0[u].x, a1[u].x, a0[u].y,
                                            a1[u].y, b[u][j].x, b[u][j].y, acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
  }
  MM_UNROLL
  for (int j = 0; j < NT; ++j)
    MM_UNROLL
    for (int r = 0; r < 4; ++r) partial[warp][g + 8 * (r / 2)][8 * j + 2 * t + r % 2] = acc[j][r];
  __syncthreads();
  for (int e = threadIdx.x; e < 16 * 8 * NT; e += blockDim.x) {  // the warps' sums in warp order
    const int i = e / (8 * NT), c = e % (8 * NT);
    float sum = 0.0f;
    for (int w = 0; w < warps; ++w) sum += partial[w][i][c];
    if (m0 + i < p.m && n0 + c < p.n) p.C[(m0 + i) * p.n + n0 + c] = __float2bfloat16(sum);
  }
}

constexpr int kRaggedPairCols = 62;  ///< RRR words: columns of C a block (31 lanes' pairs)

namespace detail {
/// B's values e and e + 1 (elements from B's start; B + e on 4 bytes) as a bf16x2 word, in one 4-byte
/// load; those outside B (e = -1 where B starts 2 bytes into a word, e + 1 = total at its end) zeros.
__device__ inline std::uint32_t load_pair(const bf16* B, std::int64_t e, std::int64_t total) {
  if (e >= 0 && e + 1 < total) return __ldcs(reinterpret_cast<const unsigned*>(B + e));
  const auto* h = reinterpret_cast<const unsigned short*>(B);
  const unsigned lo = e >= 0 && e < total ? h[e] : 0u, hi = e + 1 >= 0 && e + 1 < total ? h[e + 1] : 0u;
  return lo | hi << 16;
}

/// One warp's rows of B in an RRR block of ragged_decode_rrr_pairs: rows k = 2q + parity, 32 a step, the
/// lane's word starting S values before its column `home` (S is the same in every row the warp reads:
/// rows 2 apart are 2N values apart). acc[i][0] sums column home; acc[i][1] column home + 1 (S = 0) or
/// home - 1 (S = 1: the left neighbour's).
template <int MR, int S>
__device__ void rrr_pair_rows(const RaggedDecodeArgs& p, int lane, int parity, int half, int halves, std::int64_t home,
                              std::int64_t m0, float (&acc)[MR][2]) {
  const std::int64_t total = p.n * p.k, rows = (p.k - parity + 1) / 2;  // rows of this parity
  const bool column = home - S < p.n;  // the word holds a column of C
  for (std::int64_t q0 = 32 * std::int64_t(half); q0 < rows; q0 += 32 * std::int64_t(halves)) {
    float a[MR];  // (MR): A[m0 + i][2(q0 + lane) + parity], shuffled to every lane below
    MM_UNROLL
    for (int i = 0; i < MR; ++i) {
      const bool ok = m0 + i < p.m && q0 + lane < rows;
      a[i] = ok ? __bfloat162float(p.A[(m0 + i) * p.k + 2 * (q0 + lane) + parity]) : 0.0f;
    }
    std::uint32_t w[32];  // (32): B[k][home - S], B[k][home - S + 1] for the step's rows, loads all issued first
    MM_UNROLL
    for (int j = 0; j < 32; ++j) {
      const std::int64_t k = 2 * (q0 + j) + parity;
      w[j] = column && q0 + j < rows ? load_pair(p.B, k * p.n + home - S, total) : 0u;
    }
    MM_UNROLL
    for (int j = 0; j < 32; ++j) {
      const float lo = bf16_lo(w[j]), hi = bf16_hi(w[j]);
      MM_UNROLL
      for (int i = 0; i < MR; ++i) {
        const float aj = __shfl_sync(0xffffffffu, a[i], j);
        if constexpr (S == 0) acc[i][0] += aj * lo, acc[i][1] += aj * hi;
        else acc[i][1] += aj * lo, acc[i][0] += aj * hi;
      }
    }
  }
}
}  // namespace detail

/// RRR in 4-byte words: a block is kRaggedPairCols columns of C (lane l: columns 2l and 2l + 1, lanes
/// 0-30) × MR rows (MR <= 8; grid.y walks the rest); its warps split K, even warps the even rows of B, odd warps the odd ones, so that a
/// warp's shift S of its rows in B's words is fixed; a warp reads 128 contiguous bytes of a row.
template <int MR>
__global__ void __launch_bounds__(32 * kRaggedWarpsRrr) ragged_decode_rrr_pairs(RaggedDecodeArgs p) {
  static_assert(kRaggedWarpsRrr % 2 == 0, "the warps come in pairs, one for each parity of K");
  static_assert(MR <= 8, "the partial sums of 16 rows would not fit in 48 KB");
  __shared__ float partial[kRaggedWarpsRrr][MR][2 * 32];  // each warp's sums, (warp, row, column)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, parity = warp % 2;
  const std::int64_t base = std::int64_t(blockIdx.x) * kRaggedPairCols, m0 = std::int64_t(blockIdx.y) * MR;
  const std::int64_t home = base + 2 * lane;
  // B[k][home] is value k·N + home from B's start, and B starts `off` values into a 4-byte word.
  const int off = int(reinterpret_cast<std::uintptr_t>(p.B) / 2 % 2);
  const int s = int((parity * p.n + home + off) % 2);  // the same in every lane (home even) and row of the warp
  float acc[MR][2] = {};
  if (s == 0) detail::rrr_pair_rows<MR, 0>(p, lane, parity, warp / 2, kRaggedWarpsRrr / 2, home, m0, acc);
  else detail::rrr_pair_rows<MR, 1>(p, lane, parity, warp / 2, kRaggedWarpsRrr / 2, home, m0, acc);
  MM_UNROLL
  for (int i = 0; i < MR; ++i) {  // S = 1: column home + 1 is the right neighbour's home - 1
    const float right = __shfl_down_sync(0xffffffffu, acc[i][1], 1);
    if (s == 1) acc[i][1] = right;
    partial[warp][i][2 * lane] = acc[i][0];
    partial[warp][i][2 * lane + 1] = acc[i][1];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < MR * kRaggedPairCols; e += 32 * kRaggedWarpsRrr) {  // the warps' sums in warp order
    const int i = e / kRaggedPairCols, c = e % kRaggedPairCols;
    float sum = 0.0f;
    MM_UNROLL
    for (int w = 0; w < kRaggedWarpsRrr; ++w) sum += partial[w][i][c];
    if (m0 + i < p.m && base + c < p.n) p.C[(m0 + i) * p.n + base + c] = __float2bfloat16(sum);
  }
}

// ---- The third form (session z): RRR in 16-byte chunks, K split in slices ----
//
// The first two RRR forms kept 1×11009×4096 at 1.9 TB/s: 178-345 blocks (columns are the only
// parallelism) and 2- or 4-byte loads, 3-5 instructions a value. Here a lane loads one aligned 16-byte
// chunk of a row (a warp: 512 contiguous bytes, four 128-byte lines) and K is split in slices across
// blocks; the last block of a column block to finish adds the slices' sums in slice order (as split_k's
// fixup, deterministic). A row of B
// starts 2N bytes after the one before, so rows 8 apart start the same number of bytes into a chunk:
// warp w takes the slice's rows w, w + 8, ..., and in all of them its lane's chunk holds the same 8
// columns of C. No shift, no shuffle of B; the warps' columns differ by up to 7, which the block's sum
// through shared memory lines up.

constexpr int kRaggedChunkWarps = 8;   ///< RRR chunks: warps of a block (one for each row of B mod 8)
constexpr int kRaggedChunkCols = 248;  ///< RRR chunks: columns of C a block (31 chunks: a warp's 32 reach 7 values past)
constexpr int kRaggedChunkRows = 8;    ///< RRR chunks: rows of B a warp loads before it uses the first
constexpr int kRaggedChunkMaxRows = 4; ///< RRR chunks: most rows of A a block (grid.y walks the rest)

namespace detail {
/// The 16 bytes at `chunk` (16-byte aligned) as four words, in one streaming load where all of them lie in
/// B's bytes [begin, end); a chunk that reaches past B (its first row's first, its last row's last) value by
/// value, zeros outside B.
__device__ inline uint4 load_chunk(std::uintptr_t chunk, std::uintptr_t begin, std::uintptr_t end) {
  if (chunk >= begin && chunk + 16 <= end) return __ldcs(reinterpret_cast<const uint4*>(chunk));
  unsigned h[8];
  MM_UNROLL
  for (int j = 0; j < 8; ++j) {
    const std::uintptr_t at = chunk + 2 * j;
    h[j] = at >= begin && at < end ? *reinterpret_cast<const unsigned short*>(at) : 0u;
  }
  return make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
}
}  // namespace detail

/// RRR in 16-byte chunks: a block is kRaggedChunkCols columns of C × MR rows of A × one slice of K
/// (`slice_rows` rows of B; blockIdx.z). Warp w reads the slice's rows w, w + 8, ..., kRaggedChunkRows of
/// them a step. Where K is one slice the block stores C; otherwise `partials` (slices × M × N fp32,
/// slice-major) takes its sums, and the last block of its column block to count itself in (`counters`,
/// one a column block, zero before the launch and after it) adds the slices' sums in slice order into C.
template <int MR>
__global__ void __launch_bounds__(32 * kRaggedChunkWarps)
    ragged_decode_rrr_chunks(RaggedDecodeArgs p, float* partials, int* counters, std::int64_t slice_rows) {
  constexpr int kSpan = kRaggedChunkCols + 16;  // a warp's columns: 7 before the block's first, 9 after its last
  __shared__ float sums[kRaggedChunkWarps][MR][kSpan];  // each warp's sums, (warp, row, 8 + column)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t c0 = std::int64_t(blockIdx.x) * kRaggedChunkCols, m0 = std::int64_t(blockIdx.y) * MR;
  const std::int64_t k_begin = std::int64_t(blockIdx.z) * slice_rows, k_end = std::min(p.k, k_begin + slice_rows);
  const auto begin = reinterpret_cast<std::uintptr_t>(p.B), end = begin + 2 * std::uintptr_t(p.n * p.k);
  const std::uintptr_t step = 16 * std::uintptr_t(p.n);  // bytes from a row of B to the one 8 rows on
  // B[k][c0] lies `skew` values into its chunk in every row k of this warp: lane l's chunk is columns
  // c0 - skew + 8l + j, j = 0..7, at `chunk` in row k0 (and `step` bytes on in each next row of the warp).
  const std::uintptr_t first = begin + 2 * std::uintptr_t((k_begin + warp) * p.n + c0);
  const int skew = int(first % 16 / 2);
  std::uintptr_t chunk = first - first % 16 + 16 * lane;
  float acc[MR][8] = {};
  for (std::int64_t k0 = k_begin + warp; k0 < k_end; k0 += 8 * kRaggedChunkRows, chunk += kRaggedChunkRows * step) {
    uint4 b[kRaggedChunkRows];  // rows k0, k0 + 8, ...: every load of the step issued before the first is used
    if (k0 + 8 * (kRaggedChunkRows - 1) < k_end && chunk >= begin && chunk + (kRaggedChunkRows - 1) * step + 16 <= end) {
      MM_UNROLL
      for (int r = 0; r < kRaggedChunkRows; ++r) b[r] = __ldcs(reinterpret_cast<const uint4*>(chunk + r * step));
    } else {  // the slice's last step, or B's first or last row
      MM_UNROLL
      for (int r = 0; r < kRaggedChunkRows; ++r)
        b[r] = k0 + 8 * r < k_end ? detail::load_chunk(chunk + r * step, begin, end) : make_uint4(0, 0, 0, 0);
    }
    float a[MR];  // A[m0 + i][k0 + 8·lane] (lanes 0-7), shuffled to every lane below
    MM_UNROLL
    for (int i = 0; i < MR; ++i) {
      const std::int64_t k = k0 + 8 * lane;
      a[i] = lane < kRaggedChunkRows && m0 + i < p.m && k < k_end ? __bfloat162float(p.A[(m0 + i) * p.k + k]) : 0.0f;
    }
    MM_UNROLL
    for (int r = 0; r < kRaggedChunkRows; ++r) {
      const float v[8] = {detail::bf16_lo(b[r].x), detail::bf16_hi(b[r].x), detail::bf16_lo(b[r].y), detail::bf16_hi(b[r].y),
                          detail::bf16_lo(b[r].z), detail::bf16_hi(b[r].z), detail::bf16_lo(b[r].w), detail::bf16_hi(b[r].w)};
      MM_UNROLL
      for (int i = 0; i < MR; ++i) {
        const float ar = __shfl_sync(0xffffffffu, a[i], r);
        MM_UNROLL
        for (int j = 0; j < 8; ++j) acc[i][j] += ar * v[j];
      }
    }
  }
  MM_UNROLL
  for (int i = 0; i < MR; ++i)
    MM_UNROLL
    for (int j = 0; j < 8; ++j) sums[warp][i][8 + 8 * lane + j - skew] = acc[i][j];
  __syncthreads();
  for (int e = threadIdx.x; e < MR * kRaggedChunkCols; e += blockDim.x) {  // the warps' sums in warp order
    const int i = e / kRaggedChunkCols, c = e % kRaggedChunkCols;
    float sum = 0.0f;
    MM_UNROLL
    for (int w = 0; w < kRaggedChunkWarps; ++w) sum += sums[w][i][8 + c];
    const std::int64_t m = m0 + i, n = c0 + c;
    if (m >= p.m || n >= p.n) continue;
    if (gridDim.z > 1) partials[(std::int64_t(blockIdx.z) * p.m + m) * p.n + n] = sum;
    else p.C[m * p.n + n] = __float2bfloat16(sum);
  }
  if (gridDim.z == 1) return;
  // The last of the column block's slices to finish adds them all, in slice order: the same sum
  // whichever block that is. Each thread's stores are fenced before the block's barrier, and the
  // counter's update after it (split_k's fixup, gemm/split_k_fixup.hpp, does the same).
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  int* counter = counters + std::int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1) == int(gridDim.z) - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < MR * kRaggedChunkCols; e += blockDim.x) {
    const std::int64_t m = m0 + e / kRaggedChunkCols, n = c0 + e % kRaggedChunkCols;
    if (m >= p.m || n >= p.n) continue;
    float sum = __ldcg(partials + m * p.n + n);
    for (std::int64_t s = 1; s < gridDim.z; ++s) sum += __ldcg(partials + (s * p.m + m) * p.n + n);
    p.C[m * p.n + n] = __float2bfloat16(sum);
  }
  if (threadIdx.x == 0) *counter = 0;  // back at zero for the next launch
}

/// Slices of K for the chunk kernel: as many as fill the SMs' resident `slots` with `blocks` blocks a
/// slice (one wave, never a second one for a few blocks), each at least one step of every warp (64 rows).
inline int ragged_chunk_slices(std::int64_t blocks, std::int64_t k, std::int64_t slots) {
  const std::int64_t fill = slots / std::max<std::int64_t>(blocks, 1);
  const std::int64_t most = k / (8 * kRaggedChunkRows);
  return int(std::clamp<std::int64_t>(std::min(fill, most), 1, 65535));
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

/// Rows up to which every_shape sends an RRR B that TMA cannot read here rather than staging it: where
/// the fp32 FMAs (M per value of B) and the shuffles of A still hide under the stream of B. Measured in
/// one process beside the staged path (the page's step 7): the first two forms won by 30% or more at
/// M <= 4 and lost or drew at M = 8 (8×11009×4096 89.0 µs against 86.6); the third form (16-byte
/// chunks, session z, two rounds) wins at M = 8 (59.5-59.8 µs against 85.7-86.2) and loses at M = 16
/// (99.9-100.1 against 86.2-86.4: B read twice, by blocks of 4 rows). RCR's bound is kRaggedMmaMaxM.
constexpr std::int64_t kRaggedDecodeMaxM = 8;
/// Rows up to which every_shape sends an RCR B that TMA cannot read here (the mma.sync kernel from
/// M = 3, kRaggedMmaMinM): at M = 8-16 it took half the staged path's time or less (the page's step 7).
constexpr std::int64_t kRaggedMmaMaxM = 16;

/// RCR's load width: 4, 2 or 1 values, the widest that A's and B's rows (pitch K) and pointers allow.
inline int ragged_vector(std::int64_t k, const void* A, const void* B) {
  const auto addr = reinterpret_cast<std::uintptr_t>(A) | reinterpret_cast<std::uintptr_t>(B);
  for (int v : {4, 2})
    if (k % v == 0 && addr % (2 * v) == 0) return v;
  return 1;
}

/// The step's first form (session s; the appendix step ragged_decode_simt): the SIMT kernels above in
/// both orders, fp32 FMAs, B's values one load each in RRR. Any M, N, K >= 1 (M / 16 blocks of rows
/// within grid.y's 65535), nothing allocated.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ragged_decode_simt(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
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
  return PreparedGemm(run, rrr ? "ragged_decode_simt RRR" : "ragged_decode_simt RCR, loads of " + std::to_string(2 * v) + " bytes");
}

/// Warps of an RCR mma block: 16, halved (down to 4) while the blocks would hold more than 24 warps an
/// SM (the registers of one wave), and no more than K's steps of 64 values.
inline int ragged_mma_warps(std::int64_t blocks, std::int64_t k, int sms) {
  int warps = kRaggedMmaMaxWarps;
  while (warps > 4 && blocks * warps > 24 * std::int64_t(sms)) warps /= 2;
  const std::int64_t chunks = launch::ceil_div(k, 16 * kRaggedMmaSteps);
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(warps, chunks)));
}

/// RCR from this M on goes to the mma kernel, below it to the SIMT one. Measured in one process, two
/// rounds (session t, call 2; ch11_every_shape_ragged_mma_appendix.csv): the SIMT kernel took less
/// time at M = 1 and 2 (2×4096×4100 13.3 µs against 16.4, 2×128256×4100 246 against 299), the mma
/// kernel from M = 4 (4×4096×4100 17.3 against 21.8, 4×11008×4095 70.1 against 92.3) and at M = 8-16
/// by 2-4× (16×4096×4100 19.6 against 39.1); M = 3 runs the SIMT kernel of M = 4 (rows rounded up).
constexpr std::int64_t kRaggedMmaMinM = 3;

/// Which of the step's kernels runs: the rules' choice, the first form's SIMT kernels, the second
/// form's (mma.sync in RCR, 4-byte words in RRR) or the third's (RRR in 16-byte chunks, K split; RCR as
/// the second) at any shape (the tests force each).
enum class RaggedForm { chosen, simt, second, third };

/// True when `p` goes to the third form (16-byte chunks, K split): every RRR shape the step takes.
/// Measured in one process against the first two forms (session z, two rounds;
/// ch11_every_shape_ragged_chunks_appendix.csv): faster at every RRR shape from M = 1 to 16 (1×11009×4096
/// 31.3 µs against 48.1 and 49.2-49.6, 1×28673×8192 122.6-123.2 against 178.2-178.5) but one, 1×4097×4096
/// (21.3-21.4 µs against the first form's 20.9-21.0), which its slices added in the kernel since took to
/// 15.8-16.0 µs (ch11_every_shape_ragged_fixup_new_appendix.csv).
inline bool ragged_chunks_take(const GemmProblem& p) { return p.b == Order::row; }

/// The third form (ragged_decode_rrr_chunks) for an RRR `p`: any M, N, K >= 1 (M / 4 blocks of rows
/// within grid.y's 65535). K's slices fill the SMs' resident blocks once; where there are more than one,
/// their workspace (slices × M × N fp32, then a counter a column block, zeroed here) is allocated here,
/// once per problem, and freed with the returned launch. One launch at a time uses it.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ragged_decode_chunks(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  const int mr = std::min(ragged_rows(p.m), kRaggedChunkMaxRows);
  const std::int64_t row_blocks = launch::ceil_div(p.m, mr), col_blocks = launch::ceil_div(p.n, kRaggedChunkCols);
  if (row_blocks > 65535) throw std::invalid_argument("ragged_decode: takes M up to 4·65535 in 16-byte chunks");
  auto with_rows = [mr](auto f) {  // MR as a compile-time constant
    if (mr == 1) return f(std::integral_constant<int, 1>{});
    if (mr == 2) return f(std::integral_constant<int, 2>{});
    return f(std::integral_constant<int, 4>{});
  };
  const int per_sm = with_rows([](auto rows) {
    int blocks = 0;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ragged_decode_rrr_chunks<decltype(rows)::value>,
                                                                      32 * kRaggedChunkWarps, 0);
        e != cudaSuccess)
      throw std::runtime_error(std::string("ragged_decode: cudaOccupancyMaxActiveBlocksPerMultiprocessor: ") + cudaGetErrorString(e));
    return blocks;
  });
  const int sms = device_sm_count();
  const int wanted = ragged_chunk_slices(col_blocks * row_blocks, p.k, std::int64_t(per_sm) * sms);
  const std::int64_t slice_rows = launch::ceil_div(p.k, wanted);
  const int slices = int(launch::ceil_div(p.k, slice_rows));  // none empty
  std::shared_ptr<float> workspace;
  int* counters = nullptr;
  if (slices > 1) {
    float* w = nullptr;
    const std::size_t sums = std::size_t(slices) * std::size_t(p.m) * std::size_t(p.n);
    const std::size_t count_bytes = std::size_t(col_blocks * row_blocks) * sizeof(int);
    if (cudaError_t e = cudaMalloc(&w, sums * sizeof(float) + count_bytes); e != cudaSuccess)
      throw std::runtime_error(std::string("ragged_decode: cannot allocate the workspace: ") + cudaGetErrorString(e));
    workspace.reset(w, [](float* q) { cudaFree(q); });
    counters = reinterpret_cast<int*>(w + sums);
    zero_workspace(counters, count_bytes);  // zero before this returns: the caller's stream may be any
  }
  const RaggedDecodeArgs args{A, B, C, p.m, p.n, p.k};
  const dim3 grid{unsigned(col_blocks), unsigned(row_blocks), unsigned(slices)};
  auto run = [=](cudaStream_t stream) {
    with_rows([&](auto rows) {
      ragged_decode_rrr_chunks<decltype(rows)::value>
          <<<grid, 32 * kRaggedChunkWarps, 0, stream>>>(args, workspace.get(), counters, slice_rows);
    });
  };
  return PreparedGemm(run, "ragged_decode RRR, 16-byte chunks, K in " + std::to_string(slices) + " slices");
}

/// The step's kernel `form` for `p` (RCR or RRR, any M, N, K >= 1 with M / 16 blocks of rows
/// within grid.y's 65535): RRR in 16-byte chunks (prepare_ragged_decode_chunks, its workspace allocated
/// there), RCR on mma.sync (ragged_decode_mma_rcr) from M = 3 and the SIMT kernel below; the other forms
/// where `form` asks (RRR's second: 4-byte words, ragged_decode_rrr_pairs). Throws std::invalid_argument
/// for what it refuses.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ragged_decode_form(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, RaggedForm form) {
  if (std::string why = any_shape_rejects(p); !why.empty()) throw std::invalid_argument("ragged_decode: " + why);
  check_bf16_pointers(A, B, C);
  const RaggedDecodeArgs args{A, B, C, p.m, p.n, p.k};
  const int sms = device_sm_count();
  const bool rrr = p.b == Order::row;
  if (rrr && (form == RaggedForm::third || (form == RaggedForm::chosen && ragged_chunks_take(p))))
    return prepare_ragged_decode_chunks(p, A, B, C);
  if (form == RaggedForm::simt || (form == RaggedForm::chosen && p.m < kRaggedMmaMinM)) {
    PreparedGemm simt = prepare_ragged_decode_simt(p, A, B, C);
    simt.path = "ragged_decode" + simt.path.substr(std::string("ragged_decode_simt").size());
    return simt;
  }
  if (rrr) {
    const int mr = std::min(ragged_rows(p.m), 8);  // 16 rows would need 64 KB of partial sums
    const std::int64_t row_blocks = launch::ceil_div(p.m, mr);
    if (row_blocks > 65535) throw std::invalid_argument("ragged_decode: takes M up to 16·65535");
    const dim3 grid(unsigned(launch::ceil_div(p.n, kRaggedPairCols)), unsigned(row_blocks));
    auto run = [=](cudaStream_t stream) {
      auto launch_rows = [&](auto rows) {  // MR as a compile-time constant
        ragged_decode_rrr_pairs<decltype(rows)::value><<<grid, 32 * kRaggedWarpsRrr, 0, stream>>>(args);
      };
      switch (mr) {
        case 1: launch_rows(std::integral_constant<int, 1>{}); break;
        case 2: launch_rows(std::integral_constant<int, 2>{}); break;
        case 4: launch_rows(std::integral_constant<int, 4>{}); break;
        default: launch_rows(std::integral_constant<int, 8>{}); break;
      }
    };
    return PreparedGemm(run, "ragged_decode RRR, 4-byte words");
  }
  const std::int64_t row_blocks = launch::ceil_div(p.m, 16);
  if (row_blocks > 65535) throw std::invalid_argument("ragged_decode: takes M up to 16·65535");
  const std::int64_t col_blocks = launch::ceil_div(p.n, 8 * kRaggedMmaTiles);
  const int warps = ragged_mma_warps(col_blocks * row_blocks, p.k, sms);
  const int v = ragged_vector(p.k, A, B);
  const bool rows16 = p.m > 8;
  const dim3 grid{unsigned(col_blocks), unsigned(row_blocks)};
  auto run = [=](cudaStream_t stream) {
    auto launch_v = [&](auto vv) {  // V as a compile-time constant
      constexpr int V = decltype(vv)::value;
      if (rows16) ragged_decode_mma_rcr<V, true><<<grid, 32 * warps, 0, stream>>>(args);
      else ragged_decode_mma_rcr<V, false><<<grid, 32 * warps, 0, stream>>>(args);
    };
    if (v == 4) launch_v(std::integral_constant<int, 4>{});
    else if (v == 2) launch_v(std::integral_constant<int, 2>{});
    else launch_v(std::integral_constant<int, 1>{});
  };
  return PreparedGemm(run, "ragged_decode RCR, mma.sync, loads of " + std::to_string(2 * v) + " bytes, " +
                               std::to_string(warps) + " warps");
}

/// The second form forced (the appendix step ragged_decode_second): RRR in 4-byte words, RCR on mma.sync.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ragged_decode_second(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  return prepare_ragged_decode_form(p, A, B, C, RaggedForm::second);
}

/// The step as the chapter's list takes it: the rules' choice.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_ragged_decode(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  return prepare_ragged_decode_form(p, A, B, C, RaggedForm::chosen);
}

}  // namespace mm::ch11
