/// @file gemm_runner.hpp
/// @brief Runs a chapter's GEMM kernels next to cuBLAS: parse the command line, check, time, print, write the CSV.
///
/// A chapter's `main` lists its kernels and calls run_gemm_chapter:
/// @code
/// int main(int argc, char** argv) {
///   return mm::run_gemm_chapter<float, float>(argc, argv, chapter, {
///       {"coalesced", mm::DType::f32, launch_coalesced}});
/// }
/// @endcode
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/cli.hpp"
#include "harness/dtype.hpp"
#include "harness/problem.hpp"
#include "harness/reference.hpp"

namespace mm {

/// @brief Launches a kernel on `stream` for problem `p`; A, B and C are device pointers in the problem's storage orders.
template <class TIn, class TOut>
using GemmLaunch = std::function<void(const GemmProblem& p, const TIn* a, const TIn* b, TOut* c, cudaStream_t stream)>;

/// @brief One kernel of a chapter.
template <class TIn, class TOut>
struct GemmKernel {
  std::string name;                 ///< what --kernel selects and the table shows
  DType dtype = DType::f32;         ///< how it multiplies: sets the tolerance
  GemmLaunch<TIn, TOut> launch;     ///< runs it once
  /// @brief Empty when the kernel takes `p`; otherwise a one-line reason naming the constraint (e.g. "needs K % 8 == 0").
  /// Left out, it is empty: every problem is taken. (No `= {}` here: with it, GCC 12 crashes on a
  /// GemmKernel list-initialized in a return statement or inside a GemmKernelGroup's braces.)
  std::function<std::string(const GemmProblem& p)> rejects;
  arch::Requirement needs = arch::any;  ///< the architecture it needs: arch::sm80 (cp.async, mma.sync), arch::sm90a (wgmma)
};

/// @brief A chapter's description and defaults.
struct GemmChapter {
  std::string chapter;                      ///< "02_naive_gpu": the CSV's chapter column
  std::string description;                  ///< one line for --help
  std::vector<ProblemSize> default_sizes;   ///< sizes run unless the command line says otherwise
  std::vector<std::string> layouts = {"RRR"};  ///< storage orders the kernels take; the first is the default
  int default_reps = 20;                    ///< timed runs unless --reps says otherwise
  int default_warmup = 5;                   ///< warm-up runs unless --warmup says otherwise
  DType baseline = DType::f32;              ///< how cuBLAS multiplies (fp32 SGEMM, tf32, bf16)
  std::function<void(CLI::App&)> extra;     ///< chapter-specific flags
  arch::Requirement needs = arch::any;      ///< what every kernel of the chapter needs: without it the chapter is skipped
};

/// @brief Turns a layout tag ("RCR": A row-major, B column-major, C row-major) into a problem. Throws CliError on a bad tag.
GemmProblem make_problem(const ProblemSize& size, const std::string& layout_tag);

/// @brief The chapter driver. Returns the process exit code: 0 when every kernel passed its check,
/// 1 when one failed, 2 for bad input (after a one-line message); a machine without a GPU, or whose GPU
/// (with this build) lacks what the chapter needs, is a clean skip (a one-line message, exit 0).
template <class TIn, class TOut>
int run_gemm_chapter(int argc, const char* const* argv, const GemmChapter& chapter,
                     const std::vector<GemmKernel<TIn, TOut>>& kernels);

/// @brief For tests: runs `launch` once on random inputs (output poisoned first) and compares with the fp64 reference.
template <class TIn, class TOut>
CheckResult check_gemm_kernel(const GemmProblem& p, const GemmLaunch<TIn, TOut>& launch, DType dtype,
                              std::uint64_t seed = 1);

/// @brief The per-element tolerance for a kernel multiplying as `dtype` and storing TOut, relative
/// to sum_k |a_ik * b_kj|: elementwise_tolerance, plus one rounding of a 16-bit output.
///
/// A bf16 C is the fp32 result rounded to 8 significant bits: off by at most 2^-9·|c| rounded to
/// nearest, 2^-8·|c| truncated (fp16: 2^-11, 2^-10), and |c| ≤ sum|ab|. 8e-3 is 2× the truncated
/// bf16 bound. Without it, the 1e-5 of bf16 inputs alone fails a correctly rounded bf16 C
/// (tests/harness/test_check.cu).
template <class TOut>
constexpr double gemm_tolerance(DType dtype) {
  return elementwise_tolerance(dtype) + (sizeof(TOut) == 2 ? 8e-3 : 0.0);
}

}  // namespace mm
