// Chapter 06's steps (steps.cu): the list that the binary runs and the tests iterate, and the best
// step, which chapter 07 measures next to its own.
#pragma once

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch06 {

/// The chapter's steps in the order of the page: tiled_ldg128, tiled_ldg128_pad4, tiled_vec128,
/// tiled_vec128_uncoalesced, tiled_prefetch; built with MM_APPENDIX_STEPS, also the appendix's
/// tiled_prefetch_pairs_share_a.
std::vector<GemmKernel<float, float>> steps();

/// The chapter's best step, named "ch06_tiled_prefetch": what chapter 07 starts from.
GemmKernel<float, float> best();

}  // namespace mm::ch06
