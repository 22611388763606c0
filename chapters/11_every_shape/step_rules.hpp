#pragma once
// Chapter 11's rules that run on the CPU and that chapters 12 and 13 reuse for their own steps: the
// check every step makes first (check_step), split_k's number of K slices (choose_splits) and
// stream_k's grid (stream_k_blocks). Apart from the kernels' headers so that a file that needs only
// these (chapter 12's fp8 steps) compiles none of chapter 11's kernels.
//
// The same concern shapes each step's entry point (prepare_tile_shapes, prepare_every_shape, ...): a
// function template with no parameter of its own, `template <class = void>`, called as any function
// (`prepare_split_k(p, A, B, C)`; as a value, `prepare_tile_shapes<>`). An inline function that is not a
// template instantiates every kernel it launches in each file that includes its header, used or not;
// the template only where it is called. The CPU rules of every_shape.hpp (choose() and the rules it
// reads) then cost their includers no kernel: test_ch11 tests them and runs the kernels through
// ch11_steps, which compiles them once.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"  // launch::tma_pointer_rejects

namespace mm::ch11 {

/// Throws std::invalid_argument("<step>: <why>") when the step refuses `p` (`why_not`, its rule) or when
/// an operand its tensor maps will hold is not 16-byte aligned (C: null when the step stores C with
/// plain stores). Each step calls it first, before anything asks the GPU (the SM count, the occupancy),
/// so that a machine without one refuses the same launch for the same reason.
inline void check_step(const char* step, std::string why_not, const void* A, const void* B, const void* C) {
  if (why_not.empty()) why_not = launch::tma_pointer_rejects({{"A", A}, {"B", B}, {"C", C}});
  if (!why_not.empty()) throw std::invalid_argument(std::string(step) + ": " + why_not);
}

/// How many K slices for `tiles` tiles of `k_steps` K steps on `sms` SMs: 1 when the tiles fill at
/// least half the GPU; otherwise as many as bring the units to about one per SM, keeping at least
/// `min_k_steps` K steps per slice (a slice's prologue, epilogue and fixup must stay small beside its
/// loop: at 1000³, 64 tiles of 128×128 split into 2 slices of 8 steps ran at 69% of cuBLAS, unsplit
/// at 85%). `min_k_steps`: chapter 12's block-scaled fp8 passes its own (K steps of 128, twice the
/// work of one of bf16's).
inline int choose_splits(std::int64_t tiles, int k_steps, int sms, int min_k_steps = 16) {
  if (2 * tiles >= sms) return 1;
  const std::int64_t by_sms = sms / tiles, by_k = std::max(1, k_steps / min_k_steps);
  return int(std::max<std::int64_t>(1, std::min(by_sms, by_k)));
}

/// The blocks of stream_k's grid for `tiles` tiles of `k_steps` K steps when `resident` blocks fit on
/// the GPU at once: all of them, but no more than the shared K steps give kMinSteps each when the
/// tiles are fewer than the blocks (and never fewer blocks than tiles).
inline int stream_k_blocks(std::int64_t tiles, int k_steps, int resident) {
  constexpr int kMinSteps = 4;
  if (tiles >= resident) return resident;
  return int(std::max<std::int64_t>(tiles, std::min<std::int64_t>(resident, tiles * k_steps / kMinSteps)));
}

}  // namespace mm::ch11
