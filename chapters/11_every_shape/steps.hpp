// Chapter 11's steps (steps.cu holds the list): the binary runs them, the tests check them.
#pragma once

#include <cuda_bf16.h>

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch11 {

/// The chapter's steps in the order of its page (with MM_APPENDIX_STEPS, the tiles forced one by one
/// and the other measured variants after them).
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> steps();

/// The steps on a grid of at most `max_blocks` blocks, so that each block loops over many units on
/// any GPU: what the tests of the unit loop use. `splits` > 0 forces that many K slices on split_k
/// and swap_ab (the tests' deep-K, many-slice cases).
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> steps_on_grid(int max_blocks, int splits = 0);

/// The chapter's best: every_shape, named "ch11_every_shape".
GemmKernel<__nv_bfloat16, __nv_bfloat16> best();

enum class RaggedForm;  // ragged_decode.cuh

/// ragged_decode's kernels in the given form at any shape (ragged_decode.cuh's prepare_ragged_decode_form),
/// compiled here once for the tests that force each form.
PreparedGemm ragged_decode_form(const GemmProblem& p, const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                RaggedForm form);

}  // namespace mm::ch11
