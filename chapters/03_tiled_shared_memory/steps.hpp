// Chapter 03's steps (steps.cu): the list the binary runs and the tests iterate, and the chapter's
// best step for the chapters after it to measure against.
#pragma once

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch03 {

/// Every step of the chapter, in the order of the page: chapter 02's best (ch02_naive_coalesced,
/// the step before, measured in the same run), tiled_16, tiled_32.
std::vector<GemmKernel<float, float>> steps();

/// The chapter's best step, named "ch03_tiled_32".
GemmKernel<float, float> best();

}  // namespace mm::ch03
