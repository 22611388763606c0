// Chapter 02's steps (steps.cu): the list the binary runs and the tests iterate, and the chapter's
// best step for chapter 03 to measure against.
#pragma once

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch02 {

/// Every step of the chapter, in the order of the page: naive_strided, naive_coalesced.
std::vector<GemmKernel<float, float>> steps();

/// The chapter's best step, named "ch02_naive_coalesced": what chapter 03 lists first as the step before.
GemmKernel<float, float> best();

}  // namespace mm::ch02
