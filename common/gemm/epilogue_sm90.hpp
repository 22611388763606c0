// Getting a warpgroup's wgmma accumulators (a 64×N fp32 tile, MMA_Traits<Atom>::CLayout) out as
// bf16, two ways (and, for an fp32 C, stage_accumulators_f32, the second way without stmatrix):
//
//   store_accumulators_bf16   from registers straight to C in global memory, each thread storing
//                             its own values (two neighbours along N as one 32-bit store), masked
//                             at C's edges: any C, any M and N
//   stage_accumulators_bf16   columns [64j, 64j + 64) into a 64×64 bf16 tile in shared memory with
//                             stmatrix (128-byte swizzled rows: no bank conflicts, and the layout a
//                             TMA store with the 128-byte swizzle reads), from where one thread sends
//                             the whole tile out with one TMA store (copy_sm90_tma.hpp)
//
// Each takes one 64×N row block's register fragment, (c, r, g) = (column in the pair, row half,
// 8-column group: GmmaFragmentLayout), and reads it by those coordinates; a raw float[N/2]
// (chapters 09-10) is viewed as that fragment (make_gmma_fragment_view), the same registers.
//
// Where stmatrix puts what: in the accumulator layout each warp holds 16 rows of the tile, and
// within one 8-column group its values 2h and 2h+1 (h = 0, 1: rows +0 and +8) are exactly an 8×8
// matrix in the fragment order stmatrix takes (lane l: row l/4, columns 2(l%4), 2(l%4)+1). One
// stmatrix.x4 stores four of them: rows +0 and +8 of two neighbouring column groups.
// StsmAccumulatorMap says which register and which address each lane gives;
// tests/layout/test_epilogue_sm90.cpp runs it through the host emulation of stmatrix and checks that
// every element lands where the accumulator layout says it belongs.
#pragma once

#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>

#include "layout/ldmatrix.hpp"  // SM90_U32x4_STSM_N
#include "layout/mma_sm90.hpp"

namespace mm {

/// The stmatrix.x4 stores of one 64×64 chunk of a warpgroup's accumulators: for lane `lane` of
/// warp `warp` (0..3) and store `q` (0..3) of the chunk, which accumulator pairs go in its four
/// registers and which row of the chunk it addresses.
struct StsmAccumulatorMap {
  /// Index (into the thread's N/2 accumulators) of the first of the two values of register `reg` of
  /// store `q` in chunk `j`: matrices (rows +0, group g), (rows +8, g), (+0, g+1), (+8, g+1), g = 8j + 2q.
  MM_HD static constexpr int acc_index(int j, int q, int reg) { return 4 * (8 * j + 2 * q + reg / 2) + 2 * (reg % 2); }
  /// The chunk row (0..63) lane `lane` of warp `warp` addresses: row l%8 of matrix l/8.
  MM_HD static constexpr int row(int warp, int lane) { return 16 * warp + 8 * ((lane / 8) % 2) + lane % 8; }
  /// The chunk column (0..63, a multiple of 8) where that row's 8 elements start, in store `q`.
  MM_HD static constexpr int col(int q, int lane) { return 8 * (2 * q + lane / 16); }
};

/// Two fp32 as one 32-bit word of two bf16 (the first in the low half), rounded to nearest.
MM_HD std::uint32_t pack_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
#else
  __nv_bfloat16 l = __float2bfloat16_rn(lo), h = __float2bfloat16_rn(hi);
  std::uint16_t lb, hb;
  std::memcpy(&lb, &l, 2);
  std::memcpy(&hb, &h, 2);
  return std::uint32_t(lb) | std::uint32_t(hb) << 16;
#endif
}

/// Writes columns [64j, 64j+64) of this warpgroup's accumulators (thread `t` of the warpgroup, `acc`
/// its register fragment of the wgmma's C: GmmaFragmentLayout) as bf16 into `chunk`, a (64,64)
/// shared-memory tensor, with four stmatrix.x4 per thread. `Cols` < 64 (a multiple of 16): only
/// columns [64j, 64j+Cols), into a (64,Cols) `chunk`, Cols/16 stmatrix.x4 (a tile whose N is not a
/// multiple of 64 ends in such a piece). sm_90.
template <int Cols = 64, class Frag, class Chunk>
  requires(is_tensor_v<Frag>)
MM_HD void stage_accumulators_bf16(Frag const& acc, int j, Chunk& chunk, int t) {
  static_assert(Cols % 16 == 0 && Cols > 0 && Cols <= 64, "whole stmatrix.x4 (16 columns each) of one 64-column chunk");
  const int warp = t / 32, lane = t % 32;
MM_UNROLL
  for (int q = 0; q < Cols / 16; ++q) {
    std::uint32_t r[4];
MM_UNROLL
    for (int reg = 0; reg < 4; ++reg) {
      const int g = 8 * j + 2 * q + reg / 2;  // the 8-column group (StsmAccumulatorMap::acc_index)
      r[reg] = pack_bf16x2(acc(0, reg % 2, g), acc(1, reg % 2, g));  // the pair, row half reg % 2
    }
    auto& row = *reinterpret_cast<uint128_t*>(&chunk(StsmAccumulatorMap::row(warp, lane), StsmAccumulatorMap::col(q, lane)));
    SM90_U32x4_STSM_N::copy(r[0], r[1], r[2], r[3], row);
  }
}
/// stage_accumulators_bf16 of a raw array of accumulators (chapter 10's kernels).
template <int NAcc, class Chunk>
MM_HD void stage_accumulators_bf16(float const (&acc)[NAcc], int j, Chunk& chunk, int t) {
  stage_accumulators_bf16(make_gmma_fragment_view(acc), j, chunk, t);
}

/// Writes columns [32j, 32j+32) of this warpgroup's accumulators (thread `t`, `acc` its register
/// fragment of the wgmma's C) as fp32 into `chunk`, a (64,32) shared-memory tensor of 128-byte
/// swizzled rows (the layout a TMA store with the 128-byte swizzle reads): what a kernel with an fp32 C stages, since stmatrix
/// moves 16-bit values only. Eight 8-byte stores per thread: the two neighbouring columns a thread
/// holds in each 8-column group, at rows +0 and +8. One store of a warp writes 32 bytes of each of 8
/// rows, 16-byte chunks c and c+1 of each; the swizzle sends them to chunks c ^ row, c+1 ^ row,
/// which cover the 8 chunks of a 128-byte line twice: two wavefronts for 256 bytes, no conflict. sm_90.
template <class Frag, class Chunk>
  requires(is_tensor_v<Frag>)
MM_HD void stage_accumulators_f32(Frag const& acc, int j, Chunk& chunk, int t) {
  const int warp = t / 32, lane = t % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
MM_UNROLL
  for (int g = 0; g < 4; ++g) {  // the piece's four groups of 8 columns: the fragment's group 4j + g
MM_UNROLL
    for (int h = 0; h < 2; ++h) {  // rows +0 and +8
      auto& dst = *reinterpret_cast<float2*>(&chunk(row + 8 * h, 8 * g + col));
      dst = make_float2(acc(0, h, 4 * j + g), acc(1, h, 4 * j + g));  // the pair of row half h, group 4j + g
    }
  }
}
/// stage_accumulators_f32 of a raw array of accumulators.
template <int NAcc, class Chunk>
MM_HD void stage_accumulators_f32(float const (&acc)[NAcc], int j, Chunk& chunk, int t) {
  stage_accumulators_f32(make_gmma_fragment_view(acc), j, chunk, t);
}

/// Stores this warpgroup's 64×N accumulator tile (thread `t`, `acc` its register fragment: the value
/// mode of MMA_Traits<Atom>::CLayout) as bf16 into row-major C (M×N, pitch `ldc`) at rows m0..,
/// columns n0..; elements outside C are skipped. `pairs`: two neighbouring elements of a row are one
/// aligned 32-bit word (C's pointer and pitch allow it), stored at once.
///
/// The accumulator layout is a sum of a thread part and a value part, in rows and in columns
/// separately (rows: 16·warp + lane/4 plus 0 or 8; columns: 2·(lane%4) plus 8·(i/4) + i%2;
/// tests/gemm/test_gemm_pieces.cpp checks it): the thread's row and column are computed once,
/// and each value adds compile-time constants. (Taking m = idx % 64 of the whole index per value
/// makes the compiler keep N/4 run-time offsets alive, which a persistent kernel spills.)
template <class Atom, class Frag>
  requires(is_tensor_v<Frag>)
MM_HD void store_accumulators_bf16(Frag const& acc, __nv_bfloat16* c, int ldc, int m0, int n0, int M, int N, bool pairs,
                                   int t) {
  using CLayout = typename MMA_Traits<Atom>::CLayout;  // (thr,val) -> m + 64·n in the warpgroup's tile
  const int thread_idx = CLayout{}(t, 0);
  const int mt = m0 + thread_idx % 64, nt = n0 + thread_idx / 64;  // this thread's first value
MM_UNROLL
  for (int v = 0; v < int(acc.size()); v += 2) {  // v = (0, r, g): the pair (c = 0, 1) of row half r in group g
    constexpr CLayout layout{};
    const int value_idx = layout(0, v);  // a constant once the loop is unrolled
    const int m = mt + value_idx % 64, n = nt + value_idx / 64;
    if (m >= M) continue;
    __nv_bfloat16* dst = c + std::int64_t(m) * ldc + n;
    if (pairs && n + 1 < N) {
      *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(acc(v), acc(v + 1));
    } else {
      if (n < N) dst[0] = __float2bfloat16_rn(acc(v));
      if (n + 1 < N) dst[1] = __float2bfloat16_rn(acc(v + 1));
    }
  }
}
/// store_accumulators_bf16 of a raw array of accumulators (chapter 10's kernels).
template <class Atom, int NAcc>
MM_HD void store_accumulators_bf16(float const (&acc)[NAcc], __nv_bfloat16* c, int ldc, int m0, int n0, int M, int N,
                                   bool pairs, int t) {
  store_accumulators_bf16<Atom>(make_gmma_fragment_view(acc), c, ldc, m0, n0, M, N, pairs, t);
}

/// fp32 to the output type of a register epilogue: bf16 rounded to nearest, or fp32 as it is.
MM_HD void store_one(__nv_bfloat16* dst, float v) { *dst = __float2bfloat16_rn(v); }
/// @copydoc store_one(__nv_bfloat16*, float)
MM_HD void store_one(float* dst, float v) { *dst = v; }

/// Stores this warpgroup's 64×N accumulator tile (thread `t`, `acc` its register fragment: the value
/// mode of MMA_Traits<Atom>::CLayout) into any strided matrix: element (m, n) of the kernel's C (M×N,
/// rows m0.., columns n0..) goes to `out[m * row_stride + n * col_stride]`, as bf16 or fp32 (T);
/// elements outside M×N are skipped. What chapter 11's split-K and swap-AB epilogues need: fp32 partial sums into a workspace, and a
/// kernel that computes Cᵀ storing it column by column (row_stride 1, col_stride = C's pitch). One
/// scalar store per value: for the small C of those problems, not for the big squares (the TMA store
/// epilogue's job). Same thread/value split of the layout as store_accumulators_bf16.
template <class Atom, class Frag, class T>
  requires(is_tensor_v<Frag>)
MM_HD void store_accumulators_strided(Frag const& acc, T* out, std::int64_t row_stride, std::int64_t col_stride, int m0,
                                      int n0, int M, int N, int t) {
  using CLayout = typename MMA_Traits<Atom>::CLayout;  // (thr,val) -> m + 64·n in the warpgroup's tile
  const int thread_idx = CLayout{}(t, 0);
  const int mt = m0 + thread_idx % 64, nt = n0 + thread_idx / 64;  // this thread's first value
MM_UNROLL
  for (int v = 0; v < int(acc.size()); ++v) {  // the fragment's values in register order
    constexpr CLayout layout{};
    const int value_idx = layout(0, v);  // a constant once the loop is unrolled
    const int m = mt + value_idx % 64, n = nt + value_idx / 64;
    if (m < M && n < N) store_one(out + std::int64_t(m) * row_stride + std::int64_t(n) * col_stride, acc(v));
  }
}
/// store_accumulators_strided of a raw array of accumulators.
template <class Atom, int NAcc, class T>
MM_HD void store_accumulators_strided(float const (&acc)[NAcc], T* out, std::int64_t row_stride, std::int64_t col_stride,
                                      int m0, int n0, int M, int N, int t) {
  store_accumulators_strided<Atom>(make_gmma_fragment_view(acc), out, row_stride, col_stride, m0, n0, M, N, t);
}

}  // namespace mm
