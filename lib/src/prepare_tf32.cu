// tf32: chapter 12's steps, the best for each storage order (its steps.cu): tf32_wgmma reads both
// operands K-major (RCR); a row-major B (RRR) goes through tf32_transpose_b, which transposes B into a
// workspace (owned by the prepared GEMM, so cached per stream with it) and then runs tf32_wgmma.
#include "prepare.hpp"

#include "12_hopper_datatypes/tf32_transpose_b.cuh"
#include "12_hopper_datatypes/tf32_wgmma.cuh"

namespace gl::detail {

std::string tf32_rejects(const mm::GemmProblem& p) {
  if (p.b == mm::Order::col) {
    if (std::string why = mm::ch12::tf32_wgmma_rejects(p); !why.empty()) return "tf32_wgmma: " + why;
  } else if (std::string why = mm::ch12::tf32_transpose_b_rejects(p); !why.empty()) {
    return "tf32_transpose_b: " + why;
  }
  return {};
}

mm::PreparedGemm prepare_tf32(const mm::GemmProblem& p, const float* a, const float* b, float* c) {
  if (p.b == mm::Order::col) return mm::ch12::prepare_tf32_wgmma(p, a, b, c);
  return mm::ch12::prepare_tf32_transpose_b(p, a, b, c);
}

}  // namespace gl::detail
