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
 *  | grouped bf16 (gl_grouped_gemm, gl_grouped_gemm_masked) | grouped_contiguous, grouped_masked (13): every expert of a MoE layer in one launch | RCR |
 *  | grouped bf16 SwiGLU (gl_grouped_swiglu) | grouped_swiglu (13, step 3): every expert's SiLU(x·W_gateᵀ)·(x·W_upᵀ), the activation in the epilogue | RCR |
 *  | bf16 rows, int64 routing (gl_moe_permute) | moe_permute (the library's own, no GEMM): a MoE layer's routed tokens copied into the grouped calls' contiguous layout, with its offsets | row-major |
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
 *  **CUDA graphs.** A call may be captured into a CUDA graph (torch.compile's mode="reduce-overhead"
 *  does so): capture on a stream created with cudaStreamNonBlocking, as PyTorch's are. A call whose
 *  GEMM is not prepared yet prepares it during the capture, with the thread's capture mode relaxed
 *  for that (its workspace's cudaMalloc, and the zeroing of its counters on a stream of the
 *  library's own, waited for before the call goes on). The graph keeps the prepared GEMM's workspace: every prepared GEMM a capture used is
 *  pinned in the cache for the rest of the process (neither evicted nor freed by gl_clear_cache;
 *  gl_cache_pinned() counts them), and nothing is evicted while a capture runs.
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
 * @brief Every expert's C_g = A_g·B_gᵀ of a mixture-of-experts layer in one launch (chapter 13's
 * grouped_contiguous), bf16 in and out, fp32 accumulation, queued on `stream`.
 *
 * **The contiguous layout** (DeepGEMM's psum layout, the chapter's): the experts' rows one after the
 * other in one A (rows × K) and one C (rows × N), both row-major and dense, each expert starting on a
 * multiple of 128 rows. `offsets` holds E + 1 int64 on the device: offsets[0] = 0, expert g's rows are
 * align_up(offsets[g], 128) .. offsets[g + 1] - 1 (offsets[g + 1] is where it ends; an empty expert
 * ends where it starts). The rows between an expert's end and the next 128-row boundary are padding
 * the caller leaves: A's are multiplied like any row (the expert's last tile is whole), and C's
 * padding rows may be written with their products (with 64-row tiles, only up to the next 64-row
 * boundary; with the 16-row decode tile, none); no other row of C is written. B is the experts' weights stacked, (E·N) × K row-major
 * (expert g's N×K weight, nn.Linear's layout, at row g·N: RCR).
 *
 * **The layout's host copy.** The kernel reads `offsets` on the device: the host launches without
 * knowing the rows (a router on the GPU wrote them; a CUDA graph can replay the call). `host_offsets`,
 * when not NULL, is the host's copy of the same E + 1 values; the library then checks it before the
 * launch (chapter 13's grouped_layout_rejects: offsets[0] = 0, each end at or after its aligned start,
 * the last end within `rows`; a violation is GL_INVALID_ARGUMENT with the rule) and picks the tile
 * from it. With NULL the device's offsets are trusted, as the router's: whatever they hold, every read
 * and write stays inside A, B and C (TMA clips at their `rows` and E·N rows), but offsets that break the
 * rules above give wrong rows, and absurd ones a launch that walks that many empty tiles.
 *
 * **The tile.** `tile_rows` 128 (the 128×256 tile of the prefill runs), 64 (step 2's 64×256 tile) or 16
 * (step 6's grouped_decode: 64 rows of an expert's weight × 16 of its token rows, the weights on wgmma's
 * M, C written transposed, only the experts' rows written) forces one; 0 lets the library choose
 * (chapter 13's choose_grouped_tile, grouped_rule.hpp): 16 where step 2's 64×256 tiles would be fewer
 * than the GPU's SMs (counted from `host_offsets`, or bounded by `rows` without it) and K >= 1024 (with
 * a host copy, also at most 32 rows for the largest expert); else 64 rows when the experts hold few
 * rows (with `host_offsets`: a mean of at most 32 rows per expert, padding excluded; without: `rows`
 * <= 128·E), else 128. Chapter 13's decode runs (plots/data/h200/ch13_grouped_moe_decode.csv and
 * ch13_grouped_moe_decode_step6_appendix.csv) measured each. gl_last_path() names the one that ran
 * ("grouped_contiguous 64x256", "grouped_decode 64x16 swapped").
 *
 * Refused before the GPU is asked: E < 1, rows, N or K < 1 (GL_INVALID_ARGUMENT); a NULL pointer, one
 * off its element (GL_INVALID_ARGUMENT); the kernel's rules (GL_UNSUPPORTED with the rule): N % 256 == 0
 * (a 256-column tile must stay in one expert's weight), K % 8 == 0, A, B and C 16-byte aligned (TMA),
 * rows and E·N below 2^31; tile_rows other than 0, 16, 64, 128 (GL_INVALID_ARGUMENT). Prepared GEMMs are
 * cached as gl_gemm's are, keyed by the sizes, E, the tile and every pointer (offsets included) and the
 * stream; the offsets' values are read by the kernel at each launch, so new values need no new preparation.
 *
 * @param experts      E, the number of experts (at least 1)
 * @param rows         rows of A and C: every expert's rows and their padding (at least 1)
 * @param n            columns of C, rows of each expert's weight (a multiple of 256)
 * @param k            the shared dimension (a multiple of 8)
 * @param a            A, rows × K row-major bf16, device memory, 16-byte aligned
 * @param b            B, (E·N) × K row-major bf16 (the experts' N×K weights stacked), 16-byte aligned
 * @param c            C, rows × N row-major bf16, 16-byte aligned
 * @param offsets      E + 1 int64 in device memory, 8-byte aligned (see above)
 * @param host_offsets the host's copy of the E + 1 offsets, checked before the launch; or NULL
 * @param tile_rows    0 (the library chooses), 16, 64 or 128
 * @param stream       the cudaStream_t to queue the kernel on; NULL: the legacy default stream
 * @return GL_OK, or why not (gl_last_error() says more)
 */
GL_API gl_status gl_grouped_gemm(int64_t experts, int64_t rows, int64_t n, int64_t k, const void* a, const void* b,
                                 void* c, const int64_t* offsets, const int64_t* host_offsets, int64_t tile_rows,
                                 void* stream);

/**
 * @brief gl_grouped_gemm with the masked layout (chapter 13's grouped_masked, the decode layout of a
 * CUDA graph): expert g owns rows g·capacity .. g·capacity + capacity - 1 of A and C (rows = E·capacity)
 * and uses the first counts[g] of them.
 *
 * `counts`: E int32 in device memory; `host_counts`, when not NULL, the host's copy, checked before the
 * launch (each from 0 to the capacity: GL_INVALID_ARGUMENT otherwise) and used for the tile. Without it,
 * a device count outside 0..capacity is clamped to it by the scheduler. `capacity` must be a multiple
 * of 128 (GL_UNSUPPORTED otherwise). `tile_rows` 0 chooses as gl_grouped_gemm does (chapter 13's rule),
 * without a host copy bounding step 2's tiles by E·capacity, and otherwise takes 64 rows (the masked layout is decode's: the chapter's grouped_masked_64 ran at
 * 100.8% of the faster cuBLAS way in geometric mean over its decode shapes, grouped_masked at 92.4%).
 *
 * @param experts     E, the number of experts (at least 1)
 * @param capacity    rows of each expert's buffer in A and C (a multiple of 128)
 * @param n           columns of C, rows of each expert's weight (a multiple of 256)
 * @param k           the shared dimension (a multiple of 8)
 * @param a           A, (E·capacity) × K row-major bf16, device memory, 16-byte aligned
 * @param b           B, (E·N) × K row-major bf16 (the experts' N×K weights stacked), 16-byte aligned
 * @param c           C, (E·capacity) × N row-major bf16, 16-byte aligned
 * @param counts      E int32 in device memory, 4-byte aligned: expert g's rows
 * @param host_counts the host's copy of the E counts, checked before the launch; or NULL
 * @param tile_rows   0 (the library chooses), 16, 64 or 128
 * @param stream      the cudaStream_t to queue the kernel on; NULL: the legacy default stream
 * @return GL_OK, or why not (gl_last_error() says more)
 */
GL_API gl_status gl_grouped_gemm_masked(int64_t experts, int64_t capacity, int64_t n, int64_t k, const void* a,
                                        const void* b, void* c, const int32_t* counts, const int32_t* host_counts,
                                        int64_t tile_rows, void* stream);

/**
 * @brief Every expert's SwiGLU activation h_g = SiLU(A_g·W_gate,gᵀ) ⊙ (A_g·W_up,gᵀ) of a mixture-of-experts
 * layer in one launch (chapter 13's grouped_swiglu, step 3): the gate+up grouped GEMM whose epilogue
 * applies SiLU(gate)·up to the fp32 accumulators, so that H is I columns wide and the 2I gate and up
 * values are neither rounded to bf16 nor written. bf16 in and out, queued on `stream`.
 *
 * **The layout** is gl_grouped_gemm's contiguous one (A and H rows × K and rows × I, each expert from a
 * multiple of 128 rows, `offsets` and `host_offsets` as there; H's padding rows inside an expert's last
 * tile may be written, no row past it).
 *
 * **The weights, interleaved by 128.** B holds each expert's gate and up weights (I×K each, nn.Linear's
 * layout) as one (2I)×K block, stacked by expert ((E·2I) × K row-major), in the order the kernel's
 * 256-column tiles need: rows 256t .. 256t + 127 of expert g's block are W_gate's rows 128t .. 128t + 127,
 * rows 256t + 128 .. 256t + 255 W_up's same rows. A model that stores [W_gate; W_up] stacked reorders
 * them once, when it loads them (python/gemm_ladder's interleave_gate_up); column j of H is then
 * SiLU(gate_j)·up_j with gate_j = A·W_gate[j]ᵀ and up_j = A·W_up[j]ᵀ.
 *
 * **The tile.** `tile_rows` 128 or 64 forces one; 0 lets the library choose with gl_grouped_gemm's rule
 * for the gate+up GEMM (N = 2I), taking 64 where that rule says 16: the fused epilogue has no decode
 * tile (chapter 13's step 6, grouped_decode, is the plain GEMM only), and 16 is refused (GL_UNSUPPORTED).
 * gl_last_path() names the one that ran ("grouped_contiguous 64x256 SiLU(gate)·up").
 *
 * Refused before the GPU is asked: E < 1, rows, I or K < 1 (GL_INVALID_ARGUMENT); a NULL pointer, one off
 * its element (GL_INVALID_ARGUMENT); the kernel's rules (GL_UNSUPPORTED with the rule): I % 128 == 0 (a
 * 256-column tile holds 128 gate and the same 128 up columns), K % 8 == 0, A, B and H 16-byte aligned
 * (TMA), rows and E·2I below 2^31; tile_rows 16 (GL_UNSUPPORTED) or other than 0, 64, 128
 * (GL_INVALID_ARGUMENT); a host copy of the offsets that breaks the layout's rules (GL_INVALID_ARGUMENT).
 * Cached as gl_grouped_gemm's calls are, apart from them.
 *
 * @param experts      E, the number of experts (at least 1)
 * @param rows         rows of A and H: every expert's rows and their padding (at least 1)
 * @param intermediate I, each expert's SwiGLU width: columns of H, rows of each W_gate and W_up (a multiple of 128)
 * @param k            the shared dimension, columns of A and of the weights (a multiple of 8)
 * @param a            A, rows × K row-major bf16, device memory, 16-byte aligned
 * @param b            B, (E·2I) × K row-major bf16: each expert's gate and up weights interleaved by 128 rows (see above), 16-byte aligned
 * @param h            H, rows × I row-major bf16, 16-byte aligned
 * @param offsets      E + 1 int64 in device memory, 8-byte aligned (gl_grouped_gemm's)
 * @param host_offsets the host's copy of the E + 1 offsets, checked before the launch; or NULL
 * @param tile_rows    0 (the library chooses), 64 or 128
 * @param stream       the cudaStream_t to queue the kernel on; NULL: the legacy default stream
 * @return GL_OK, or why not (gl_last_error() says more)
 */
GL_API gl_status gl_grouped_swiglu(int64_t experts, int64_t rows, int64_t intermediate, int64_t k, const void* a,
                                   const void* b, void* h, const int64_t* offsets, const int64_t* host_offsets,
                                   int64_t tile_rows, void* stream);

/**
 * @brief The routed tokens of a mixture-of-experts layer copied into gl_grouped_gemm's contiguous layout, with the
 * layout's offsets and each slot's row, in one launch queued on `stream` (the library's own kernel, not a
 * chapter's: lib/src/moe_permute.cu). What a model runs before gl_grouped_swiglu / gl_grouped_gemm.
 *
 * **The routing** (all int64, device memory): each of `tokens` tokens picked `k` experts. `flat` (tokens·k) holds
 * them token-major: slot t·k + j is token t's j-th expert, 0 .. E - 1. `order` (tokens·k) is the slots sorted by
 * expert (a stable argsort of `flat`), `counts` (E) the slots of each expert (they sum to tokens·k).
 *
 * **What is written.** Expert g's rows start at a multiple of 128: after the rows of the experts before it, each
 * padded to a multiple of 128 with pad[g'] = (128 - counts[g'] % 128) % 128 rows. Sorted row i (slot s = order[i],
 * its expert g = flat[s]) goes to row dest = i + pad[0] + .. + pad[g - 1] of A; then
 *   - A[dest] = x[s / k] (the token's row, `hidden` bf16);
 *   - place[s] = dest (where slot s's row is: a model gathers each slot's expert output back from there);
 *   - offsets[0] = 0 and offsets[g + 1] = counts[0] + .. + counts[g] + pad[0] + .. + pad[g - 1], expert g's end:
 *     gl_grouped_gemm's `offsets`.
 * A's other rows (the padding, and any past the last expert's) are not written. The kernel reads the counts on
 * the device: nothing waits for the GPU, and a CUDA graph may capture the call. The routing's values are not
 * checked (the router wrote them); whatever they hold, nothing is written outside A, offsets and place: a slot of
 * `order` outside 0 .. tokens·k - 1 is skipped, an expert outside 0 .. E - 1 taken as 0 or E, a row whose place
 * falls outside A's `rows` not copied. Such values give wrong rows, never a stray write.
 *
 * The rows are copied 16 bytes at a time where x, A, `hidden` and `ldx` allow it (gl_last_path():
 * "moe_permute 16-byte"), else one bf16 at a time ("moe_permute 2-byte").
 *
 * Refused before the GPU is asked: tokens or hidden below 0, k or E below 1, `rows` below tokens·k, `ldx` below
 * `hidden` (with more than one token) (GL_INVALID_ARGUMENT); E above 4096 or tokens·k from 2^31 (GL_UNSUPPORTED);
 * a NULL pointer, or one off its element (GL_INVALID_ARGUMENT), for every array of at least one element (an
 * array of none is not read and may be NULL). GL_NO_SM90A as for the GEMMs.
 *
 * @param tokens  rows of x (0: only the offsets are written)
 * @param hidden  columns of x and A
 * @param k       experts each token picked (the router's top-k, at least 1)
 * @param experts E, the number of experts (1 to 4096)
 * @param rows    rows of A: at least tokens·k, and enough for the padding (at most 127 an expert)
 * @param x       the tokens, tokens × hidden bf16, row pitch `ldx`, device memory, 2-byte aligned
 * @param ldx     x's row pitch in elements (at least `hidden` when tokens > 1)
 * @param flat    tokens·k int64: each slot's expert, token-major
 * @param order   tokens·k int64: the slots sorted by expert
 * @param counts  E int64: the slots of each expert
 * @param a       A, rows × hidden row-major bf16 (dense), device memory, 2-byte aligned: written
 * @param offsets E + 1 int64: written (gl_grouped_gemm's offsets)
 * @param place   tokens·k int64: written, each slot's row in A
 * @param stream  the cudaStream_t to queue the kernel on; NULL: the legacy default stream
 * @return GL_OK, or why not (gl_last_error() says more)
 */
GL_API gl_status gl_moe_permute(int64_t tokens, int64_t hidden, int64_t k, int64_t experts, int64_t rows, const void* x,
                                int64_t ldx, const int64_t* flat, const int64_t* order, const int64_t* counts, void* a,
                                int64_t* offsets, int64_t* place, void* stream);

/**
 * @brief Whether this thread's current CUDA device runs the library's kernels: GL_OK, or GL_NO_SM90A
 * (gl_last_error() says why: no GPU, the GPU's architecture, or a build without sm_90a code).
 */
GL_API gl_status gl_device_status(void);

/** @brief Why the calling thread's last call did not return GL_OK, in one line ("" after a GL_OK). */
GL_API const char* gl_last_error(void);

/**
 * @brief The path the calling thread's last successful gl_gemm, gl_grouped_gemm*, gl_grouped_swiglu or gl_moe_permute
 * ran, as the chapter's kernel adapter names it ("split_k 128x128 x3", "swap_ab 128x16 x8", "tf32_wgmma",
 * "fp8_block_scaled", "grouped_contiguous 64x256", "grouped_contiguous 128x256 SiLU(gate)·up", "moe_permute 16-byte");
 * "" before one.
 */
GL_API const char* gl_last_path(void);

/** @brief "GL_OK", "GL_INVALID_ARGUMENT", ...: the name of a status ("unknown status" for another value). */
GL_API const char* gl_status_name(gl_status status);

/**
 * @brief Forgets every prepared GEMM and frees their workspaces (cudaFree: waits for the device), but
 * the ones a CUDA graph captured (see "CUDA graphs" above).
 */
GL_API void gl_clear_cache(void);

/**
 * @brief Keeps at most `entries` prepared GEMMs besides the pinned ones (the least recently used go
 * first; 0: none, each call prepares again). Returns GL_INVALID_ARGUMENT for a negative value.
 */
GL_API gl_status gl_set_cache_capacity(int64_t entries);

/**
 * @brief The cache's state: prepared GEMMs held now, and lookups that found one (`hits`) or prepared
 * a new one (`misses`) since the process started. Any pointer may be NULL.
 */
GL_API void gl_cache_stats(int64_t* entries, int64_t* hits, int64_t* misses);

/**
 * @brief How many of the cache's entries a CUDA graph captured: kept for the process's life (see "CUDA
 * graphs" above), counted in gl_cache_stats's `entries`, not against the capacity.
 */
GL_API int64_t gl_cache_pinned(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // GEMM_LADDER_H
