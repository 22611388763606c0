// Chapter 12, step 1: tf32_wgmma. Chapter 11's tile_shapes kernel at its 128×256 tile (chapter 10's
// best: a producer warpgroup, two consumer warpgroups, a persistent grouped loop over tiles, C out
// through shared memory and TMA stores), with fp32 operands multiplied as tf32.
//
// wgmma takes tf32 straight from shared memory: m64nNk8 reads 8 fp32 of each row of A and B (32
// bytes, as bf16's k16 does) and uses each value's sign, exponent and top 10 mantissa bits. So the
// kernel is the bf16 one with the element type changed, and three consequences of 4-byte elements:
//
//   the K step          32 instead of 64: one 128-byte swizzle row holds 32 fp32. A stage is still
//                       (128 + 256) rows × 128 bytes = 48 KB, 4 of them; a K step is 4 wgmma k8.
//   the operands' order tf32 (like fp8) is read K-major only: A row-major and B stored N×K, C = A·Bᵀ
//                       (RCR), go in as they are; a row-major B (RRR) would have to be transposed on
//                       its way to shared memory, which no TMA box does (the page measures what that
//                       costs with a transposing copy in front).
//   C is fp32           (what cuBLAS's tf32 GEMM writes): stmatrix moves 16-bit values only, so the
//                       pieces are staged with ordinary 8-byte stores (stage_accumulators_f32), and a
//                       piece is 64×32 (128-byte rows) instead of 64×64: 8 pieces a tile, not 4.
//
//   diff ../11_every_shape/tile_shapes.cuh tf32_wgmma.cuh   shows the change.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel tf32_wgmma
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/collective_mma_sm90.hpp"
#include "gemm/kernel_adapter.hpp"
#include "gemm/kernel_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_scheduler_sm90.hpp"

namespace mm::ch12 {

/// tf32_wgmma: 128×256 tiles, K steps of 32 fp32 (one 128-byte swizzle row), 4 stages of 48 KB, two
/// consumer warpgroups; pieces of C of 64×32 fp32 (one 128-byte row).
struct Tf32Cfg : KernelConfig<128, 256, 32, 4, 32> {};

/// tf32_wgmma's kernel: chapter 11's tile_shapes composition with fp32 operands (its main loop on
/// float: wgmma's tf32 atom, K steps of 32) and an fp32 C (the epilogue's 64×32 pieces).
template <class Cfg>
using Tf32Kernel =
    GemmKernelCooperative<Cfg, CollectiveMma<Cfg, float>, CollectiveEpilogueTma<Cfg, float>, PersistentTileScheduler>;

/// Empty when tf32_wgmma takes `p`; otherwise the rule it breaks: RCR (both operands K-major), and
/// rows of A, B and C whose pitch is a multiple of 16 bytes (K and N multiples of 4 fp32) for TMA.
inline std::string tf32_wgmma_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.b != Order::col || p.c != Order::row)
    return "takes RCR only (C = A·Bᵀ with B stored N×K): wgmma reads tf32 only K-major";
  if (std::string why = launch::tma_operand_rejects(p, 4); !why.empty()) return why;
  return tma_store_c_rejects(p, 4);
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects or operands TMA cannot describe.
template <class Cfg = Tf32Cfg>
PreparedGemm prepare_tf32_wgmma(const GemmProblem& p, const float* A, const float* B, float* C, int max_blocks = 0) {
  if (std::string why = tf32_wgmma_rejects(p); !why.empty()) throw std::invalid_argument("tf32_wgmma: " + why);
  using Kernel = Tf32Kernel<Cfg>;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(A, B, m, n, k, k, k);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, m, n, n);
  args.scheduler = whole_tiles<Cfg>(p);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("tf32_wgmma");
}

}  // namespace mm::ch12
