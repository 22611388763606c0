// Chapter 11, one of every_shape's cases (step 5): A and B copied into rows that start on 128-byte
// boundaries before tile_shapes multiplies them, when K leaves them misaligned and the problem is big
// enough to pay for the copy.
//
// A row of K bf16 values is 2K bytes. When K % 64 != 0 the rows do not start on 128-byte L2 lines, and
// when K % 16 != 0 not even on 32-byte sectors: at K = 3000 (6000-byte rows) every other row starts
// 16 bytes into a sector, each 128-byte box row of a TMA load touches five sectors on two lines, and
// tile_shapes runs at 60% of cuBLAS (3000³, 3064³) where K = 3008 runs at 98.5% (the page). The copy
// moves each row to a pitch of round_up(K, 64) elements: it reads and writes A and B once, 2(M + N)K
// bytes each way, and the TMA maps then describe the same K columns at the aligned pitch (the padding
// columns are never read: the maps end at K, TMA fills past it with zeros).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "11_every_shape/tile_shapes.cuh"

namespace mm::ch11 {

/// Copies `rows_a` rows of A and then `rows_b` rows of B, `k` bf16 values each (k % 8 == 0), from
/// pitch k to pitch `pitch` (a multiple of 8): a block a row at a time, a Chunk (16 bytes) a thread and
/// step. (A template only so that the header can be included by several files.)
template <class Chunk = uint4>
__global__ void copy_to_aligned_rows(const Chunk* __restrict__ a, const Chunk* __restrict__ b, Chunk* __restrict__ a_out,
                                     Chunk* __restrict__ b_out, std::int64_t rows_a, std::int64_t rows_b, int k, int pitch) {
  static_assert(sizeof(Chunk) == 16, "8 bf16 values a chunk");
  const int per_row = k / 8, out_row = pitch / 8;  // 16-byte chunks
  for (std::int64_t r = blockIdx.x; r < rows_a + rows_b; r += gridDim.x) {
    const bool in_a = r < rows_a;
    const std::int64_t row = in_a ? r : r - rows_a;
    const Chunk* from = (in_a ? a : b) + row * per_row;
    Chunk* to = (in_a ? a_out : b_out) + row * out_row;
    for (int c = int(threadIdx.x); c < per_row; c += blockDim.x) to[c] = from[c];
  }
}

/// Elements of a row after the copy: K rounded up to a multiple of 64 (128 bytes of bf16).
inline std::int64_t aligned_pitch(std::int64_t k) { return (k + 63) / 64 * 64; }
/// The problem the GEMM after the copy sees: K at the aligned pitch.
inline GemmProblem with_aligned_rows(GemmProblem p) {
  p.k = aligned_pitch(p.k);
  return p;
}

/// The copy's model, shared by copies_to_aligned_rows and runs_in_place_192: an aligned GEMM's rate, the
/// copy's bytes a second and its launch (with the GEMM's wait for it).
inline constexpr double kAlignedGemmFlopsPerSecond = 750e12, kCopyBytesPerSecond = 3e12, kCopyLaunchSeconds = 3e-6;
/// The copy's bytes, read and written: A's and B's rows once each way.
inline double aligned_copy_bytes(const GemmProblem& p) { return 4.0 * double(p.m + p.n) * double(p.k); }

/// True when every_shape copies A and B into aligned rows first: K % 16 != 0 (rows not on 32-byte
/// sectors) and the time the copy saves is larger than its own. A model from the page's measurements:
/// at 3000³ the misaligned GEMM took 1.8× the aligned one (so the copy saves 0.8 of an aligned GEMM,
/// which runs at about 750 TFLOP/s); the copy reads and writes 2(M + N)K bytes each way at about
/// 3 TB/s, after a launch (3 µs with the GEMM's wait for it). 3000³: saves 58 µs for 27; 1000³:
/// 2.1 µs for 5.7.
inline bool copies_to_aligned_rows(const GemmProblem& p) {
  constexpr double kSavedFraction = 0.8;
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k);
  const double saved = kSavedFraction * flops / kAlignedGemmFlopsPerSecond;
  const double cost = aligned_copy_bytes(p) / kCopyBytesPerSecond + kCopyLaunchSeconds;
  return p.k % 16 != 0 && saved > cost;
}

/// The index into kTileShapes of the tile the aligned copies get: choose_tile_shape's, for K at the
/// aligned pitch (its rule against narrow tiles on misaligned rows no longer applies).
inline int aligned_rows_tile(const GemmProblem& p, int sms) { return choose_tile_shape(with_aligned_rows(p), sms); }

/// Step 15: where the copy pays (copies_to_aligned_rows), 192×192 tiles in clusters of 2 along M (B
/// multicast: each block asks the L2 for half of B's rows) read the rows where they lie, when the model
/// says they finish first. Times in units of one 128×256 tile on one SM (modeled_time's), an SM
/// running at 1/sms of 750 TFLOP/s. The copy: its bytes at kCopyBytesPerSecond after a launch, then
/// the aligned GEMM (aligned_rows_tile's tile). In place: rounds of the clusters' units (two tiles
/// along M; sms / 2 clusters a round) at kInPlace192Efficiency. The efficiency is the threshold that
/// picked the faster path best over 31 misaligned shapes measured both ways on the H200 (the step's
/// page): 0.90, the ratio measured at 3000³ alone, ran 192×192 where the copy was 3-7% faster (4000²×3000,
/// 3504²×5000, 6000²×5000); at 0.86 the choice is within 1% of the faster path at 29 of 31, 1.4% behind
/// at 5000³ and 4.1% at 2896×3840×4008. 3000³, modeled: 2 rounds in place, 91 µs, against 27 µs of
/// copy and 79 µs of GEMM (measured: 85 µs against 18 and 78).
inline bool runs_in_place_192(const GemmProblem& p, int sms) {
  constexpr double kInPlace192Efficiency = 0.86;
  if (sms < 2) return false;
  const double unit_seconds = 2.0 * 128.0 * 256.0 * double(p.k) * double(sms) / kAlignedGemmFlopsPerSecond;
  const double copy_then_gemm = aligned_copy_bytes(p) / kCopyBytesPerSecond + kCopyLaunchSeconds +
                                modeled_time(with_aligned_rows(p), kTileShapes[aligned_rows_tile(p, sms)], sms) * unit_seconds;
  const std::int64_t units = launch::ceil_div(launch::ceil_div(p.m, 192), 2) * launch::ceil_div(p.n, 192);
  const double rounds = double(launch::ceil_div(units, std::int64_t(sms / 2)));
  const double in_place = rounds * (192.0 * 192.0 / (128.0 * 256.0)) / kInPlace192Efficiency * unit_seconds;
  return in_place < copy_then_gemm;
}

/// tile_shapes on copies of A and B with rows of aligned_pitch(K) elements: the copies' buffer is
/// allocated here, once per problem, and each launch copies, then multiplies (same stream).
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_aligned_rows(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("aligned_rows", tile_shapes_rejects(p), A, B, C);  // the copy reads A and B 16 bytes at a time too
  const std::int64_t pitch = aligned_pitch(p.k);
  void* buffer = nullptr;
  if (cudaError_t e = cudaMalloc(&buffer, std::size_t(p.m + p.n) * std::size_t(pitch) * sizeof(bf16)); e != cudaSuccess)
    throw std::runtime_error(std::string("aligned_rows: cannot allocate the aligned copies: ") + cudaGetErrorString(e));
  std::shared_ptr<void> owner(buffer, [](void* q) { cudaFree(q); });
  bf16* a_out = static_cast<bf16*>(buffer);
  bf16* b_out = a_out + p.m * pitch;
  const int sms = device_sm_count();
  const PreparedGemm gemm = with_tile_shape(aligned_rows_tile(p, sms), [&](auto cfg) {
    return prepare_tile_shape<decltype(cfg)>(p, a_out, b_out, C, max_blocks, pitch);
  });
  auto run = [=](cudaStream_t stream) {
    copy_to_aligned_rows<uint4><<<unsigned(std::min<std::int64_t>(p.m + p.n, 16 * sms)), 128, 0, stream>>>(
        reinterpret_cast<const uint4*>(A), reinterpret_cast<const uint4*>(B), reinterpret_cast<uint4*>(a_out),
        reinterpret_cast<uint4*>(b_out), p.m, p.n, int(p.k), int(pitch));
    gemm(stream);
    (void)owner;
  };
  return PreparedGemm(run, "aligned_rows " + gemm.path);
}

}  // namespace mm::ch11
