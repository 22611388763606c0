/// @file copy_runner.hpp
/// @brief Runs a chapter's copy and transpose kernels next to cudaMemcpy: check exactly, time, print, write the CSV.
///
/// The source is an M×N row-major fp32 matrix. A copy writes the same M×N
/// matrix; a transpose writes its N×M transpose (row-major), so
/// dst[j·M + i] == src[i·N + j]. Effective bandwidth counts the bytes read
/// plus the bytes written (2·M·N·4) over the median time, and the baseline is
/// a device-to-device cudaMemcpy of the same bytes in the same run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/cli.hpp"

namespace mm {

/// @brief Launches a copy or transpose of the M×N row-major `src` into `dst` on `stream`.
using CopyLaunch = std::function<void(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t stream)>;

/// @brief One kernel of a copy chapter.
struct CopyKernel {
  std::string name;         ///< what --kernel selects and the table shows
  bool transposes = false;  ///< dst is the N×M transpose rather than a copy
  CopyLaunch launch;        ///< runs it once
  /// @brief Empty when the kernel takes an M×N matrix; otherwise a one-line reason naming the constraint.
  std::function<std::string(std::int64_t m, std::int64_t n)> rejects = {};
  arch::Requirement needs = arch::any;  ///< e.g. arch::sm80 for cp.async
};

/// @brief A copy chapter's description and defaults.
struct CopyChapter {
  std::string chapter;                     ///< "04_copy_and_transpose": the CSV's chapter column
  std::string description;                 ///< one line for --help
  std::vector<ProblemSize> default_sizes;  ///< M×N (k unused)
  int default_reps = 50;                   ///< timed runs unless --reps says otherwise
  int default_warmup = 5;                  ///< warm-up runs unless --warmup says otherwise
};

/// @brief The verdict on one copy: exact equality is expected (nothing is computed).
struct CopyCheck {
  bool ok = false;       ///< every element equal, bit for bit
  std::int64_t bad = 0;  ///< elements that differ (poisoned ones included)
  std::string summary;   ///< "ok" or "FAIL: 3 elements differ, first at (0, 31): got nan, want 0.25"
};

/// @brief For tests: runs `launch` once on a random M×N matrix (destination poisoned first) and checks every element.
CopyCheck check_copy_kernel(std::int64_t m, std::int64_t n, const CopyLaunch& launch, bool transposes,
                            std::uint64_t seed = 3);

/// @brief The copy-chapter driver: returns 0 when all checks pass, 1 when one failed; bad input exits 2; no GPU is a clean skip.
int run_copy_chapter(int argc, const char* const* argv, const CopyChapter& chapter, const std::vector<CopyKernel>& kernels);

}  // namespace mm
