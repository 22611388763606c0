/// @file reference.hpp
/// @brief The float64 reference GEMM and the check that compares a kernel's output against it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/dtype.hpp"
#include "gemm/problem.hpp"

namespace mm {

/// @brief The exact-as-possible result of a GEMM, computed in fp64 from the same inputs the kernel saw.
struct Reference {
  std::int64_t m = 0;           ///< rows of C
  std::int64_t n = 0;           ///< columns of C
  std::vector<double> value;    ///< C(i, j) at i*n + j (row-major, whatever C's storage order)
  std::vector<double> abs_sum;  ///< sum_k |A(i,k) * B(k,j)|: the scale the error is measured against
};

/// @brief Multiplies a reference by `scale` (values and magnitudes): the product of fp8 codes becomes
/// that of the values they stand for, scale_a·scale_b·A·B.
inline void scale_reference(Reference& ref, double scale) {
  for (double& v : ref.value) v *= scale;
  for (double& v : ref.abs_sum) v *= scale;
}

/// @brief fp64 reference on the host: A and B given as host copies in the problem's storage orders.
template <class T>
Reference reference_gemm_host(const GemmProblem& p, const std::vector<T>& a, const std::vector<T>& b);

/// @brief fp64 reference computed by a simple fp64 kernel on the device, then copied to the host.
template <class T>
Reference reference_gemm_device(const GemmProblem& p, const T* a, const T* b);

/// @brief Picks the host for small problems (M·N·K ≤ 2^24) and the device otherwise.
template <class T>
Reference reference_gemm(const GemmProblem& p, const DeviceBuffer<T>& a, const DeviceBuffer<T>& b);

/// @brief The verdict on one output.
struct CheckResult {
  bool ok = false;                ///< every element finite and within tolerance
  double rel_frobenius = 0;       ///< ||out - ref||_F / ||ref||_F
  double max_abs_error = 0;       ///< max |out - ref|
  double worst_ratio = 0;         ///< max |out - ref| / (tolerance * abs_sum): > 1 fails
  std::int64_t bad = 0;           ///< elements out of tolerance (NaN and Inf included)
  std::int64_t nonfinite = 0;     ///< NaN or Inf elements (an unwritten, poisoned element is NaN)
  std::int64_t first_bad_row = -1;  ///< row of the first failing element (-1 if none)
  std::int64_t first_bad_col = -1;  ///< column of the first failing element (-1 if none)
  /// @brief One line: "ok (rel 1.2e-07)" or "FAIL: 3 bad elements, first at (0, 5): got nan, want 1.25".
  std::string summary;
};

/// @brief Compares `out` (C in the storage order `order`) with the reference.
///
/// An element passes when it is finite and |out - ref| ≤ tol · sum_k |a_ik b_kj|
/// (plus a tiny absolute floor for all-zero rows). The tolerance is per
/// element, so a single wrong element fails even in a large matrix.
template <class T>
CheckResult check_gemm(const Reference& ref, const std::vector<T>& out, Order order, double tol);

}  // namespace mm
