// Chapter 12, step 2: fp8_per_tensor. tf32_wgmma's kernel with fp8 e4m3 operands, each with one
// scale for the whole tensor, fp32 accumulation and a bf16 C: C = scale_a·scale_b·(A·Bᵀ), the GEMM
// of an fp8 linear layer (TransformerEngine's "delayed scaling", cuBLASLt's A/B_SCALE_POINTER).
//
// wgmma's m64nNk32 reads 32 e4m3 of each row of A and B (32 bytes, as tf32's k8 and bf16's k16) and
// does twice bf16's multiply-adds per cycle: 1,979 dense TFLOP/s on the datasheet. Against tf32_wgmma:
//
//   the K step     128: one 128-byte swizzle row holds 128 e4m3. A stage is still 48 KB, 4 of them,
//                  and a K step is 4 wgmma k32, as long as tf32's 4 × k8 but with 4× the K.
//   the scales     two floats in device memory (where an amax reduction on the GPU leaves them), read
//                  once per thread; the epilogue multiplies the accumulators by their product. The
//                  main loop does not see them: a per-tensor scale factors out of the whole sum.
//   the epilogue   C is bf16 again: chapter 10's stmatrix pieces of 64×64.
//   accumulation   each wgmma adds its products into the fp32 accumulators as the tensor core does
//                  for fp8, with fewer bits than fp32 (the page's accuracy section): cuBLASLt's
//                  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1, which is what this step is measured against.
//
//   diff tf32_wgmma.cuh fp8_per_tensor.cuh   shows the change.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_per_tensor
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
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

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

/// fp8_per_tensor: 128×256 tiles, K steps of 128 e4m3 (one 128-byte swizzle row), 4 stages of 48 KB,
/// two consumer warpgroups.
struct Fp8Cfg : KernelConfig<128, 256, 128, 4> {};

/// fp8_per_tensor's kernel: tf32_wgmma's composition with e4m3 operands (the main loop on e4m3:
/// wgmma's k32 atom, K steps of 128), a bf16 C, and the epilogue's per-tensor scale.
template <class Cfg>
using Fp8Kernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, e4m3>, CollectiveEpilogueTma<Cfg, bf16, EpilogueScale::per_tensor>,
                                        PersistentTileScheduler>;

/// Empty when fp8_per_tensor takes `p`; otherwise the rule it breaks (launch::fp8_rejects: RCR, K % 16
/// and N % 8 for TMA's 16-byte rows, the rules cuBLASLt's fp8 has too).
inline std::string fp8_per_tensor_rejects(const GemmProblem& p) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) return why;
  return launch::tma_operand_rejects(p, 1);
}

/// Empty when a per-tensor kernel takes `p` as given; otherwise why not: fp8_per_tensor_rejects' rule,
/// or a problem without its scales.
inline std::string fp8_per_tensor_refuses(const GemmProblem& p) {
  if (std::string why = fp8_per_tensor_rejects(p); !why.empty()) return why;
  if (p.scale_a == nullptr || p.scale_b == nullptr) return "needs the per-tensor scales of A and B (GemmProblem::scale_a, scale_b)";
  return {};
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects, operands TMA cannot describe, or a problem without its scales.
/// `splits` (a split-K kernel only, step 5): K slices per tile, at least 1.
template <class Cfg = Fp8Cfg, class Kernel = Fp8Kernel<Cfg>>
PreparedGemm prepare_fp8_per_tensor(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C, int max_blocks = 0,
                                    const std::string& name = "fp8_per_tensor", int splits = 1) {
  if (std::string why = fp8_per_tensor_refuses(p); !why.empty()) throw std::invalid_argument(name + ": " + why);
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(A, B, m, n, k, k, k);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, m, n, n, p.scale_a, p.scale_b);
  args.scheduler = tile_schedule<Cfg, typename Kernel::Scheduler>(p, splits);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared(name);
}

}  // namespace mm::ch12
