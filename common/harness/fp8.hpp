/// @file fp8.hpp
/// @brief fp8 e4m3 inputs for a GEMM: the format's range, scales per tensor and per block, and
/// quantization whose error is bounded by the format (host code; chapter 12's harness layer).
///
/// e4m3 has 1 sign, 4 exponent and 3 mantissa bits: normals from 2^-6 to 448 (no infinities; the
/// all-ones pattern is NaN), subnormals down to 2^-9. A tensor of arbitrary range is stored as
/// e4m3 codes `q` and a float `scale`: x ≈ scale · q. Per tensor, one scale maps max|x| to 448; per
/// block (DeepSeek-V3's scheme: 1×128 blocks of the activations, 128×128 blocks of the weights),
/// each block has its own, so one large value does not push a whole tensor's small ones into the
/// subnormals. A GEMM's reference is computed from the dequantized values (scale · q): what is left
/// to compare is the kernel's own arithmetic.
///
/// Rounding to e4m3 is to nearest, saturating at ±448 (`__NV_SATFINITE`, as cuBLASLt and DeepGEMM
/// quantize). The error of one value is at most half a unit in the last place: 2^-4 of |x| for a
/// normal, and scale · 2^-10 for a value in the subnormal range (half of the smallest step, 2^-9).
#pragma once

#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mm::fp8 {

/// @brief The e4m3 format's constants.
struct E4m3 {
  static constexpr float kMax = 448.0f;             ///< largest finite value
  static constexpr float kMinNormal = 0.015625f;    ///< 2^-6
  static constexpr float kMinSubnormal = 0.001953125f;  ///< 2^-9, the step of the subnormals
  static constexpr int kMantissaBits = 3;           ///< explicit mantissa bits
  /// Largest relative error of rounding a normal to nearest: half an ulp, 2^-(3+1).
  static constexpr double kHalfUlp = 0.0625;
};

/// @brief `x` rounded to the nearest e4m3 value, saturating at ±448 (NaN stays NaN).
inline __nv_fp8_e4m3 to_e4m3(float x) {
  __nv_fp8_e4m3 q;
  q.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return q;
}

/// @brief The value an e4m3 code stands for.
inline float to_float(__nv_fp8_e4m3 q) { return float(q); }

/// @brief The scale that maps `amax` (the largest |x| of what it scales) to e4m3's 448; 1 for an
/// all-zero block. Throws std::invalid_argument for a negative or non-finite amax.
inline float scale_for(float amax) {
  if (!(amax >= 0.0f) || !std::isfinite(amax))
    throw std::invalid_argument("fp8::scale_for: amax must be finite and >= 0, got " + std::to_string(amax));
  return amax > 0.0f ? amax / E4m3::kMax : 1.0f;
}

/// @brief A matrix of e4m3 codes with one scale per block of `block_rows` × `block_cols` (the last
/// blocks may be smaller): element (r, c) stands for scales[(r / block_rows) · blocks_per_row +
/// c / block_cols] · codes[r · cols + c]. Per tensor: the block is the whole matrix.
struct Quantized {
  std::int64_t rows = 0;        ///< rows of the matrix
  std::int64_t cols = 0;        ///< columns (row-major storage)
  std::int64_t block_rows = 0;  ///< rows of a scale block
  std::int64_t block_cols = 0;  ///< columns of a scale block
  std::vector<__nv_fp8_e4m3> codes;  ///< rows × cols, row-major
  std::vector<float> scales;         ///< one per block, blocks row-major

  /// @brief Blocks along a row.
  std::int64_t blocks_per_row() const { return (cols + block_cols - 1) / block_cols; }
  /// @brief The scale of element (r, c).
  float scale(std::int64_t r, std::int64_t c) const {
    return scales[std::size_t((r / block_rows) * blocks_per_row() + c / block_cols)];
  }
  /// @brief The value element (r, c) stands for: its scale times its code.
  float value(std::int64_t r, std::int64_t c) const { return scale(r, c) * to_float(codes[std::size_t(r * cols + c)]); }
};

/// @brief Quantizes a row-major rows × cols matrix to e4m3 with a scale per block_rows × block_cols
/// block (each block's max |x| maps to 448). Throws std::invalid_argument on sizes that do not fit
/// (block sizes < 1, x.size() != rows · cols) or a non-finite value.
inline Quantized quantize(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                          std::int64_t block_cols) {
  if (rows < 0 || cols < 0 || block_rows < 1 || block_cols < 1 || std::int64_t(x.size()) != rows * cols)
    throw std::invalid_argument("fp8::quantize: " + std::to_string(x.size()) + " values for a " + std::to_string(rows) +
                                "x" + std::to_string(cols) + " matrix in blocks of " + std::to_string(block_rows) +
                                "x" + std::to_string(block_cols));
  Quantized q{rows, cols, block_rows, block_cols, std::vector<__nv_fp8_e4m3>(x.size()), {}};
  const std::int64_t brs = (rows + block_rows - 1) / block_rows, bcs = q.blocks_per_row();
  q.scales.assign(std::size_t(brs * bcs), 1.0f);
  for (std::int64_t br = 0; br < brs; ++br)
    for (std::int64_t bc = 0; bc < bcs; ++bc) {
      const std::int64_t r1 = std::min(rows, (br + 1) * block_rows), c1 = std::min(cols, (bc + 1) * block_cols);
      float amax = 0.0f;
      for (std::int64_t r = br * block_rows; r < r1; ++r)
        for (std::int64_t c = bc * block_cols; c < c1; ++c) {
          const float v = x[std::size_t(r * cols + c)];
          if (!std::isfinite(v)) throw std::invalid_argument("fp8::quantize: a non-finite value at (" + std::to_string(r) + ", " + std::to_string(c) + ")");
          amax = std::max(amax, std::fabs(v));
        }
      const float s = scale_for(amax);
      q.scales[std::size_t(br * bcs + bc)] = s;
      for (std::int64_t r = br * block_rows; r < r1; ++r)
        for (std::int64_t c = bc * block_cols; c < c1; ++c)
          q.codes[std::size_t(r * cols + c)] = to_e4m3(x[std::size_t(r * cols + c)] / s);
    }
  return q;
}

/// @brief Per-tensor quantization: one scale for the whole matrix.
inline Quantized quantize_per_tensor(const std::vector<float>& x, std::int64_t rows, std::int64_t cols) {
  return quantize(x, rows, cols, std::max<std::int64_t>(rows, 1), std::max<std::int64_t>(cols, 1));
}

/// @brief The dequantized matrix (scale · code for every element), row-major: what a GEMM's
/// reference multiplies.
inline std::vector<float> dequantize(const Quantized& q) {
  std::vector<float> out(q.codes.size());
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t c = 0; c < q.cols; ++c) out[std::size_t(r * q.cols + c)] = q.value(r, c);
  return out;
}

/// @brief The bound on |x − dequantized x| for one element of scale `scale`: half an ulp of e4m3
/// relative to |x| for a normal, half the subnormal step (times the scale) below.
inline double error_bound(float x, float scale) {
  return std::max(E4m3::kHalfUlp * std::fabs(double(x)), 0.5 * double(E4m3::kMinSubnormal) * double(scale));
}

}  // namespace mm::fp8
