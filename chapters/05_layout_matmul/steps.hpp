// Chapter 05's steps (steps.cu): the list that the binary runs and the tests iterate, and the best
// step, which chapter 06 measures next to its own.
#pragma once

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch05 {

/// The chapter's steps in the order of the page: blocktile_1d, layout_unpadded, layout_padded.
std::vector<GemmKernel<float, float>> steps();

/// The chapter's best step, named "ch05_layout_padded": what chapter 06 starts from.
GemmKernel<float, float> best();

}  // namespace mm::ch05
