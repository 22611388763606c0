#include "harness/cublas_gemm.hpp"

#include <cstdint>
#include <stdexcept>

#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "gemm/launch.hpp"  // launch::fp8_rejects

namespace mm {

namespace {
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;  // what cuBLASLt's documentation suggests for Hopper
}  // namespace

// The descriptors of one fp8 problem and the algorithm cuBLASLt's heuristic chose for it: built on
// the first call, reused by the timed ones (asking the heuristic is host work of tens of µs).
struct CublasGemm::LtPlan {
  std::int64_t m = 0, n = 0, k = 0;
  DType compute = DType::e4m3;
  cudaDataType_t out_type = CUDA_R_16BF;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool same(const GemmProblem& p, DType c, cudaDataType_t out) const {
    return m == p.m && n == p.n && k == p.k && compute == c && out_type == out && scale_a == p.scale_a &&
           scale_b == p.scale_b;
  }
  ~LtPlan() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
  }
};

CublasGemm::CublasGemm() {
  MM_CUBLAS_CHECK(cublasCreate(&handle_));
  // The default math mode never silently uses tf32 for CUBLAS_COMPUTE_32F.
  MM_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}

CublasGemm::~CublasGemm() {
  lt_plan_.reset();
  if (lt_workspace_) cudaFree(lt_workspace_);
  if (lt_) cublasLtDestroy(lt_);
  if (handle_) cublasDestroy(handle_);
}

std::string CublasGemm::compute_type_name(DType compute) {
  if (compute == DType::e4m3) return "cublasLtMatmul CUBLAS_COMPUTE_32F, FAST_ACCUM 1";
  if (compute == DType::e4m3_promoted) return "cublasLtMatmul CUBLAS_COMPUTE_32F, FAST_ACCUM 0";
  if (compute == DType::e4m3_block)
    return "cublasLtMatmul CUBLAS_COMPUTE_32F, scales VEC128_32F (A) and BLK128x128_32F (B)";
  return compute == DType::tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
}

void CublasGemm::gemm_fp8(const GemmProblem& p, DType compute, const void* a, const void* b, void* c,
                          cudaDataType_t out_type, cudaStream_t stream) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) throw std::invalid_argument("cuBLASLt: " + why);
  if (!lt_) {
    MM_CUBLAS_CHECK(cublasLtCreate(&lt_));
    MM_CUDA_CHECK(cudaMalloc(&lt_workspace_, kLtWorkspaceBytes));
  }
  if (!lt_plan_ || !lt_plan_->same(p, compute, out_type)) {
    // Row-major C (M×N) is column-major Cᵀ (N×M) = B·Aᵀ: cuBLASLt's first operand is our B (N×K
    // row-major: column-major K×N, used transposed), its second our A (M×K row-major: column-major
    // K×M, used as it is). "TN", the one fp8 form sm_90 has.
    auto plan = std::make_unique<LtPlan>();
    plan->m = p.m, plan->n = p.n, plan->k = p.k, plan->compute = compute, plan->out_type = out_type;
    plan->scale_a = p.scale_a, plan->scale_b = p.scale_b;
    MM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
    MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
    const std::int8_t fast = compute == DType::e4m3 ? 1 : 0;
    MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    // cuBLASLt's A is our B: its scale is ours of B, and the other way round. Block scales:
    // 128×128 blocks for the weights (our B), 1×128 for the activations (our A), in the layouts
    // GemmProblem::scale_a/scale_b describe (cuBLASLt's own).
    if (compute == DType::e4m3_block) {
      const std::int32_t blk = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, vec = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &blk, sizeof blk));
      MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec, sizeof vec));
    }
    MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &p.scale_b,
                                                   sizeof p.scale_b));
    MM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p.scale_a,
                                                   sizeof p.scale_a));
    MM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->la, CUDA_R_8F_E4M3, std::uint64_t(p.k), std::uint64_t(p.n), p.k));
    MM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lb, CUDA_R_8F_E4M3, std::uint64_t(p.k), std::uint64_t(p.m), p.k));
    MM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lc, out_type, std::uint64_t(p.n), std::uint64_t(p.m), p.n));
    cublasLtMatmulPreference_t pref = nullptr;
    MM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    MM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &kLtWorkspaceBytes, sizeof kLtWorkspaceBytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, plan->desc, plan->la, plan->lb, plan->lc, plan->lc,
                                                             pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0))
      throw std::runtime_error("cuBLASLt has no " + std::string(dtype_name(compute)) + " algorithm for " +
                               std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                               " (CUBLAS_STATUS_NOT_SUPPORTED)");
    MM_CUBLAS_CHECK(st);
    plan->algo = result.algo;
    lt_plan_ = std::move(plan);
  }
  const float alpha = 1.0f, beta = 0.0f;
  const LtPlan& plan = *lt_plan_;
  MM_CUBLAS_CHECK(cublasLtMatmul(lt_, plan.desc, &alpha, b, plan.la, a, plan.lb, &beta, c, plan.lc, c, plan.lc,
                                 &plan.algo, lt_workspace_, kLtWorkspaceBytes, stream));
}

void CublasGemm::gemm(const GemmProblem& p, DType compute, const void* a, const void* b, void* c,
                      cudaDataType_t out_type, cudaStream_t stream) {
  if (is_fp8(compute)) return gemm_fp8(p, compute, a, b, c, out_type, stream);
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

// Declared in device_info.hpp; defined here, next to the other cuBLAS calls. Its cublasGetProperty loads
// cuBLAS's libraries (cublas_on_demand.cpp): only a process that reports results calls it.
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
