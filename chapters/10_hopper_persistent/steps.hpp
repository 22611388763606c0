// Chapter 10's steps (steps.cu holds the list): the binary runs them, the tests check them.
#pragma once

#include <cuda_bf16.h>

#include <vector>

#include "harness/gemm_runner.hpp"

namespace mm::ch10 {

/// The chapter's steps in the order of its page (with MM_APPENDIX_STEPS, its measured dead ends after them).
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> steps();

/// The persistent steps (persistent, tma_store, cluster_multicast) on a grid of at most `max_blocks`
/// blocks, so that each block loops over many tiles on any GPU: what the tests of the tile loop use.
std::vector<GemmKernel<__nv_bfloat16, __nv_bfloat16>> persistent_steps_on_grid(int max_blocks);

/// The chapter's best step, named "ch10_<step>": what chapter 11 measures itself against.
GemmKernel<__nv_bfloat16, __nv_bfloat16> best();

}  // namespace mm::ch10
