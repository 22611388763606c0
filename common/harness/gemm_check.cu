// What the tests need from the GEMM driver, kept out of gemm_runner.cu: a test binary that links only
// these does not link the driver, which times cuBLAS. (cuBLAS itself is loaded on its first call
// wherever it is linked: harness/cublas_on_demand.cpp.)
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"

#include <type_traits>

namespace mm {

GemmProblem make_problem(const ProblemSize& s, const std::string& tag) {
  auto order = [&](char ch) {
    if (ch == 'R') return Order::row;
    if (ch == 'C') return Order::col;
    throw CliError("error: --layout: '" + tag + "' is not three letters R or C", 2);
  };
  if (tag.size() != 3) throw CliError("error: --layout: '" + tag + "' is not three letters R or C", 2);
  return GemmProblem{s.m, s.n, s.k, order(tag[0]), order(tag[1]), order(tag[2])};
}

template <class TIn, class TOut>
CheckResult check_gemm_kernel(const GemmProblem& problem, const GemmLaunch<TIn, TOut>& launch, DType dtype,
                              std::uint64_t seed, OperandScales scales) {
  GemmProblem p = problem;
  DeviceBuffer<TIn> a(p.m * p.k), b(p.k * p.n);
  DeviceBuffer<TOut> c(p.m * p.n);
  constexpr bool fp8 = std::is_same_v<TIn, __nv_fp8_e4m3>;
  DeviceScales device_scales;
  if constexpr (fp8) {
    if (dtype == DType::e4m3_block) device_scales.set(p, random_block_scales(p, seed + 2));
    else device_scales.set(p, scales);
  }
  fill_random(a, seed);
  fill_random(b, seed + 1);
  poison(c);
  launch(p, a.data(), b.data(), c.data(), nullptr);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  Reference ref;
  if constexpr (fp8) ref = fp8_reference(p, a, b, dtype, scales);
  else ref = reference_gemm(p, a, b);
  return check_gemm(ref, c.download(), p.c, gemm_tolerance<TOut>(dtype));
}

#define MM_INSTANTIATE_CHECK(TIn, TOut)                                                              \
  template CheckResult check_gemm_kernel<TIn, TOut>(const GemmProblem&, const GemmLaunch<TIn, TOut>&, \
                                                    DType, std::uint64_t, OperandScales);
MM_INSTANTIATE_CHECK(float, float)
MM_INSTANTIATE_CHECK(__nv_bfloat16, float)
MM_INSTANTIATE_CHECK(__nv_bfloat16, __nv_bfloat16)
MM_INSTANTIATE_CHECK(__half, float)
MM_INSTANTIATE_CHECK(__half, __half)
MM_INSTANTIATE_CHECK(__nv_fp8_e4m3, __nv_bfloat16)
#undef MM_INSTANTIATE_CHECK

}  // namespace mm
