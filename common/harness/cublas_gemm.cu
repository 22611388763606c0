#include "harness/cublas_gemm.hpp"

#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"

namespace mm {

CublasGemm::CublasGemm() {
  MM_CUBLAS_CHECK(cublasCreate(&handle_));
  // The default math mode never silently uses tf32 for CUBLAS_COMPUTE_32F.
  MM_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}

CublasGemm::~CublasGemm() {
  if (handle_) cublasDestroy(handle_);
}

std::string CublasGemm::compute_type_name(DType compute) {
  return compute == DType::tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
}

void CublasGemm::gemm(const GemmProblem& p, DType compute, const void* a, const void* b, void* c,
                      cudaDataType_t out_type, cudaStream_t stream) {
  const cudaDataType_t in_type = compute == DType::bf16  ? CUDA_R_16BF
                                 : compute == DType::f16 ? CUDA_R_16F
                                                         : CUDA_R_32F;
  const cublasComputeType_t ct =
      compute == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f, beta = 0.0f;
  MM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  const MatrixShape sa = p.shape_a(), sb = p.shape_b();
  // A stored-as-is matrix is "N" for cuBLAS when its order matches the order
  // cuBLAS sees it in; otherwise it is the transpose of what cuBLAS sees ("T").
  if (p.c == Order::col) {
    auto op = [](Order o) { return o == Order::col ? CUBLAS_OP_N : CUBLAS_OP_T; };
    MM_CUBLAS_CHECK(cublasGemmEx(handle_, op(p.a), op(p.b), int(p.m), int(p.n), int(p.k), &alpha,
                                 a, in_type, int(sa.ld()), b, in_type, int(sb.ld()), &beta, c, out_type,
                                 int(p.m), ct, CUBLAS_GEMM_DEFAULT));
  } else {
    // Row-major C (M×N) is column-major Cᵀ (N×M) = Bᵀ·Aᵀ.
    auto op = [](Order o) { return o == Order::row ? CUBLAS_OP_N : CUBLAS_OP_T; };
    MM_CUBLAS_CHECK(cublasGemmEx(handle_, op(p.b), op(p.a), int(p.n), int(p.m), int(p.k), &alpha,
                                 b, in_type, int(sb.ld()), a, in_type, int(sa.ld()), &beta, c, out_type,
                                 int(p.n), ct, CUBLAS_GEMM_DEFAULT));
  }
}

// Declared in device_info.hpp; defined here, next to the other cuBLAS calls, so that only a binary
// that reports results (and so times cuBLAS) loads cuBLAS's libraries.
std::string cuda_version_string() {
  int rt = 0, drv = 0, blas = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetProperty(MAJOR_VERSION, &blas);
  int blas_minor = 0, blas_patch = 0;
  cublasGetProperty(MINOR_VERSION, &blas_minor);
  cublasGetProperty(PATCH_LEVEL, &blas_patch);
  auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string((x % 1000) / 10); };
  std::string s = "runtime " + v(rt);
  if (drv > 0) s += " driver " + v(drv);
  s += " cuBLAS " + std::to_string(blas) + "." + std::to_string(blas_minor) + "." + std::to_string(blas_patch);
  return s;
}

}  // namespace mm
