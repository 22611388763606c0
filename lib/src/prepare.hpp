// The library's one door into the chapters: for each dtype, the finished kernel's preparation
// (chapters 11 and 12 call it `prepare_<step>`), and for chapter 12's kernels their rules, which need
// no GPU. prepare_steps.cpp takes chapters 11's and 12's from their step lists (compiled once, in the
// chapters' step libraries); prepare_grouped.cu calls chapter 13's prepare_grouped_gemm (its kernels
// compiled once, in ch13_steps' steps.cu). Both, and gemm_ladder.cpp, hold no kernel: plain C++.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gemm/prepared_gemm.hpp"
#include "gemm/problem.hpp"

namespace gl::detail {

/// every_shape (chapter 11) for `p`: throws std::invalid_argument (a problem or pointer it refuses,
/// with its one line) or std::runtime_error (the GPU, an allocation), as the chapter does.
mm::PreparedGemm prepare_bf16(const mm::GemmProblem& p, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c);

/// Chapter 12's tf32: tf32_wgmma for RCR, tf32_transpose_b (B transposed into a workspace first) for RRR.
mm::PreparedGemm prepare_tf32(const mm::GemmProblem& p, const float* a, const float* b, float* c);
/// Empty when prepare_tf32 takes `p`; otherwise "<step>: <rule>". No GPU needed.
std::string tf32_rejects(const mm::GemmProblem& p);

/// Chapter 12's fp8_per_tensor_small_m (p.scale_a, p.scale_b: one float each): fp8_per_tensor, or its
/// split-K plans for few rows.
mm::PreparedGemm prepare_fp8_per_tensor(const mm::GemmProblem& p, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b,
                                        __nv_bfloat16* c);
/// Empty when prepare_fp8_per_tensor takes `p`; otherwise "fp8_per_tensor: <rule>". No GPU needed.
std::string fp8_per_tensor_rejects(const mm::GemmProblem& p);

/// Chapter 12's fp8_block_scaled_small_m (p.scale_a, p.scale_b: the block scales, GemmProblem::scale_a):
/// fp8_block_scaled, or its split-K plans for few rows.
mm::PreparedGemm prepare_fp8_block_scaled(const mm::GemmProblem& p, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b,
                                          __nv_bfloat16* c);
/// Empty when prepare_fp8_block_scaled takes `p`; otherwise "fp8_block_scaled: <rule>". No GPU needed.
std::string fp8_block_scaled_rejects(const mm::GemmProblem& p);

/// A grouped GEMM as the library takes it (chapter 13's GroupedProblem, without its header: that one
/// holds the kernel and compiles only as CUDA). Contiguous: `offsets` (E + 1, device) set, `counts`
/// null; masked: `counts` (E, device) and `capacity` set, `offsets` null. `swiglu`: step 3's epilogue
/// (grouped_swiglu.cuh), C = SiLU(gate)·up of B's gate and up rows interleaved by 128, N / 2 columns
/// (contiguous only; `n` is the gate+up GEMM's, 2I).
struct Grouped {
  int groups = 0;
  int n = 0, k = 0;
  std::int64_t rows = 0;
  const std::int64_t* offsets = nullptr;
  const int* counts = nullptr;
  std::int64_t capacity = 0;
  bool swiglu = false;
};

/// Empty when chapter 13's grouped kernel takes `g`; otherwise "grouped_<layout>: <rule>". No GPU needed.
std::string grouped_rejects(const Grouped& g);
/// Empty when the host's copy of g's layout (E + 1 offsets or E counts, as g's form says) describes
/// experts the kernel can walk inside A and C; otherwise "grouped_<layout>: <what is wrong>". No GPU needed.
std::string grouped_layout_rejects(const Grouped& g, const std::int64_t* host_offsets, const int* host_counts);
/// Chapter 13's grouped_contiguous (or grouped_masked) with tiles of `tile_rows` (128, 64 or 16: step 6's
/// grouped_decode) rows; with g.swiglu, grouped_swiglu (step 3: 128 or 64 rows, std::invalid_argument for 16).
mm::PreparedGemm prepare_grouped(const Grouped& g, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                                 int tile_rows);

}  // namespace gl::detail
