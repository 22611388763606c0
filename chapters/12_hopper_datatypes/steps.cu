// Chapter 12's steps, in the order of its page: the lists the binary, the tests and the compiled
// kernels come from (docs/extending.md). A new step is one line here. `max_blocks` > 0 caps the
// persistent grid, so that each block loops over many tiles (the tests).
#include "12_hopper_datatypes/steps.hpp"

#include "12_hopper_datatypes/fp8_block_scaled.cuh"
#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"
#if MM_APPENDIX_STEPS
#include "12_hopper_datatypes/fp8_clusters.cuh"
#include "12_hopper_datatypes/fp8_block_scaled_192.cuh"
#include "12_hopper_datatypes/fp8_block_scaled_stream_k.cuh"
#include "12_hopper_datatypes/fp8_per_tensor_halves.cuh"
#endif
#include "12_hopper_datatypes/fp8_per_tensor.cuh"
#include "12_hopper_datatypes/fp8_per_tensor_small_m.cuh"
#include "12_hopper_datatypes/tf32_transpose_b.cuh"
#include "12_hopper_datatypes/tf32_wgmma.cuh"

namespace mm::ch12 {

std::vector<GemmKernel<float, float>> tf32_steps(int max_blocks) {
  return {
      // tf32_wgmma.cuh: chapter 11's 128×256 kernel on fp32 operands, K steps of 32, an fp32 C
      prepared_kernel<float, float>(
          "tf32_wgmma", DType::tf32,
          [max_blocks](const GemmProblem& p, const float* a, const float* b, float* c) {
            return prepare_tf32_wgmma(p, a, b, c, max_blocks);
          },
          tf32_wgmma_rejects, arch::sm90a),
      // tf32_transpose_b.cuh: a row-major B (RRR) transposed into a workspace first, then tf32_wgmma
      prepared_kernel<float, float>(
          "tf32_transpose_b", DType::tf32,
          [max_blocks](const GemmProblem& p, const float* a, const float* b, float* c) {
            return prepare_tf32_transpose_b(p, a, b, c, max_blocks);
          },
          tf32_transpose_b_rejects, arch::sm90a),
  };
}

std::vector<GemmKernel<e4m3, bf16>> fp8_steps(int max_blocks) {
  return {
      // fp8_per_tensor.cuh: e4m3 operands, K steps of 128, the scales applied in the epilogue
      prepared_kernel<e4m3, bf16>(
          "fp8_per_tensor", DType::e4m3,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_per_tensor(p, a, b, c, max_blocks);
          },
          fp8_per_tensor_rejects, arch::sm90a),
      // fp8_per_tensor_small_m.cuh: fp8_per_tensor on 64-row tiles (64, 128 or 256 wide) with K split, for few rows
      prepared_kernel<e4m3, bf16>(
          "fp8_per_tensor_small_m", DType::e4m3,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_per_tensor_small_m(p, a, b, c, max_blocks);
          },
          fp8_per_tensor_rejects, arch::sm90a),
#if MM_APPENDIX_STEPS
      // fp8_clusters.cuh: step 5's plans with each tile's blocks in clusters of two sharing A (1×2) or B (2×1)
      prepared_kernel<e4m3, bf16>(
          "fp8_per_tensor_cluster", DType::e4m3,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_per_tensor_cluster(p, a, b, c, max_blocks);
          },
          fp8_per_tensor_rejects, arch::sm90a),
      // fp8_per_tensor_halves.cuh: each K step as two wgmma of N = 128 (fp8_block_scaled's shape, no promotion)
      prepared_kernel<e4m3, bf16>(
          "fp8_per_tensor_halves", DType::e4m3,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_per_tensor_halves(p, a, b, c, max_blocks);
          },
          fp8_per_tensor_halves_rejects, arch::sm90a),
#endif
  };
}

std::vector<GemmKernel<e4m3, bf16>> fp8_block_steps(int max_blocks) {
  return {
      // fp8_block_scaled.cuh: 1×128 and 128×128 scales, each K block promoted to fp32 with its scales;
      // A's scales by TMA with the stage, B's in registers (issue 35's step 2; LDG for M % 4 != 0); the
      // consumers take turns issuing each half's wgmma (issue 35's step 3a)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled(p, a, b, c, max_blocks);
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled_small_m.cuh: fp8_block_scaled with 64-row tiles (64×256, or 64×128 where K is too
      // short to split) and K split where the tiles leave SMs idle (issue 35's small-M path)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_small_m", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled_small_m(p, a, b, c, max_blocks);
          },
          fp8_block_scaled_rejects, arch::sm90a),
#if MM_APPENDIX_STEPS
      // fp8_clusters.cuh: step 4's plans with each tile's blocks in clusters of two sharing A (1×2) or B (2×1)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_cluster", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled_cluster(p, a, b, c, max_blocks);
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled_stream_k.cuh: fp8_block_scaled with the last round's K blocks spread over every block
      // (chapter 11's stream-K; slower: a stack frame beside the accumulators)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_stream_k", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled_stream_k(p, a, b, c, max_blocks);
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh without flags: A's scales by LDG a step ahead, B's staged in shared
      // memory, each half's read after its wait (the chapter's step until 2026-11-29)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_smem_scales", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            using Kernel = Fp8BlockKernel<Fp8BlockCfg, CollectiveMmaBlockScaled<Fp8BlockCfg>>;
            return prepare_fp8_block_scaled_kernel<Fp8BlockCfg, Kernel>(p, a, b, c, max_blocks, "fp8_block_scaled_smem_scales");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh with kEarlyScales: B's scales read before the step's wgmma (issue 35's step 1)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_early_scales", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            using Kernel = Fp8BlockKernel<Fp8BlockCfg, CollectiveMmaBlockScaled<Fp8BlockCfg, true>>;
            return prepare_fp8_block_scaled_kernel<Fp8BlockCfg, Kernel>(p, a, b, c, max_blocks, "fp8_block_scaled_early_scales");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh, step 2's B half alone: B's scales in registers, A's by LDG (an ablation of step 2)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_register_b_scales", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            using Kernel = Fp8BlockKernel<Fp8BlockCfg, CollectiveMmaBlockScaled<Fp8BlockCfg, true, false, true>>;
            return prepare_fp8_block_scaled_kernel<Fp8BlockCfg, Kernel>(p, a, b, c, max_blocks,
                                                                        "fp8_block_scaled_register_b_scales");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh as the chapter's step was before the turns: the two consumers' wgmma unordered
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_no_turns", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled<Fp8BlockCfg, WarpgroupTurns::none>(p, a, b, c, max_blocks, "fp8_block_scaled_no_turns");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh with turns before each K block's first half only (an ablation of issue 35's step 3a)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_turns_k_block", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled<Fp8BlockCfg, WarpgroupTurns::per_k_block>(p, a, b, c, max_blocks,
                                                                                        "fp8_block_scaled_turns_k_block");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled.cuh with the turns by one barrier.sync met at two places (the chapter's step before
      // the pair of barriers)
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_turns_unaligned", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled<Fp8BlockCfg, WarpgroupTurns::per_half_unaligned>(p, a, b, c, max_blocks,
                                                                                               "fp8_block_scaled_turns_unaligned");
          },
          fp8_block_scaled_rejects, arch::sm90a),
      // fp8_block_scaled_192.cuh: 128×192 tiles in chunks of 128 and 64 columns, both in flight
      prepared_kernel<e4m3, bf16>(
          "fp8_block_scaled_192", DType::e4m3_block,
          [max_blocks](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
            return prepare_fp8_block_scaled_192(p, a, b, c, max_blocks);
          },
          fp8_block_scaled_192_rejects, arch::sm90a),
#endif
  };
}

GemmKernel<e4m3, bf16> fp8_block_scaled_small_m_with(int bm, int bn, int splits, int max_blocks) {
  return prepared_kernel<e4m3, bf16>(
      "fp8_block_scaled_small_m_" + std::to_string(bm) + "x" + std::to_string(bn) + "_x" + std::to_string(splits),
      DType::e4m3_block,
      [max_blocks, bm, bn, splits](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
        return prepare_fp8_block_scaled_small_m(p, a, b, c, max_blocks, Fp8SmallMPlan{bm, bn, splits});
      },
      fp8_block_scaled_rejects, arch::sm90a);
}

GemmKernel<e4m3, bf16> fp8_per_tensor_small_m_with(int bm, int bn, int splits, int max_blocks) {
  return prepared_kernel<e4m3, bf16>(
      "fp8_per_tensor_small_m_" + std::to_string(bm) + "x" + std::to_string(bn) + "_x" + std::to_string(splits), DType::e4m3,
      [max_blocks, bm, bn, splits](const GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
        return prepare_fp8_per_tensor_small_m(p, a, b, c, max_blocks, Fp8SmallMPlan{bm, bn, splits});
      },
      fp8_per_tensor_rejects, arch::sm90a);
}

}  // namespace mm::ch12
