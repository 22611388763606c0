// Shared by the GPU test suites: skip (never pass) where there is no GPU.
#pragma once

#include <gtest/gtest.h>

#include "harness/device_info.hpp"

/// Skips the current test, with the reason, when this machine has no usable CUDA GPU.
#define MM_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (!::mm::device_info().present)                                                 \
      GTEST_SKIP() << "needs a CUDA GPU: " << ::mm::device_info().unavailable;        \
  } while (0)

/// Skips the current test when the GPU is older than compute capability `cc` (e.g. 80).
#define MM_REQUIRE_CC(min_cc)                                                         \
  do {                                                                                \
    MM_REQUIRE_GPU();                                                                 \
    if (::mm::device_info().cc < (min_cc))                                            \
      GTEST_SKIP() << "needs sm_" << (min_cc) << ", this GPU is sm_" << ::mm::device_info().cc; \
  } while (0)
