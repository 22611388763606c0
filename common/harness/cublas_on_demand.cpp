// cuBLAS and cuBLASLt, loaded on the first call instead of at process start.
//
// A binary that links libcublas pays for it before main, whether it calls cuBLAS or not: libcublasLt's
// 353k relative relocations cost each process ~0.13 s of CPU, ~26k page faults and ~215 MB resident,
// even `--gtest_list_tests` (2026-12-01, 2 cores, no GPU). CI's test_harness, test_ch04, test_ch13 and
// cli tests, ~230 processes of which only this file's test calls cuBLAS: 41 s of CPU with cuBLAS
// linked, 4 s without. So mm_harness links no cuBLAS library: this file defines each cuBLAS function
// the repository calls, by its own name (the chapters still call cublasGemmEx), and forwards it to
// the real one, which dlopen finds on the first call.
//
// - The cuBLAS headers are included, so a definition whose signature is not the header's is a compile
//   error ("conflicting declaration of C function").
// - Hidden: the definitions stay inside the binary that links mm_harness, so that a process that loads
//   the real cuBLAS too (PyTorch) never has its calls land here.
// - A function the repository calls for the first time needs its line below: the link says which.
// - cublas_v2.h's macros rename some functions (cublasCreate is cublasCreate_v2): the definition and the
//   name looked up are both renamed, as the callers' calls are.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdio>

namespace {

#define MM_CUBLAS_STRINGIFY(x) #x
#define MM_CUBLAS_SONAME(lib, major) "lib" lib ".so." MM_CUBLAS_STRINGIFY(major)

// The library, opened once; nullptr (said on stderr) if it cannot be. Its functions bind at once
// (RTLD_NOW), and its symbols stay out of the process's global scope (RTLD_LOCAL).
void* open_library(const char* soname) {
  void* library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!library) std::fprintf(stderr, "cuBLAS on demand: dlopen(\"%s\") failed: %s\n", soname, dlerror());
  return library;
}

// cuBLASLt has cuBLAS's major version (libcublasLt.so.13 beside libcublas.so.13).
void* cublas() {
  static void* const library = open_library(MM_CUBLAS_SONAME("cublas", CUBLAS_VER_MAJOR));
  return library;
}
void* cublas_lt() {
  static void* const library = open_library(MM_CUBLAS_SONAME("cublasLt", CUBLAS_VER_MAJOR));
  return library;
}

// The function `name` of `library`, or nullptr (said on stderr, unless the library itself was missing).
void* find_function(void* library, const char* name) {
  if (!library) return nullptr;
  void* function = dlsym(library, name);
  if (!function) std::fprintf(stderr, "cuBLAS on demand: dlsym failed: %s\n", dlerror());
  return function;
}

}  // namespace

// One forwarder: `library` (cublas or cublas_lt) is opened and `name` found on the first call, both
// thread-safe (function-local statics); a failure returns CUBLAS_STATUS_NOT_INITIALIZED, which the
// callers' MM_CUBLAS_CHECK reports with the call's file and line.
#define MM_CUBLAS_FORWARD(library, name, params, args)                                   \
  extern "C" __attribute__((visibility("hidden"))) cublasStatus_t name params {          \
    using Function = cublasStatus_t(*) params;                                           \
    static const auto function =                                                         \
        reinterpret_cast<Function>(find_function(library(), MM_CUBLAS_STRINGIFY(name))); \
    return function ? function args : CUBLAS_STATUS_NOT_INITIALIZED;                     \
  }

// cuBLAS (cublas_api.h)
MM_CUBLAS_FORWARD(cublas, cublasCreate, (cublasHandle_t* handle), (handle))
MM_CUBLAS_FORWARD(cublas, cublasDestroy, (cublasHandle_t handle), (handle))
MM_CUBLAS_FORWARD(cublas, cublasGetProperty, (libraryPropertyType type, int* value), (type, value))
MM_CUBLAS_FORWARD(cublas, cublasSetStream, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
MM_CUBLAS_FORWARD(cublas, cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
MM_CUBLAS_FORWARD(cublas, cublasGemmEx,
                  (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                   const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype,
                   int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                   cublasGemmAlgo_t algo),
                  (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                   computeType, algo))
MM_CUBLAS_FORWARD(cublas, cublasGemmGroupedBatchedEx,
                  (cublasHandle_t handle, const cublasOperation_t transa_array[],
                   const cublasOperation_t transb_array[], const int m_array[], const int n_array[],
                   const int k_array[], const void* alpha_array, const void* const Aarray[], cudaDataType_t Atype,
                   const int lda_array[], const void* const Barray[], cudaDataType_t Btype, const int ldb_array[],
                   const void* beta_array, void* const Carray[], cudaDataType_t Ctype, const int ldc_array[],
                   int group_count, const int group_size[], cublasComputeType_t computeType),
                  (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, Atype,
                   lda_array, Barray, Btype, ldb_array, beta_array, Carray, Ctype, ldc_array, group_count,
                   group_size, computeType))

// cuBLASLt (cublasLt.h)
MM_CUBLAS_FORWARD(cublas_lt, cublasLtCreate, (cublasLtHandle_t* handle), (handle))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtDestroy, (cublasLtHandle_t handle), (handle))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulDescCreate,
                  (cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType, cudaDataType_t scaleType),
                  (desc, computeType, scaleType))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulDescSetAttribute,
                  (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t size),
                  (desc, attr, buf, size))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatrixLayoutCreate,
                  (cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
                  (layout, type, rows, cols, ld))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t* pref), (pref))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulPreferenceSetAttribute,
                  (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                   size_t size),
                  (pref, attr, buf, size))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmulAlgoGetHeuristic,
                  (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
                   cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                   cublasLtMatmulPreference_t pref, int requestedAlgoCount,
                   cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount),
                  (handle, desc, Adesc, Bdesc, Cdesc, Ddesc, pref, requestedAlgoCount, heuristicResultsArray,
                   returnAlgoCount))
MM_CUBLAS_FORWARD(cublas_lt, cublasLtMatmul,
                  (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                   cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                   const void* C, cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                   const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
                   cudaStream_t stream),
                  (handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                   workspaceSizeInBytes, stream))
