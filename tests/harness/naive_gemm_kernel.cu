// The naive GEMM kernel of test_gemm_groups.cpp, apart so that the test is compiled as C++ (g++) and
// only this kernel by nvcc (the test file's 15 s of nvcc in a quick build; notes/ci_plan.md, helper hci2).
#include "naive_gemm_kernel.hpp"

#include <cstdint>

#include "harness/dtype.hpp"

namespace mm::test {
namespace {

// One thread per element of C, fp32 accumulation; with kTf32 each input is first rounded to tf32,
// as a tensor core sees it.
template <class TIn, class TOut, bool kTf32>
__global__ void naive_kernel(mm::GemmProblem p, const TIn* a, const TIn* b, TOut* c) {
  const std::int64_t i = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y;
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= p.m || j >= p.n) return;
  const mm::MatrixShape sa = p.shape_a(), sb = p.shape_b(), sc = p.shape_c();
  float acc = 0.0f;
  for (std::int64_t kk = 0; kk < p.k; ++kk) {
    float x = float(a[sa.offset(i, kk)]), y = float(b[sb.offset(kk, j)]);
    if constexpr (kTf32) x = mm::round_to_tf32(x), y = mm::round_to_tf32(y);
    acc += x * y;
  }
  c[sc.offset(i, j)] = TOut(acc);
}

template <class TIn, class TOut, bool kTf32>
void launch_naive(const mm::GemmProblem& p, const TIn* a, const TIn* b, TOut* c, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid(unsigned((p.n + 15) / 16), unsigned((p.m + 15) / 16));
  naive_kernel<TIn, TOut, kTf32><<<grid, block, 0, stream>>>(p, a, b, c);
}

}  // namespace

void launch_naive_bf16(const GemmProblem& p, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                       cudaStream_t stream) {
  launch_naive<__nv_bfloat16, __nv_bfloat16, false>(p, a, b, c, stream);
}

void launch_naive_tf32(const GemmProblem& p, const float* a, const float* b, float* c, cudaStream_t stream) {
  launch_naive<float, float, true>(p, a, b, c, stream);
}

}  // namespace mm::test
