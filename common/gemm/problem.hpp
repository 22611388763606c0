/// @file problem.hpp
/// @brief The GEMM problem every chapter solves: C(M×N) = A(M×K) · B(K×N), with a storage order per operand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mm {

/// @brief Storage order of one matrix. Row-major is the canonical order of every chapter.
enum class Order { row, col };

/// @brief 'R' or 'C', as used in a layout tag such as "RRR" (A, B, C row-major) or "RCR" (C = A·Bᵀ with B stored N×K row-major).
constexpr char order_letter(Order o) { return o == Order::row ? 'R' : 'C'; }

/// @brief A dense matrix in memory: element (r, c) lives at `r * row_stride + c * col_stride`.
struct MatrixShape {
  std::int64_t rows = 0;     ///< number of rows
  std::int64_t cols = 0;     ///< number of columns
  Order order = Order::row;  ///< storage order
  /// @brief Distance between consecutive rows (cols for row-major, 1 for column-major).
  constexpr std::int64_t row_stride() const { return order == Order::row ? cols : 1; }
  /// @brief Distance between consecutive columns (1 for row-major, rows for column-major).
  constexpr std::int64_t col_stride() const { return order == Order::row ? 1 : rows; }
  /// @brief Leading dimension in the BLAS sense (the larger of the two strides).
  constexpr std::int64_t ld() const { return order == Order::row ? cols : rows; }
  /// @brief Offset of element (r, c).
  constexpr std::int64_t offset(std::int64_t r, std::int64_t c) const {
    return r * row_stride() + c * col_stride();
  }
  /// @brief Number of elements.
  constexpr std::int64_t size() const { return rows * cols; }
};

/// @brief The K (and B's N) extent of one block of block-scaled fp8's scales (DeepSeek-V3's 1×128
/// for A, 128×128 for B: GemmProblem::scale_a).
inline constexpr int kScaleBlock = 128;

/// @brief One GEMM problem: sizes and the storage order of A (M×K), B (K×N) and C (M×N).
struct GemmProblem {
  std::int64_t m = 1;     ///< rows of A and C
  std::int64_t n = 1;     ///< columns of B and C
  std::int64_t k = 1;     ///< columns of A, rows of B
  Order a = Order::row;   ///< storage order of A
  Order b = Order::row;   ///< storage order of B
  Order c = Order::row;   ///< storage order of C
  /// @brief fp8 problems only (chapter 12): device pointers to one float each, the per-tensor scales
  /// of A and B, so that C = (*scale_a)·(*scale_b)·A·B with A and B the stored e4m3 codes (how
  /// cuBLASLt takes them, CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER, which wants each 16-byte aligned at
  /// least: harness/gemm_runner.hpp's DeviceScales). Null, and unread, for every other type.
  ///
  /// With block scales (DType::e4m3_block, DeepSeek-V3's recipe, in cuBLASLt's layouts), with
  /// Kb = ceil(K/128): scale_a holds one float per row of A and 128 K, (m, kb) at kb·M + m (M
  /// contiguous: a tile's rows are neighbours); scale_b one per 128×128 block of B (N×K), (nb, kb)
  /// at nb·Kb4 + kb, Kb4 = Kb rounded up to a multiple of 4.
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;  ///< @copydoc scale_a

  /// @brief A as an M×K matrix.
  constexpr MatrixShape shape_a() const { return {m, k, a}; }
  /// @brief B as a K×N matrix.
  constexpr MatrixShape shape_b() const { return {k, n, b}; }
  /// @brief C as an M×N matrix.
  constexpr MatrixShape shape_c() const { return {m, n, c}; }
  /// @brief Floating-point operations of one product: 2·M·N·K.
  constexpr double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  /// @brief The layout tag, e.g. "RRR" for the canonical row-major problem.
  std::string layout_tag() const {
    return {order_letter(a), order_letter(b), order_letter(c)};
  }
};

}  // namespace mm
