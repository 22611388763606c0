// Chapter 08's lists of steps (steps.cu): the binary runs them, the tests iterate them, and compiling
// them compiles every kernel they name, once. Two lists, as the binary measures two element types:
// bf16 against cuBLAS bf16, tf32 against cuBLAS tf32. And the chapter's best kernel, for chapter 09.
#pragma once

#include <cuda_bf16.h>

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch08 {

/// The bf16 steps (bf16 A and B, fp32 accumulation, bf16 C), in the page's order: the main path, then
/// (built with MM_APPENDIX_STEPS) the appendix.
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> bf16_steps();

/// The tf32 steps (fp32 A, B and C, the inputs rounded to tf32), in the page's order: the main path,
/// then (built with MM_APPENDIX_STEPS) the appendix.
std::vector<GemmKernel<float, float>> tf32_steps();

/// The chapter's best kernel, no_copy_branch, named "ch08_no_copy_branch": chapter 09 measures against it.
GemmKernel<__nv_bfloat16, __nv_bfloat16> best();

}  // namespace mm::ch08
