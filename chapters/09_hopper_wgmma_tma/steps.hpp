// Chapter 09's steps (steps.cu holds the list): the binary runs them, the tests check them.
#pragma once

#include <cuda_bf16.h>

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch09 {

/// The chapter's steps in the order of its page (with MM_APPENDIX_STEPS, its measured dead ends after them).
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> steps();

/// The chapter's best step, named "ch09_<step>": what chapter 10 measures itself against.
GemmKernel<__nv_bfloat16, __nv_bfloat16> best();

}  // namespace mm::ch09
