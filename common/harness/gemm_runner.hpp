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
///
/// A chapter whose kernels take several input types (bf16 and tf32 tensor-core kernels side by side)
/// passes one GemmKernelGroup per type; each group is measured against the cuBLAS of its own type,
/// and all rows land in one table and one CSV:
/// @code
///   return mm::run_gemm_chapter(argc, argv, chapter,
///       mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.baseline = mm::DType::bf16, .kernels = {...}},
///       mm::GemmKernelGroup<float, float>{.baseline = mm::DType::tf32, .kernels = {...}});
/// @endcode
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/cli.hpp"
#include "harness/dtype.hpp"
#include "gemm/prepared_gemm.hpp"
#include "gemm/problem.hpp"
#include "harness/fp8_scales.hpp"  // OperandScales
#include "harness/reference.hpp"

namespace mm {

/// @brief Launches a kernel on `stream` for problem `p`; A, B and C are device pointers in the problem's storage orders.
template <class TIn, class TOut>
using GemmLaunch = std::function<void(const GemmProblem& p, const TIn* a, const TIn* b, TOut* c, cudaStream_t stream)>;

/// @brief The one-time preparation of a kernel for problem `p` and these buffers (tensor maps, the
/// shared-memory opt-in): done once, outside the timed region; returns what runs the kernel on a stream
/// and the name of the path that runs (PreparedGemm: a plain lambda converts to one, its path the
/// kernel's name), which the CSV's `path` column records.
template <class TIn, class TOut>
using GemmPrepare = std::function<PreparedGemm(const GemmProblem& p, const TIn* a, const TIn* b, TOut* c)>;

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
  /// @brief Set for a kernel with per-problem preparation (chapter 09's tensor maps): the driver calls
  /// it once per problem, outside the timed region, and times what it returns; `launch` is then unused
  /// by the driver (tests may still call it).
  GemmPrepare<TIn, TOut> prepare;
};

/// @brief A kernel prepared once per problem (tensor maps, the shared-memory opt-in): the driver
/// times what `prepare` returns; `launch` prepares and runs once (tests).
template <class TIn, class TOut>
GemmKernel<TIn, TOut> prepared_kernel(std::string name, DType dtype, GemmPrepare<TIn, TOut> prepare,
                                      std::function<std::string(const GemmProblem&)> rejects, arch::Requirement needs) {
  GemmKernel<TIn, TOut> k{.name = std::move(name), .dtype = dtype, .launch = {}, .rejects = std::move(rejects),
                          .needs = needs, .prepare = prepare};
  k.launch = [prepare](const GemmProblem& p, const TIn* a, const TIn* b, TOut* c, cudaStream_t stream) {
    prepare(p, a, b, c)(stream);
  };
  return k;
}

/// @brief The kernel called `name` in a chapter's list, renamed `rename` when that is not empty (a
/// chapter's best step as the next chapter shows it: "ch09_wgmma_in_flight"). Throws
/// std::logic_error when the list has no such kernel.
template <class TIn, class TOut>
GemmKernel<TIn, TOut> kernel_named(const std::vector<GemmKernel<TIn, TOut>>& kernels, const std::string& name,
                                   const std::string& rename = {}) {
  for (const auto& k : kernels)
    if (k.name == name) {
      GemmKernel<TIn, TOut> found = k;
      if (!rename.empty()) found.name = rename;
      return found;
    }
  throw std::logic_error("no kernel called " + name + " in the list");
}

/// @brief A chapter's description and defaults.
struct GemmChapter {
  std::string chapter;                      ///< "02_naive_gpu": the CSV's chapter column
  std::string description;                  ///< one line for --help
  std::vector<ProblemSize> default_sizes;   ///< sizes run unless the command line says otherwise
  std::vector<std::string> layouts = {"RRR"};  ///< storage orders the kernels take; the first is the default
  int default_reps = 20;                    ///< timed runs unless --reps says otherwise
  int default_warmup = 5;                   ///< warm-up runs unless --warmup says otherwise
  /// @brief How cuBLAS multiplies (fp32 SGEMM, tf32, bf16) for the single-group run_gemm_chapter;
  /// the several-group form ignores it, as each GemmKernelGroup names its own baseline.
  DType baseline = DType::f32;
  arch::Requirement needs = arch::any;      ///< what every kernel of the chapter needs: without it the chapter is skipped
};

/// @brief Turns a layout tag ("RCR": A row-major, B column-major, C row-major) into a problem. Throws CliError on a bad tag.
GemmProblem make_problem(const ProblemSize& size, const std::string& layout_tag);

/// @brief Kernels of one element type measured against one cuBLAS baseline of that type.
///
/// At every size and storage order the group gets its own A and B (the same random values as every
/// other group, converted to TIn), its own fp64 reference, and its own cuBLAS row ("cuBLAS", dtype
/// column = `baseline`); its kernels' `% of cuBLAS` is against that row.
template <class TIn, class TOut>
struct GemmKernelGroup {
  /// @brief How cuBLAS multiplies: f32 (SGEMM), tf32 (fp32 in and out, CUBLAS_COMPUTE_32F_FAST_TF32),
  /// bf16 or f16 (16-bit inputs, fp32 accumulation, C stored as TOut). Usually the kernels' dtype;
  /// it must read TIn (f32 or tf32 for float, bf16 for __nv_bfloat16, f16 for __half), else the run
  /// stops with exit 2.
  DType baseline = dtype_of<TIn>();
  std::vector<GemmKernel<TIn, TOut>> kernels;  ///< in the order the table shows them
  /// @brief Other cuBLAS baselines of the same inputs, timed after `baseline` for the record (rows
  /// "cuBLAS_<dtype>", their `% of cuBLAS` against `baseline`): chapter 12 shows cuBLASLt's fp8 with
  /// and without fast accumulation, and measures its kernels against the one that adds as they do.
  std::vector<DType> also_measure = {};
};

/// @brief True for a GemmKernelGroup (what the several-group run_gemm_chapter takes).
template <class T> inline constexpr bool is_gemm_kernel_group = false;
/// @cond SPECIALIZATIONS
template <class TIn, class TOut> inline constexpr bool is_gemm_kernel_group<GemmKernelGroup<TIn, TOut>> = true;
/// @endcond

/// @brief One cuBLAS baseline of a run, as the header line describes it.
struct GemmBaseline {
  DType compute = DType::f32;  ///< how cuBLAS multiplies (GemmKernelGroup::baseline)
  DType in = DType::f32;       ///< the stored type of A and B
  DType out = DType::f32;      ///< the stored type of C
};

/// @brief The "baseline:" text of the header line: "cublasGemmEx, CUBLAS_COMPUTE_32F" for one fp32
/// baseline; with several, each one's dtype, cuBLAS compute type and stored types
/// ("bf16: CUBLAS_COMPUTE_32F (bf16 in, bf16 out); tf32: CUBLAS_COMPUTE_32F_FAST_TF32 (fp32 in, fp32 out)").
std::string describe_baselines(const std::vector<GemmBaseline>& baselines);

namespace detail {

struct GemmGroupRun;  // the driver's state at one problem (gemm_runner.cu)

// A GemmKernelGroup with its element types erased: what the driver lists, selects and runs.
struct ErasedGemmGroup {
  GemmBaseline baseline;
  std::vector<std::string> kernel_names;
  std::function<void(GemmGroupRun&)> run;  // the group at one problem: inputs, reference, cuBLAS, kernels
  std::vector<DType> also_measure;         // the group's other cuBLAS baselines (the header line names them)
};

// Defined and instantiated in gemm_runner.cu for the type pairs the chapters use; `group` must
// outlive the returned object.
template <class TIn, class TOut>
ErasedGemmGroup erase_group(const GemmKernelGroup<TIn, TOut>& group);

int run_gemm_groups(int argc, const char* const* argv, const GemmChapter& chapter,
                    const std::vector<ErasedGemmGroup>& groups);

}  // namespace detail

/// @brief The chapter driver for kernels of one or more element types: one table, one CSV.
///
/// For each size and storage order, for each group in turn: its inputs (the same seeds for every
/// group), its fp64 reference, its cuBLAS baseline, then its kernels, each checked against the
/// reference and timed as a percentage of that group's cuBLAS. `--kernel` selects among the kernels
/// of all groups, whose names must differ; a group none of whose kernels is selected is not run,
/// its cuBLAS included.
///
/// Returns the process exit code: 0 when every kernel passed its check, 1 when one failed, 2 for bad
/// input (after a one-line message); a machine without a GPU, or whose GPU (with this build) lacks
/// what the chapter needs, is a clean skip (a one-line message, exit 0).
template <class... Groups>
  requires(sizeof...(Groups) > 0 && (is_gemm_kernel_group<Groups> && ...))
int run_gemm_chapter(int argc, const char* const* argv, const GemmChapter& chapter, const Groups&... groups) {
  return detail::run_gemm_groups(argc, argv, chapter, {detail::erase_group(groups)...});
}

/// @brief The chapter driver for kernels of one element type: they form one GemmKernelGroup whose
/// baseline is `chapter.baseline`. Returns the process exit code, as the several-group form does.
template <class TIn, class TOut>
int run_gemm_chapter(int argc, const char* const* argv, const GemmChapter& chapter,
                     const std::vector<GemmKernel<TIn, TOut>>& kernels) {
  return run_gemm_chapter(argc, argv, chapter, GemmKernelGroup<TIn, TOut>{chapter.baseline, kernels});
}

/// @brief For tests: runs `launch` once on random inputs (output poisoned first) and compares with the fp64 reference.
///
/// For fp8 inputs (TIn = __nv_fp8_e4m3) the problem's scale pointers are set (whatever `p` holds)
/// to device copies of `scales`, or for DType::e4m3_block to random block scales from `seed`
/// (random_block_scales), and the reference is the product of the dequantized values (scale ·
/// code, fp8_reference); other types ignore `scales`.
template <class TIn, class TOut>
CheckResult check_gemm_kernel(const GemmProblem& p, const GemmLaunch<TIn, TOut>& launch, DType dtype,
                              std::uint64_t seed = 1, OperandScales scales = {});

/// @brief The per-element tolerance for a kernel multiplying as `dtype` and storing TOut, relative
/// to sum_k |a_ik * b_kj|: elementwise_tolerance, plus one rounding of a 16-bit output.
///
/// A bf16 C is the fp32 result rounded to 8 significant bits: off by at most 2^-9·|c| rounded to
/// nearest, 2^-8·|c| truncated (fp16: 2^-11, 2^-10), and |c| ≤ sum|ab|. 8e-3 is 2× the truncated
/// bf16 bound. Without it, the 1e-5 of bf16 inputs alone fails a correctly rounded bf16 C
/// (tests/harness/test_check.cpp).
template <class TOut>
constexpr double gemm_tolerance(DType dtype) {
  return elementwise_tolerance(dtype) + (sizeof(TOut) == 2 ? 8e-3 : 0.0);
}

}  // namespace mm
