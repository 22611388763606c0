/// @file cublas_gemm.hpp
/// @brief The cuBLAS baseline: the same problem, same data, same process, through cublasGemmEx
/// (cublasLtMatmul for fp8).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "harness/dtype.hpp"
#include "gemm/problem.hpp"

namespace mm {

/// @brief A cuBLAS handle that runs GemmProblems in any storage order.
///
/// cuBLAS is column-major. A row-major C is computed as the column-major
/// Cᵀ = Bᵀ·Aᵀ, and a row-major operand is a column-major one transposed, so
/// every storage order maps to one cublasGemmEx call with the right flags.
///
/// fp8 (DType::e4m3, e4m3_promoted) goes through cuBLASLt, the only cuBLAS interface that takes it:
/// e4m3 A and B with the per-tensor scales of GemmProblem::scale_a/scale_b, fp32 compute, C of type
/// `out_type`, CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1 for e4m3 and 0 for e4m3_promoted; e4m3_block sets
/// the scale modes VEC128_32F for A and BLK128x128_32F for B (DeepSeek-V3's blocks). On sm_90 it
/// takes only C = A·Bᵀ with both operands K-major, the RCR order (cuBLAS's "TN"), and K a multiple of
/// 16: other orders throw std::invalid_argument (drivers refuse them up front: launch::fp8_rejects).
/// A problem for which cuBLASLt has no algorithm (its block-scaled fp8 takes fewer shapes than its
/// per-tensor one) throws std::runtime_error.
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
  ///        bf16/f16: half-width inputs, fp32 accumulation (CUBLAS_COMPUTE_32F); e4m3/e4m3_promoted:
  ///        cublasLtMatmul, as the class says.
  void gemm(const GemmProblem& p, DType compute, const void* a, const void* b, void* c,
            cudaDataType_t out_type, cudaStream_t stream);

  /// @brief The compute type used for `compute`, spelled as in cuBLAS (for the printed table).
  static std::string compute_type_name(DType compute);

  /// @brief The raw handle.
  cublasHandle_t handle() const { return handle_; }

 private:
  struct LtPlan;  // cuBLASLt's descriptors and chosen algorithm for the last fp8 problem (cublas_gemm.cu)
  void gemm_fp8(const GemmProblem& p, DType compute, const void* a, const void* b, void* c, cudaDataType_t out_type,
                cudaStream_t stream);
  cublasHandle_t handle_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;       // created on the first fp8 call
  void* lt_workspace_ = nullptr;        // cuBLASLt's workspace, allocated with it
  std::unique_ptr<LtPlan> lt_plan_;     // reused while the problem stays the same (the timed runs)
};


/// @brief The cudaDataType_t of a storage type (float → CUDA_R_32F, bf16 → CUDA_R_16BF, half → CUDA_R_16F).
template <class T> constexpr cudaDataType_t cuda_data_type();
/// @cond SPECIALIZATIONS
template <> constexpr cudaDataType_t cuda_data_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t cuda_data_type<__nv_bfloat16>() { return CUDA_R_16BF; }
template <> constexpr cudaDataType_t cuda_data_type<__half>() { return CUDA_R_16F; }
template <> constexpr cudaDataType_t cuda_data_type<__nv_fp8_e4m3>() { return CUDA_R_8F_E4M3; }
/// @endcond

}  // namespace mm
