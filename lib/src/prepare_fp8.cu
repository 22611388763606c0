// fp8 e4m3: chapter 12's steps (its steps.cu), per-tensor scales (step 5, fp8_per_tensor_small_m:
// fp8_per_tensor, with K split and 64-row tiles for few rows) and DeepSeek-V3's block scales (step 4,
// fp8_block_scaled_small_m: the same for fp8_block_scaled). Both read A and B K-major only (RCR), as
// cuBLASLt's fp8 does.
#include "prepare.hpp"

#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"
#include "12_hopper_datatypes/fp8_per_tensor_small_m.cuh"

namespace gl::detail {

std::string fp8_per_tensor_rejects(const mm::GemmProblem& p) {
  if (std::string why = mm::ch12::fp8_per_tensor_rejects(p); !why.empty()) return "fp8_per_tensor: " + why;
  return {};
}

mm::PreparedGemm prepare_fp8_per_tensor(const mm::GemmProblem& p, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b,
                                        __nv_bfloat16* c) {
  return mm::ch12::prepare_fp8_per_tensor_small_m(p, a, b, c);  // fp8_per_tensor where the tiles fill the GPU
}

std::string fp8_block_scaled_rejects(const mm::GemmProblem& p) {
  if (std::string why = mm::ch12::fp8_block_scaled_rejects(p); !why.empty()) return "fp8_block_scaled: " + why;
  return {};
}

mm::PreparedGemm prepare_fp8_block_scaled(const mm::GemmProblem& p, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b,
                                          __nv_bfloat16* c) {
  return mm::ch12::prepare_fp8_block_scaled_small_m(p, a, b, c);  // fp8_block_scaled where the tiles fill the GPU
}

}  // namespace gl::detail
