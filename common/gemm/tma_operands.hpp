// The TMA copies of a wgmma kernel's operands, built once per problem on the host: shared by the
// chapters whose kernels read A (M×K) and B (N×K) both K-major, the RCR problem C = A·Bᵀ.
#pragma once

#include "gemm/problem.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "layout/copy_traits_sm90_tma.hpp"

namespace mm {

/// A's and B's TMA copies for an RCR problem (element type T: bf16, fp32 for tf32, e4m3), both
/// (rows, K) with K contiguous, into the stages of `Params::Storage::RingA` and `RingB`; rows `pitch`
/// elements apart (0: K, the rows packed). Throws std::invalid_argument when TMA cannot describe an
/// operand (a pointer or pitch not 16-byte aligned).
template <class Params, class T>
void make_rcr_operand_copies(Params& params, const GemmProblem& p, const T* A, const T* B, std::int64_t pitch = 0) {
  using Storage = typename Params::Storage;
  const int m = int(p.m), n = int(p.n), k = int(p.k), ld = int(pitch > 0 ? pitch : p.k);
  params.tma_a = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(A, make_layout(make_shape(m, k), make_stride(ld, _1{}))),
                               GmmaStage<typename Storage::RingA>{});
  params.tma_b = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(ld, _1{}))),
                               GmmaStage<typename Storage::RingB>{});
}

}  // namespace mm
