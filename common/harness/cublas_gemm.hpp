/// @file cublas_gemm.hpp
/// @brief The cuBLAS baseline: the same problem, same data, same process, through cublasGemmEx.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "harness/dtype.hpp"
#include "gemm/problem.hpp"

namespace mm {

/// @brief A cuBLAS handle that runs GemmProblems in any storage order.
///
/// cuBLAS is column-major. A row-major C is computed as the column-major
/// Cᵀ = Bᵀ·Aᵀ, and a row-major operand is a column-major one transposed, so
/// every storage order maps to one cublasGemmEx call with the right flags.
class CublasGemm {
 public:
  CublasGemm();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  /// @brief C = A·B with inputs of type `in` (fp32 for f32/tf32, bf16, fp16) and C of type `out_type`.
  /// @param p the sizes and storage orders
  /// @param a device pointer to A (M×K in order p.a)
  /// @param b device pointer to B (K×N in order p.b)
  /// @param c device pointer to C (M×N in order p.c), overwritten
  /// @param out_type element type of C
  /// @param stream the stream to run on
  /// @param compute f32: CUBLAS_COMPUTE_32F (true SGEMM); tf32: CUBLAS_COMPUTE_32F_FAST_TF32;
  ///        bf16/f16: half-width inputs, fp32 accumulation (CUBLAS_COMPUTE_32F).
  void gemm(const GemmProblem& p, DType compute, const void* a, const void* b, void* c,
            cudaDataType_t out_type, cudaStream_t stream);

  /// @brief The compute type used for `compute`, spelled as in cuBLAS (for the printed table).
  static std::string compute_type_name(DType compute);

  /// @brief The raw handle.
  cublasHandle_t handle() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

/// @brief The cudaDataType_t of a storage type (float → CUDA_R_32F, bf16 → CUDA_R_16BF, half → CUDA_R_16F).
template <class T> constexpr cudaDataType_t cuda_data_type();
/// @cond SPECIALIZATIONS
template <> constexpr cudaDataType_t cuda_data_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t cuda_data_type<__nv_bfloat16>() { return CUDA_R_16BF; }
template <> constexpr cudaDataType_t cuda_data_type<__half>() { return CUDA_R_16F; }
/// @endcond

}  // namespace mm
