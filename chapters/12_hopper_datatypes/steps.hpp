// Chapter 12's steps (steps.cu holds the lists): the binary runs them, the tests check them. One list
// per element type, each measured against the cuBLAS (or cuBLASLt) GEMM of the same types.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch12 {

/// The tf32 steps (fp32 A, B and C, multiplied as tf32), in the order of the page.
std::vector<GemmKernel<float, float>> tf32_steps(int max_blocks = 0);

/// The fp8 steps with per-tensor scales (e4m3 A and B, bf16 C; DType::e4m3), in the order of the page.
std::vector<GemmKernel<__nv_fp8_e4m3, __nv_bfloat16>> fp8_steps(int max_blocks = 0);

/// The fp8 steps with DeepSeek-V3's block scales (DType::e4m3_block), in the order of the page.
std::vector<GemmKernel<__nv_fp8_e4m3, __nv_bfloat16>> fp8_block_steps(int max_blocks = 0);

/// fp8_block_scaled_small_m with its plan forced instead of chosen (the tests): bm×bn tiles, 64×256,
/// 64×128 or 128×128 with K in `splits` slices (at least 1; fewer where K has fewer blocks), or whole
/// 128×256 tiles; another plan is refused at launch. Named "fp8_block_scaled_small_m_<bm>x<bn>_x<splits>".
GemmKernel<__nv_fp8_e4m3, __nv_bfloat16> fp8_block_scaled_small_m_with(int bm, int bn, int splits, int max_blocks = 0);

/// fp8_per_tensor_small_m with its plan forced (the tests), as fp8_block_scaled_small_m_with. Named
/// "fp8_per_tensor_small_m_<bm>x<bn>_x<splits>".
GemmKernel<__nv_fp8_e4m3, __nv_bfloat16> fp8_per_tensor_small_m_with(int bm, int bn, int splits, int max_blocks = 0);

}  // namespace mm::ch12
