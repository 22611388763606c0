// Chapter 07's steps (steps.cu): the list that the binary runs and the tests iterate, and the best
// step, which the next chapters' comparisons (ch06_sizes) measure.
#pragma once

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch07 {

/// The chapter's steps in the order of the page: pipelined_s2, pipelined_s4, warp_tiled, swizzled,
/// fragment_pipelined, deep_k, big_tile, register_transpose; built with MM_APPENDIX_STEPS, also the
/// appendix's pipelined_s3 (after pipelined_s2). All need sm_80 (cp.async).
std::vector<GemmKernel<float, float>> steps();

/// The chapter's best step, named "ch07_deep_k".
GemmKernel<float, float> best();

}  // namespace mm::ch07
