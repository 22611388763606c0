/// @file cuda_check.hpp
/// @brief Error checks for CUDA runtime and cuBLAS calls that name the call, the file and the line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gemm/watchdog.hpp"  // watchdog_report

namespace mm {

/// @brief Prints `file:line: call failed: reason` and exits 1. Used by MM_CUDA_CHECK. When a
/// kernel's mbarrier wait gave up (a deadlock: the kernel trapped), the reason is the watchdog's
/// line naming the block, the thread and the barrier (gemm/watchdog.hpp), not the bare
/// "unspecified launch failure".
[[noreturn]] inline void cuda_fail(const char* call, const char* file, int line, const char* what) {
  if (const std::string watchdog = watchdog_report(); !watchdog.empty())
    std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, watchdog.c_str());
  else
    std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, what);
  std::exit(1);
}

/// @brief A readable name for a cuBLAS status code.
inline const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "unknown cuBLAS status";
  }
}

}  // namespace mm

/// @brief Checks a CUDA runtime call; on failure prints the call, file, line and reason, then exits 1.
/// A macro (not a function) because only the preprocessor can quote the call's text.
#define MM_CUDA_CHECK(call)                                                          \
  do {                                                                               \
    cudaError_t mm_err_ = (call);                                                    \
    if (mm_err_ != cudaSuccess) ::mm::cuda_fail(#call, __FILE__, __LINE__,           \
                                                cudaGetErrorString(mm_err_));        \
  } while (0)

/// @brief Checks the launch that just happened (configuration errors and, after a sync, faults).
#define MM_CHECK_LAUNCH() MM_CUDA_CHECK(cudaGetLastError())

/// @brief Checks a cuBLAS call; on failure prints the call, file, line and status name, then exits 1.
#define MM_CUBLAS_CHECK(call)                                                        \
  do {                                                                               \
    cublasStatus_t mm_st_ = (call);                                                  \
    if (mm_st_ != CUBLAS_STATUS_SUCCESS)                                             \
      ::mm::cuda_fail(#call, __FILE__, __LINE__, ::mm::cublas_status_name(mm_st_));  \
  } while (0)
