// Chapter 13's kernels and router, compiled once (steps.cu) for the binary and the tests.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "13_grouped_moe/grouped_contiguous.cuh"  // GroupedProblem, grouped_rejects, contiguous_layout
#include "13_grouped_moe/grouped_decode.cuh"      // step 6: kDecodeTileRows, choose_grouped_tile
#include "13_grouped_moe/grouped_skip_padding.cuh"
#include "13_grouped_moe/grouped_swiglu.cuh"
#include "13_grouped_moe/routing.hpp"
#include "gemm/prepared_gemm.hpp"
#include "harness/reference.hpp"

namespace mm::ch13 {

/// grouped_contiguous's kernel (or its masked form, by g's), ready to run: see grouped_contiguous.cuh.
/// What the grouped kernel computes: C_g = A_g·B_gᵀ (steps 1-2); the same skipping padding (the
/// appendix's grouped_skip_padding.cuh, 128-row tiles only); SiLU(gate)·up of interleaved gate+up
/// weights, C half as wide (step 3, grouped_swiglu.cuh).
enum class GroupedVariant { gemm, skip_padding, swiglu };

/// `tile_rows`: 128 (GroupedCfg), 64 (GroupedCfg64, step 2's) or 16 (step 6's grouped_decode: 16 token
/// rows by 64 weight rows, the plain GEMM only); std::invalid_argument otherwise.
PreparedGemm prepare_grouped_gemm(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0,
                                  int tile_rows = 128, GroupedVariant variant = GroupedVariant::gemm);

/// The fp64 reference of step 3 from that of the gate+up GEMM (rows × N, N = 2I interleaved by 128):
/// rows × I values SiLU(gate)·up, and as each one's error scale the first-order bound from the gate's
/// and the up's scales (|SiLU'| ≤ 1.1) plus |h| itself (the rounding of the result).
Reference swiglu_reference(const Reference& gate_up);

/// Step 3's unfused twin: h(r, j) = SiLU(gate)·up of C's row r of the gate+up GEMM (its N = 2I columns,
/// interleaved by 128 as grouped_swiglu.cuh stacks them) into h (rows × I), for the `rows[e]` rows of
/// each expert e from row `first[e]` (both in device memory, E each). On `stream`.
void silu_mul_grouped(const bf16* c, bf16* h, int n, const std::int64_t* first, const std::int64_t* rows, int experts,
                      cudaStream_t stream);

/// What check_grouped_layout found (0: nothing).
enum class GroupedLayoutError : int {
  none = 0,
  first_offset_not_zero,  ///< contiguous: offsets[0] != 0
  end_before_start,       ///< contiguous: an expert's end before its start (offsets[g] rounded up to 128)
  past_the_buffer,        ///< contiguous: the last end past A and C's rows
  negative_count,         ///< masked: a count below 0
  count_above_capacity,   ///< masked: a count above the capacity
};

/// The rule behind an error code of check_grouped_layout, in words ("" for 0).
std::string grouped_layout_error_name(int code);

/// The device's twin of grouped_layout_rejects, for rows per expert the host never sees (a router's
/// counts or offsets written on the device): one block checks the offsets or counts `g` points at and
/// writes the code of the first rule it finds broken into *error (device memory; left as it is when
/// none: zero it first), on `stream`, before the GEMM (a CUDA graph captures both). The grouped kernel
/// itself clamps such rows, so that nothing is read or written outside the buffers; this tells the
/// caller that it had to.
void check_grouped_layout(const GroupedProblem& g, int* error, cudaStream_t stream);

/// What the router made on the device (routing.cuh): each token's k experts and weights, and the
/// rows per expert (copied to the host).
struct Routed {
  std::vector<std::int64_t> rows;  ///< E: tokens routed to each expert
  std::vector<int> ids;            ///< tokens · k: each token's experts, best first
  std::vector<float> weights;      ///< tokens · k: their routing weights (sum 1 per token)
};

/// Routes `tokens` tokens to `topk` of `experts` experts on the device from `seed`. Throws
/// std::invalid_argument for sizes it cannot route (topk above kMaxTopK or the experts a routing
/// leaves active).
Routed route(int tokens, int experts, int topk, Routing routing, std::uint64_t seed);

}  // namespace mm::ch13
