// Chapter 13: which grouped tile a dispatcher takes (step 6's rule), in plain C++ so that the
// library's host code (lib/src/gemm_ladder.cpp) and the CPU tests use it without the kernels.
#pragma once

#include <cstdint>

namespace mm::ch13 {

/// Token rows of an expert a decode tile holds (step 6, grouped_decode.cuh: GroupedDecodeCfg's BN).
inline constexpr int kDecodeTileRows = 16;
/// Rows of the contiguous layout's slots: each expert's first row is a multiple of it (GroupedCfg's BM).
inline constexpr std::int64_t kGroupAlignmentRows = 128;

/// The tile a grouped GEMM takes (the dispatcher's rule: the library's gl_grouped_gemm): 16 (step 6's
/// grouped_decode), 64 (step 2) or 128 (step 1) rows of an expert per tile. `host_rows`: each expert's
/// real rows (E of them, padding excluded) when the caller has a host copy of the layout, else null;
/// without it the buffer bounds them (no expert's tiles cover more than `buffer_rows`).
///
/// Step 6 where step 2's 64×256 tiles are fewer than the SMs (`sms`): then few SMs stream the weights,
/// and 64×16 tiles of the weights' rows give every SM some; and K of at least 1024, where a tile's
/// stream of weights is long enough to pay for its walk and epilogue. Measured (A/B in one process,
/// plots/data/h200/ch13_grouped_moe_decode_step6_appendix.csv): Mixtral's down at one token (K = 14336,
/// 32 tiles of 64×256) 1.74x faster; Qwen3's down (K = 768) 0.96x at one token, 0.77x at 64 tokens
/// (3968 decode tiles: their walk and epilogue), Qwen3's gate+up at 64 tokens 0.99x; at 256 tokens of
/// Mixtral (76 rows an expert) 0.35x, so at most 32 rows for the largest expert when the host knows.
/// Otherwise step 2's rule: 64 rows when the experts hold few (a mean of 32 rows or fewer; without a
/// host copy, a contiguous buffer of at most 128 rows an expert, or the masked layout), else 128.
inline int choose_grouped_tile(int experts, std::int64_t n, std::int64_t k, std::int64_t buffer_rows, bool masked,
                               const std::int64_t* host_rows, int sms) {
  constexpr std::int64_t kDecodeMaxRows = 32;  // two decode tiles of token rows
  constexpr std::int64_t kDecodeMinK = 1024;
  constexpr double kFewRows = 32;
  const std::int64_t tiles_n = n / 256;  // step 2's tile columns of an expert
  std::int64_t tiles64 = 0, most = 0, real = 0;
  if (host_rows != nullptr) {
    for (int e = 0; e < experts; ++e) {
      const std::int64_t r = host_rows[e] > 0 ? host_rows[e] : 0;
      tiles64 += (r + 63) / 64 * tiles_n, most = r > most ? r : most, real += r;
    }
  } else {
    tiles64 = (buffer_rows + 63) / 64 * tiles_n;  // at most one row of 64-row tiles per 64 rows of buffer
  }
  if (k >= kDecodeMinK && tiles64 < sms && (host_rows == nullptr || most <= kDecodeMaxRows)) return kDecodeTileRows;
  if (host_rows != nullptr) return double(real) / experts <= kFewRows ? 64 : 128;
  return masked || buffer_rows <= kGroupAlignmentRows * experts ? 64 : 128;
}

}  // namespace mm::ch13
