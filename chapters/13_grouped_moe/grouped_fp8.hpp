// Chapter 13, step 5: fp8 experts with DeepSeek-V3's block scales. Chapter 12's fp8_block_scaled
// kernel (e4m3 A and B, a scale per 1×128 block of A and per 128×128 block of B, each K block's products
// promoted into fp32 with its two scales) with step 1's grouped scheduler:
//
//   GemmKernelCooperative              unchanged
//   + CollectiveMmaBlockScaled         chapter 12's, told where a grouped tile is: as the tile of one
//                                      GEMM of all rows by all experts' stacked weights (grouped_fp8.cu)
//   + CollectiveEpilogueTma            unchanged: C in bf16
//   + PersistentGroupTileScheduler     step 1's
//
// The scales follow the operands: A's (a float per row and 128 K) are one (rows, Kb) matrix over all
// experts' rows, (m, kb) at kb·rows + m, as chapter 12's scale_a for M = rows; B's are the experts'
// (N/128 × Kb) blocks stacked as their weights are, (E·N/128) rows of Kb rounded up to 4, as chapter
// 12's scale_b for N = E·N. A tile's 128 rows are one expert's (step 1's alignment) and its 256
// columns two of that expert's column blocks.
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe --fp8
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <string>

#include "13_grouped_moe/grouped_contiguous.cuh"  // GroupedProblem, grouped_schedule
#include "gemm/prepared_gemm.hpp"
#include "gemm/problem.hpp"

namespace mm::ch13 {

/// Empty when grouped_fp8 takes `g`; otherwise the rule it breaks, in one line: step 1's rules, and K
/// % 16 == 0 (TMA's 16-byte rows of e4m3).
std::string grouped_fp8_rejects(const GroupedProblem& g);

/// grouped_fp8, ready to run: A (g.rows × K) and B ((E·N) × K) e4m3, row-major; `scale_a` (g.rows ×
/// ceil(K/128), kb·rows + m) and `scale_b` ((E·N/128) × ceil(K/128) rounded up to 4, row-major) in
/// device memory; C (g.rows × N) bf16. `tile_rows`: 128 (chapter 12's fp8_block_scaled tile, two
/// consumers taking turns) or 64 (its small-M tile, one consumer: decode). Throws
/// std::invalid_argument for a problem it refuses or another tile height.
PreparedGemm prepare_grouped_fp8(const GroupedProblem& g, const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, const float* scale_a,
                                 const float* scale_b, __nv_bfloat16* C, int max_blocks = 0, int tile_rows = 128);

/// Chapter 12's dense fp8_block_scaled for `p` (its roofline, measured beside the grouped kernel).
PreparedGemm prepare_dense_fp8_block_scaled(const GemmProblem& p, const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B,
                                            __nv_bfloat16* C);

}  // namespace mm::ch13
