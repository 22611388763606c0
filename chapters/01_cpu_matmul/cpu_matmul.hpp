/// @file cpu_matmul.hpp
/// @brief Chapter 01: C(M×N) = A(M×K)·B(K×N) on the CPU, row-major fp32, four steps from a triple loop to threads.
///
/// Every variant overwrites C (it never reads what C held before), is correct
/// for every M, N, K ≥ 1, and indexes a row-major matrix X with `cols` columns
/// as X[row * cols + col]. Plain C++20: the speed comes from the loop order,
/// the cache blocking and the threads, and from what the compiler does with
/// them, never from intrinsics. The one system call is the optional pinning of
/// the threaded step's workers to CPUs (cpu_topology.hpp).
///
/// Build and run: `cmake --build build --target ch01_cpu_matmul && build/bin/ch01_cpu_matmul`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "01_cpu_matmul/cpu_topology.hpp"

namespace mm::ch01 {

/// @brief Step 1, i-j-k: one dot product per element of C, as the mathematics is written.
///
/// The inner loop walks a row of A (stride 1) and a *column* of B: stride N
/// floats, so every iteration touches a new cache line of B and uses 4 of its 64
/// bytes. The `sum` chain also serializes the adds (fp32 addition is not
/// associative, so the compiler may not reorder it into vector lanes).
inline void naive_ijk(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];  // B: stride N
      C[i * N + j] = sum;
    }
}

/// @brief Step 2, i-k-j: the same multiply-adds, with the two inner loops swapped.
///
/// For a fixed (i, k), `a_ik` is one number and the inner loop is
/// C[i, :] += a_ik · B[k, :]: both rows are contiguous and no iteration depends on
/// another, so each cache line is used whole and the compiler turns the loop
/// into SIMD multiply-adds over several j at once.
inline void reordered_ikj(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M; ++i) {
    float* c_row = C + i * N;  // (N)
    std::fill(c_row, c_row + N, 0.0f);
    for (std::int64_t k = 0; k < K; ++k) {
      const float a_ik = A[i * K + k];
      const float* b_row = B + k * N;  // (N)
      for (std::int64_t j = 0; j < N; ++j) c_row[j] += a_ik * b_row[j];  // contiguous, independent
    }
  }
}

/// @brief Block sizes of the cache-blocked step.
///
/// Why these sizes (per core: L1d 32–48 KiB, L2 1–2 MiB on current x86 server
/// CPUs such as Zen 4 and Sapphire Rapids):
/// - the inner loop touches NB floats of C and NB of B: 2 × 256 × 4 B = 2 KiB,
///   far inside L1, so the C segment stays in L1 for all KB values of k;
/// - the panel B[k0:k0+KB, j0:j0+NB] is KB × NB × 4 B = 128 KiB: too big for L1,
///   comfortably inside L2, and it is reused by every row i of C before the
///   next panel is loaded.
/// Both are multiples of 16 floats (one 64-byte line), so a panel row starts
/// and ends on line boundaries when N is a multiple of 16.
struct BlockSizes {
  static constexpr std::int64_t kb = 128;  ///< rows of the B panel (a slice of K)
  static constexpr std::int64_t nb = 256;  ///< columns of the B panel and of the C segment
};

/// @brief Step 3's work on the rows [row_begin, row_end) of C; the threaded step calls it once per worker.
template <std::int64_t KB = BlockSizes::kb, std::int64_t NB = BlockSizes::nb>
void blocked_rows(const float* A, const float* B, float* C, std::int64_t N, std::int64_t K,
                  std::int64_t row_begin, std::int64_t row_end) {
  static_assert(KB >= 1 && NB >= 1, "block sizes must be positive");
  for (std::int64_t i = row_begin; i < row_end; ++i) std::fill(C + i * N, C + (i + 1) * N, 0.0f);
  for (std::int64_t j0 = 0; j0 < N; j0 += NB) {
    const std::int64_t nb = std::min(NB, N - j0);  // the last panel may be narrower
    for (std::int64_t k0 = 0; k0 < K; k0 += KB) {
      const std::int64_t kb = std::min(KB, K - k0);  // ... and shorter
      // The panel B[k0:k0+kb, j0:j0+nb] is now loaded into L2 once and reused by every row i.
      for (std::int64_t i = row_begin; i < row_end; ++i) {
        float* c_seg = C + i * N + j0;         // (nb): stays in L1 for the whole k loop
        const float* a_seg = A + i * K + k0;   // (kb)
        for (std::int64_t k = 0; k < kb; ++k) {
          const float a_ik = a_seg[k];
          const float* b_seg = B + (k0 + k) * N + j0;  // (nb): one row of the panel
          for (std::int64_t j = 0; j < nb; ++j) c_seg[j] += a_ik * b_seg[j];  // the i-k-j inner loop
        }
      }
    }
  }
}

/// @brief Step 3, cache blocking: i-k-j on one L2-sized panel of B at a time (see BlockSizes for the sizes).
template <std::int64_t KB = BlockSizes::kb, std::int64_t NB = BlockSizes::nb>
void blocked(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  blocked_rows<KB, NB>(A, B, C, N, K, 0, M);
}

/// @brief The default worker count: the logical CPUs this process may use (its affinity mask, at least 1).
inline unsigned default_threads() { return unsigned(std::max<std::size_t>(1, usable_cpus().size())); }

/// @brief Step 4, threads: rows of C are independent, so each worker runs the blocked step on its own band of rows.
///
/// No locks and no shared writes: worker t owns rows [t·M/T, (t+1)·M/T) of C.
/// With more workers asked for than rows, only M workers start (one row each).
/// Every worker reads all of B, so each core's L2 holds its own copy of the panel.
///
/// `cpus` empty: the operating system places the workers (and may move them).
/// Otherwise worker t first pins itself to logical CPU cpus[t % cpus.size()]
/// (CpuTopology::pin_order() puts one worker per physical core before any SMT
/// sibling). With one worker nothing starts: the band runs on the caller's thread,
/// wherever the caller is (chapter 01's main pins itself to cpus[0]).
template <std::int64_t KB = BlockSizes::kb, std::int64_t NB = BlockSizes::nb>
void threaded(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K,
              unsigned threads = default_threads(), std::span<const int> cpus = {}) {
  const std::int64_t workers = std::clamp<std::int64_t>(threads, 1, M);
  if (workers == 1) {  // no thread to start: run on the caller's thread
    blocked_rows<KB, NB>(A, B, C, N, K, 0, M);
    return;
  }
  std::vector<std::jthread> pool;  // jthread joins on destruction, also if a later start throws
  pool.reserve(std::size_t(workers));
  for (std::int64_t t = 0; t < workers; ++t) {
    const std::int64_t begin = t * M / workers, end = (t + 1) * M / workers;  // bands differ by at most one row
    const int cpu = cpus.empty() ? -1 : cpus[std::size_t(t) % cpus.size()];
    pool.emplace_back([=] {
      if (cpu >= 0) pin_current_thread(cpu);  // before any work: the band runs where it was put
      blocked_rows<KB, NB>(A, B, C, N, K, begin, end);
    });
  }
}

}  // namespace mm::ch01
