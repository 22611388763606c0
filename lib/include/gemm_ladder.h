/** @file gemm_ladder.h
 *  @brief The C library of the ladder's finished kernels: one call per GEMM, a status and a message.
 *
 *  Plain C (C99 and C++), so that C programs, ctypes (python/gemm_ladder) and any other foreign
 *  function interface reach the kernels the chapters end with, and nothing else:
 *
 *  | dtype                        | kernel (chapter)                                   | layouts  |
 *  |------------------------------|----------------------------------------------------|----------|
 *  | GL_BF16                      | every_shape (11): bf16 A, B and C, fp32 accumulate | RCR, RRR as every_shape takes them |
 *  | GL_TF32                      | tf32_wgmma (12), RRR through tf32_transpose_b      | RCR, RRR |
 *  | GL_FP8_E4M3_PER_TENSOR       | fp8_per_tensor (12): e4m3 A, B; bf16 C             | RCR      |
 *  | GL_FP8_E4M3_BLOCK_SCALED     | fp8_block_scaled (12): DeepSeek-V3's block scales  | RCR      |
 *
 *  Grouped GEMM (chapter 13) does not exist yet: there is no call for it.
 *
 *  The problem is C (M×N) = A (M×K) · B, A and C row-major; B is K×N row-major (GL_RRR) or stored
 *  N×K row-major, C = A·Bᵀ (GL_RCR, the weight layout of nn.Linear). Each chapter kernel's own
 *  limits on sizes and pointers (a K that is not a multiple of 8, a pointer off a 16-byte boundary)
 *  come back as GL_UNSUPPORTED with the kernel's one line; the library adds none of its own but
 *  these: sizes of at least 1, non-null pointers aligned to their element, dense leading dimensions.
 *
 *  **Status and message.** Every call returns a gl_status; on anything but GL_OK, gl_last_error()
 *  says why in one line ("gl_gemm: lda = 100 but A is 64x96 row-major: only dense operands are
 *  taken for now (lda = K)"). Nothing throws across this interface and nothing aborts the process.
 *  The cheap checks (sizes, pointers, layout, the kernel's rules) run before anything asks the GPU.
 *
 *  **Workspace: cached internally.** Preparing a GEMM (its TMA descriptors, its grid, a split-K
 *  workspace or tf32's transposed B) costs more than a decode GEMM runs. The library keeps each
 *  prepared GEMM, keyed by everything that determines it: the device, dtype, layout, M, N, K, the
 *  pointers of A, B, C and the scales, and the stream (a split-K GEMM owns a workspace that two
 *  streams must not share). The cache is a bounded LRU (gl_set_cache_capacity, default 1024 entries
 *  or the environment's GEMM_LADDER_CACHE_CAPACITY); gl_clear_cache() frees every workspace (and, as
 *  cudaFree does, waits for the device). A call with new pointers prepares again: reuse buffers in a
 *  loop, as PyTorch's caching allocator does, and the second call on is a lookup and a launch.
 *
 *  **Threads and streams.** Thread-safe: calls from several host threads, each on its own stream,
 *  may run at the same time; each thread has its own gl_last_error() and gl_last_path(). The kernel
 *  is queued on `stream` (a cudaStream_t passed as void*; NULL is the legacy default stream) of the
 *  calling thread's current device; the call does not wait for it.
 *
 *  @code
 *    // C = A·Bᵀ in bf16, A 1×4096, B (a weight) 4096×4096, on `stream`
 *    if (gl_gemm(GL_BF16, GL_RCR, 1, 4096, 4096, a, 4096, w, 4096, c, 4096, NULL, NULL, stream) != GL_OK)
 *      fprintf(stderr, "%s\n", gl_last_error());
 *    printf("ran %s\n", gl_last_path());   // "swap_ab 128x16 x8", say
 *  @endcode
 */
#ifndef GEMM_LADDER_H
#define GEMM_LADDER_H

#include <stdint.h>

/** @brief Marks the library's exported functions (it is built with hidden visibility otherwise). */
#define GL_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/** @brief What a call returns. */
typedef enum gl_status {
  GL_OK = 0,               /**< the GEMM was queued on the stream */
  GL_INVALID_ARGUMENT = 1, /**< a size below 1, a null or misaligned pointer, a leading dimension below the matrix's */
  GL_UNSUPPORTED = 2,      /**< valid, but no kernel of the library takes it: the dtype, layout, a sparse leading dimension, the kernel's own rule */
  GL_NO_SM90A = 3,         /**< no GPU, not an sm_90a GPU (H100, H200), or this build has no sm_90a code */
  GL_CUDA_ERROR = 4,       /**< the CUDA runtime failed (an allocation, the launch) */
  GL_INTERNAL = 5          /**< anything else: a bug, reported rather than thrown */
} gl_status;

/** @brief The element types: one kernel each (see the file comment's table). */
typedef enum gl_dtype {
  GL_BF16 = 0,                 /**< bf16 A, B and C; fp32 accumulation */
  GL_TF32 = 1,                 /**< fp32 A, B and C, multiplied as tf32 */
  GL_FP8_E4M3_PER_TENSOR = 2,  /**< e4m3 A and B, one fp32 scale each (device pointers); bf16 C */
  GL_FP8_E4M3_BLOCK_SCALED = 3 /**< e4m3 A and B, 1×128 and 128×128 block scales (see gl_gemm); bf16 C */
} gl_dtype;

/** @brief Where B's elements are: A and C are row-major in both. */
typedef enum gl_layout {
  GL_RCR = 0, /**< B stored N×K row-major (ldb = K): C = A·Bᵀ, nn.Linear's weight */
  GL_RRR = 1  /**< B stored K×N row-major (ldb = N): C = A·B */
} gl_layout;

/**
 * @brief C = A·B (or A·Bᵀ) with the library's kernel for `dtype`, queued on `stream`.
 *
 * @param dtype   the element types (gl_dtype); another value is GL_UNSUPPORTED
 * @param layout  GL_RCR or GL_RRR (fp8: GL_RCR only)
 * @param m       rows of A and C (at least 1)
 * @param n       columns of C (at least 1)
 * @param k       columns of A, the shared dimension (at least 1)
 * @param a       A, M×K row-major, device memory, aligned to its element
 * @param lda     A's row pitch in elements: K (only dense operands for now; any value of at least K when M = 1)
 * @param b       B, stored as `layout` says, device memory, aligned to its element
 * @param ldb     B's row pitch in elements: K for GL_RCR, N for GL_RRR (any value of at least that when B has one row)
 * @param c       C, M×N row-major, device memory, aligned to its element
 * @param ldc     C's row pitch in elements: N (any value of at least N when M = 1)
 * @param scale_a fp8 only, device memory (else NULL). Per tensor: one float, C = scale_a·scale_b·A·Bᵀ.
 *                Block-scaled: one float per row of A and 128 of K, (m, kb) at kb·M + m (M contiguous),
 *                Kb = ceil(K/128) of them per row
 * @param scale_b fp8 only, device memory (else NULL). Per tensor: one float. Block-scaled: one float per
 *                128×128 block of B (N×K), (nb, kb) at nb·Kb4 + kb, Kb4 = Kb rounded up to a multiple of 4
 * @param stream  the cudaStream_t to queue the kernel(s) on; NULL: the legacy default stream
 * @return GL_OK, or why not (gl_last_error() says more)
 */
GL_API gl_status gl_gemm(gl_dtype dtype, gl_layout layout, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                         const void* b, int64_t ldb, void* c, int64_t ldc, const float* scale_a, const float* scale_b,
                         void* stream);

/**
 * @brief Whether this thread's current CUDA device runs the library's kernels: GL_OK, or GL_NO_SM90A
 * (gl_last_error() says why: no GPU, the GPU's architecture, or a build without sm_90a code).
 */
GL_API gl_status gl_device_status(void);

/** @brief Why the calling thread's last call did not return GL_OK, in one line ("" after a GL_OK). */
GL_API const char* gl_last_error(void);

/**
 * @brief The path the calling thread's last successful gl_gemm ran, as the chapter's kernel adapter
 * names it ("split_k 128x128 x3", "swap_ab 128x16 x8", "tf32_wgmma", "fp8_block_scaled"); "" before one.
 */
GL_API const char* gl_last_path(void);

/** @brief "GL_OK", "GL_INVALID_ARGUMENT", ...: the name of a status ("unknown status" for another value). */
GL_API const char* gl_status_name(gl_status status);

/** @brief Forgets every prepared GEMM and frees their workspaces (cudaFree: waits for the device). */
GL_API void gl_clear_cache(void);

/**
 * @brief Keeps at most `entries` prepared GEMMs (the least recently used go first; 0: none, each call
 * prepares again). Returns GL_INVALID_ARGUMENT for a negative value.
 */
GL_API gl_status gl_set_cache_capacity(int64_t entries);

/**
 * @brief The cache's state: prepared GEMMs held now, and lookups that found one (`hits`) or prepared
 * a new one (`misses`) since the process started. Any pointer may be NULL.
 */
GL_API void gl_cache_stats(int64_t* entries, int64_t* hits, int64_t* misses);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // GEMM_LADDER_H
