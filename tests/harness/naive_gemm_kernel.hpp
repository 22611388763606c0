// The naive GEMM that test_gemm_groups.cpp runs as the kernel of each of its two groups (bf16, and
// fp32 inputs rounded to tf32): declared here for the C++ test, compiled by nvcc in naive_gemm_kernel.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "gemm/problem.hpp"

namespace mm::test {

/// C = A·B, one thread per element of C, fp32 accumulation (bf16 inputs and output).
void launch_naive_bf16(const GemmProblem& p, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                       cudaStream_t stream);
/// C = A·B with each fp32 input first rounded to tf32, as a tensor core sees it.
void launch_naive_tf32(const GemmProblem& p, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace mm::test
