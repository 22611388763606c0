/// @file dtype.hpp
/// @brief Element types of the chapters (fp32, tf32, bf16, fp16), their names and their tolerances.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string_view>

namespace mm {

/// @brief How a GEMM stores its inputs and multiplies them.
/// `tf32` stores fp32 but multiplies on tensor cores with 10-bit mantissas.
enum class DType { f32, tf32, bf16, f16 };

/// @brief The short name used in tables and CSV files ("fp32", "tf32", "bf16", "fp16").
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
  }
  return "?";
}

/// @brief Per-element tolerance of a GEMM result, relative to sum_k |a_ik * b_kj|.
///
/// The reference is computed in fp64 from the very same (already rounded)
/// inputs, so what remains is accumulation error: about sqrt(K) * eps * |partial sums|.
/// For fp32 accumulation that is well under 1e-5 of the absolute sum even at
/// K = 8192; tf32 adds the rounding of each input to 10 mantissa bits (2^-11),
/// and a bf16/fp16 *output* adds one rounding of the result (2^-9).
constexpr double elementwise_tolerance(DType t) {
  switch (t) {
    case DType::f32: return 4e-5;
    case DType::tf32: return 4e-3;
    case DType::bf16: return 4e-5;  // bf16 inputs, fp32 accumulation, fp32 output
    case DType::f16: return 4e-5;
  }
  return 0.0;
}

/// @brief Size in bytes of one stored element of `t`.
constexpr int dtype_bytes(DType t) { return (t == DType::bf16 || t == DType::f16) ? 2 : 4; }

/// @brief Maps a storage type to its DType (float maps to fp32; ask for tf32 explicitly).
template <class T> constexpr DType dtype_of();
/// @cond SPECIALIZATIONS
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<__nv_bfloat16>() { return DType::bf16; }
template <> constexpr DType dtype_of<__half>() { return DType::f16; }
/// @endcond

}  // namespace mm
