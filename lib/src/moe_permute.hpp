// The MoE permute's launch (moe_permute.cu), as gemm_ladder.cpp calls it once gl_moe_permute's arguments are
// checked: plain C++ here (no kernel), so that gemm_ladder.cpp stays a C++ file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gl::detail {

/// Rows of each expert's start in the contiguous layout: grouped_mm's (chapter 13's kGroupAlignmentRows).
inline constexpr std::int64_t kPermuteAlignRows = 128;
/// The most experts one call takes: each block keeps the padding before every expert in shared memory
/// ((E + 1) int64, 32 KB at 4096).
inline constexpr std::int64_t kPermuteMaxExperts = 4096;

/// gl_moe_permute's problem (gemm_ladder.h says what each is), checked by the caller.
struct MoePermute {
  std::int64_t tokens = 0, hidden = 0, k = 0, experts = 0, rows = 0;
  const void* x = nullptr;  // bf16 (tokens, hidden), row pitch ldx
  std::int64_t ldx = 0;
  const std::int64_t* flat = nullptr;    // (tokens·k,) each slot's expert, token-major
  const std::int64_t* order = nullptr;   // (tokens·k,) the slots sorted by expert
  const std::int64_t* counts = nullptr;  // (E,) the slots of each expert
  void* a = nullptr;                     // bf16 (rows, hidden), dense
  std::int64_t* offsets = nullptr;       // (E + 1,) written
  std::int64_t* place = nullptr;         // (tokens·k,) written
};

/// True when the rows are copied 16 bytes (8 bf16) at a time: x, a, the hidden size and x's pitch allow it.
bool moe_permute_vectorized(const MoePermute& p);

/// Queues the permute on `stream`; the launch's error (cudaGetLastError), or cudaSuccess.
cudaError_t launch_moe_permute(const MoePermute& p, cudaStream_t stream);

}  // namespace gl::detail
