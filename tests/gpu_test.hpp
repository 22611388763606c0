// Shared by the GPU test suites: skip (never pass) where there is no GPU, and the size lists and
// test names that several chapters' parameterized GEMM tests have in common.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/cli.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/gemm_runner.hpp"
#include "gemm/problem.hpp"

/// Skips the current test, with the reason, when this machine has no usable CUDA GPU.
#define MM_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (!::mm::device_info().present)                                                 \
      GTEST_SKIP() << "needs a CUDA GPU: " << ::mm::device_info().unavailable;        \
  } while (0)

/// Skips the current test, with the reason, when this GPU (with this build) cannot run code that needs
/// `requirement` (an mm::arch::Requirement such as mm::arch::sm80): "needs sm_90a, this GPU is sm_86".
#define MM_REQUIRE_ARCH(requirement)                                                  \
  do {                                                                                \
    MM_REQUIRE_GPU();                                                                 \
    if (std::string mm_why_ = ::mm::arch::unmet(requirement); !mm_why_.empty())       \
      GTEST_SKIP() << mm_why_;                                                        \
  } while (0)

namespace mm::test {

/// One size of a test list. It is the harness's ProblemSize; being a type of this namespace gives
/// it gtest's printer below (MxNxK) without adding a test-only function to namespace mm.
struct Size : ProblemSize {
  constexpr Size(std::int64_t m_, std::int64_t n_, std::int64_t k_) : ProblemSize{m_, n_, k_} {}
};

/// "31x33x17": M, N and K as they appear in test names and failure messages.
inline std::string size_name(const ProblemSize& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// "31x33x17" for a problem (its storage orders are not part of it: see GemmProblem::layout_tag).
inline std::string size_name(const GemmProblem& p) { return size_name(ProblemSize{p.m, p.n, p.k}); }

/// gtest prints a Size parameter as MxNxK (found by argument-dependent lookup).
inline void PrintTo(const Size& s, std::ostream* os) { *os << size_name(s); }

/// The sizes at which chapters 02 and 03 test every kernel: degenerate (1×1×1), smaller
/// than a warp or a tile, one short of / equal to / one past 32 in every dimension (K too: a partial
/// last K step must load zeros), a single row (1×1000×1000) or column (1000×1×1000) of C, and 1024³
/// for many blocks.
inline const std::vector<Size>& first_gpu_sizes() {
  static const std::vector<Size> sizes = {
      {1, 1, 1}, {7, 13, 5}, {31, 33, 17}, {32, 32, 32}, {33, 65, 129}, {1000, 1, 1000}, {1, 1000, 1000},
      {1024, 1024, 1024},
  };
  return sizes;
}

/// The sizes around the 128×128×8 block tile of chapters 05 and 06: degenerate (1×1×1), smaller than
/// a tile in every direction, one short of a tile with a partial K step, exactly one tile (no
/// predicated path at all), one past a tile with a partial K step, and 1024³ for many blocks.
inline const std::vector<Size>& tile128_sizes() {
  static const std::vector<Size> sizes = {
      {1, 1, 1}, {17, 33, 9}, {127, 129, 65}, {128, 128, 8}, {129, 257, 33}, {1024, 1024, 1024},
  };
  return sizes;
}

/// A tall C, 1,000,000×64 (K = 64): more rows than grid y holds blocks of 8, where the harness's
/// fp64 reference used to fail to launch; and the same transposed, a wide C. Each is one 256 MB
/// matrix A (or B) and C: about a second per check.
inline constexpr Size tall_size{1000000, 64, 64};
/// See tall_size.
inline constexpr Size wide_size{64, 1000000, 64};

/// The problem of size `s` stored as `layout_tag` says ("RCR": A row-major, B column-major, C row-major).
inline GemmProblem problem(const ProblemSize& s, const std::string& layout_tag = "RRR") {
  return make_problem(s, layout_tag);
}

/// The host launcher of an fp32 GEMM kernel: C = A·B on a stream, sizes and storage orders from the problem.
using GemmLaunchFn = void (*)(const GemmProblem&, const float*, const float*, float*, cudaStream_t);

/// An fp32 GEMM kernel as a parameterized test takes it: the name ctest shows, and its launcher.
struct NamedKernel {
  const char* name;     ///< "tiled_prefetch"
  GemmLaunchFn launch;  ///< the chapter's host launch function
};

/// gtest prints a NamedKernel parameter as its name.
inline void PrintTo(const NamedKernel& k, std::ostream* os) { *os << k.name; }

/// Runs `kernel` (anything with a `name` and an fp32 `launch`) once at `p` on random inputs, output
/// poisoned first, and expects it to match the fp64 reference (the harness's check_gemm_kernel). A
/// failure names the kernel, the storage orders and the size.
template <class Kernel>
void expect_matches_fp64(const Kernel& kernel, const GemmProblem& p, std::uint64_t seed = 1) {
  const CheckResult r = check_gemm_kernel<float, float>(p, kernel.launch, DType::f32, seed);
  EXPECT_TRUE(r.ok) << kernel.name << " " << p.layout_tag() << " at " << size_name(p) << ": " << r.summary;
}

/// The launcher `inner` (a step's launch, or a launch function) run on copies of A and B that start
/// one float past a 16-byte boundary (cudaMalloc's 256-byte alignment + 4 bytes): a kernel must
/// notice and take its unaligned path, where a 16-byte access would fault.
inline GemmLaunch<float, float> shifted_by_one_float(GemmLaunch<float, float> inner) {
  return [inner](const GemmProblem& p, const float* a, const float* b, float* c, cudaStream_t s) {
    const std::size_t na = std::size_t(p.m * p.k), nb = std::size_t(p.k * p.n);
    DeviceBuffer<float> a1(na + 1), b1(nb + 1);
    MM_CUDA_CHECK(cudaMemcpyAsync(a1.data() + 1, a, na * sizeof(float), cudaMemcpyDeviceToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(b1.data() + 1, b, nb * sizeof(float), cudaMemcpyDeviceToDevice, s));
    inner(p, a1.data() + 1, b1.data() + 1, c, s);
    MM_CUDA_CHECK(cudaStreamSynchronize(s));  // before the scratch buffers are freed
  };
}

/// For the CPU emulations of a kernel's block function: random A and B in host memory, `shift` floats
/// past a 16-byte boundary, C poisoned with NaN; `run(A, B, C)` computes C, which is compared with a
/// double-precision product element by element (fp32 tolerance relative to Σ|a·b|). Returns an empty
/// string when every element matches, else the first wrong one.
inline std::string run_on_host_and_check(const GemmProblem& p, int shift,
                                         const std::function<void(const float*, const float*, float*)>& run) {
  const MatrixShape sa = p.shape_a(), sb = p.shape_b(), sc = p.shape_c();
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // Over-allocated by 4 floats so that `shift` can move the start off a 16-byte boundary.
  std::vector<float> a_buf(std::size_t(sa.size() + 4)), b_buf(std::size_t(sb.size() + 4));
  for (float& x : a_buf) x = dist(gen);
  for (float& x : b_buf) x = dist(gen);
  std::vector<float> c(std::size_t(sc.size()), std::numeric_limits<float>::quiet_NaN());
  const float* A = a_buf.data() + shift;
  const float* B = b_buf.data() + shift;
  run(A, B, c.data());
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double want = 0, scale = 0;
      for (std::int64_t k = 0; k < p.k; ++k) {
        const double t = double(A[sa.offset(i, k)]) * double(B[sb.offset(k, j)]);
        want += t, scale += std::fabs(t);
      }
      const float got = c[std::size_t(sc.offset(i, j))];
      if (!(std::fabs(double(got) - want) <= 1e-5 * scale + 1e-30))
        return "C(" + std::to_string(i) + "," + std::to_string(j) + ") = " + std::to_string(got) + ", want " +
               std::to_string(want);
    }
  return "";
}

/// One part of a test name: a size as size_name, a kernel (anything with a `name`) as its name,
/// a layout tag ("RCR") as itself.
template <class T>
std::string name_part(const T& part) {
  if constexpr (std::is_convertible_v<const T&, const ProblemSize&>) return size_name(part);
  else if constexpr (requires { part.name; }) return std::string(part.name);
  else return std::string(part);
}

/// gtest's name generator for these parameters: the parts of a tuple joined by '_', so that ctest
/// lists "tiled_prefetch_RCR_129x257x33" (kernel, storage orders, size) or "naive_strided_31x33x17".
/// An object rather than a function template, so that INSTANTIATE_TEST_SUITE_P can take it as it is.
struct ParamName {
  template <class T>
  std::string operator()(const ::testing::TestParamInfo<T>& info) const {
    if constexpr (requires { std::tuple_size<T>::value; })
      return std::apply([](const auto&... part) { return join(name_part(part)...); }, info.param);
    else return name_part(info.param);
  }

 private:
  template <class... S>
  static std::string join(const std::string& first, const S&... rest) {
    std::string name = first;
    ((name += "_" + rest), ...);
    return name;
  }
};
inline constexpr ParamName param_name{};

/// A step of a chapter's list (its steps.cu) at `p`: it must take the problem (its `rejects` says
/// nothing), and its result on random inputs, output poisoned first, must match the fp64 reference
/// within the tolerance of how it multiplies (the step's dtype). A failure names the step, the
/// storage orders and the size.
template <class TIn, class TOut>
void expect_matches_fp64(const GemmKernel<TIn, TOut>& step, const GemmProblem& p, std::uint64_t seed = 1) {
  if (step.rejects) {
    ASSERT_EQ(step.rejects(p), "") << step.name << " " << p.layout_tag() << " " << size_name(p);
  }
  const CheckResult r = check_gemm_kernel<TIn, TOut>(p, step.launch, step.dtype, seed);
  EXPECT_TRUE(r.ok) << step.name << " " << p.layout_tag() << " at " << size_name(p) << ": " << r.summary;
}

/// The step called `name` in a chapter's list (the harness's kernel_named); fails the test (and
/// returns the first step) when there is none, so that a renamed step cannot silently drop a test.
template <class TIn, class TOut>
GemmKernel<TIn, TOut> step_named(const std::vector<GemmKernel<TIn, TOut>>& steps, const std::string& name) {
  try {
    return kernel_named(steps, name);
  } catch (const std::logic_error& e) {
    ADD_FAILURE() << e.what();
    return steps.front();
  }
}

}  // namespace mm::test

namespace mm {
/// gtest prints a step (a parameter of the chapters' tests) as its name.
template <class TIn, class TOut>
void PrintTo(const GemmKernel<TIn, TOut>& step, std::ostream* os) {
  *os << step.name;
}
}  // namespace mm
