// Chapter 08: tensor cores with mma.sync. bf16 (fp32 accumulation, bf16 C) and tf32 kernels, each
// next to the cuBLAS of its own type, C = A·B (RRR) and C = A·Bᵀ (RCR).
//
// Build: cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "08_tensor_cores/tensor_cores.cuh"
#include "harness/gemm_runner.hpp"

namespace ch08 = mm::ch08;
using bf16 = __nv_bfloat16;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "08_tensor_cores",
      .description = "Chapter 08: mma.sync tensor cores (bf16 m16n8k16, tf32 m16n8k8), ldmatrix, swizzled shared "
                     "memory, a cp.async pipeline; RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm80,
  };
  auto bf16_kernel = [](const char* name, mm::GemmLaunch<bf16, bf16> launch, auto rejects) {
    return mm::GemmKernel<bf16, bf16>{.name = name, .dtype = mm::DType::bf16, .launch = launch, .rejects = rejects,
                                      .needs = mm::arch::sm80};
  };
  auto tf32_kernel = [](const char* name, mm::GemmLaunch<float, float> launch, auto rejects) {
    return mm::GemmKernel<float, float>{.name = name, .dtype = mm::DType::tf32, .launch = launch, .rejects = rejects,
                                        .needs = mm::arch::sm80};
  };
  return mm::run_gemm_chapter(
      argc, argv, chapter,
      mm::GemmKernelGroup<bf16, bf16>{
              .kernels = {
              bf16_kernel("mma_fragments", ch08::launch_tensor_core<ch08::FragmentsCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::FragmentsCfg>),
              bf16_kernel("ldmatrix", ch08::launch_tensor_core<ch08::LdmatrixCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::LdmatrixCfg>),
              bf16_kernel("swizzled", ch08::launch_tensor_core<ch08::SwizzledCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::SwizzledCfg>),
              bf16_kernel("big_tile", ch08::launch_tensor_core<ch08::BigTileCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::BigTileCfg>),
              bf16_kernel("register_pipelined", ch08::launch_tensor_core<ch08::RegisterPipelinedCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::RegisterPipelinedCfg>),
              bf16_kernel("deep_k", ch08::launch_tensor_core<ch08::DeepKCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::DeepKCfg>),
              bf16_kernel("stage_in_pointer", ch08::launch_tensor_core<ch08::StageInPointerCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::StageInPointerCfg>),
              bf16_kernel("zfill_edges", ch08::launch_tensor_core<ch08::ZfillEdgesCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::ZfillEdgesCfg>),
              bf16_kernel("hoisted_swizzle", ch08::launch_tensor_core<ch08::HoistedSwizzleCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::HoistedSwizzleCfg>),
              bf16_kernel("one_copy_path", ch08::launch_tensor_core<ch08::OneCopyPathCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::OneCopyPathCfg>),
              bf16_kernel("no_copy_branch", ch08::launch_tensor_core<ch08::NoCopyBranchCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::NoCopyBranchCfg>),
              bf16_kernel("four_stages", ch08::launch_tensor_core<ch08::FourStagesCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::FourStagesCfg>),
              bf16_kernel("two_blocks_per_sm", ch08::launch_tensor_core<ch08::TwoBlocksCfg, bf16>,
                          ch08::tensor_core_rejects<ch08::TwoBlocksCfg>),
          }},
      mm::GemmKernelGroup<float, float>{
          .baseline = mm::DType::tf32,
          .kernels = {
              tf32_kernel("tf32_fragments", ch08::launch_tensor_core<ch08::Tf32FragmentsCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32FragmentsCfg>),
              tf32_kernel("tf32_swizzled", ch08::launch_tensor_core<ch08::Tf32SwizzledCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32SwizzledCfg>),
              tf32_kernel("tf32_big_tile", ch08::launch_tensor_core<ch08::Tf32BigTileCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32BigTileCfg>),
              tf32_kernel("tf32_stage_in_pointer", ch08::launch_tensor_core<ch08::Tf32StageInPointerCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32StageInPointerCfg>),
              tf32_kernel("tf32_zfill_edges", ch08::launch_tensor_core<ch08::Tf32ZfillEdgesCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32ZfillEdgesCfg>),
              tf32_kernel("tf32_hoisted_swizzle", ch08::launch_tensor_core<ch08::Tf32HoistedSwizzleCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32HoistedSwizzleCfg>),
              tf32_kernel("tf32_no_copy_branch", ch08::launch_tensor_core<ch08::Tf32NoCopyBranchCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32NoCopyBranchCfg>),
              tf32_kernel("tf32_conflict_free_b", ch08::launch_tensor_core<ch08::Tf32ConflictFreeBCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32ConflictFreeBCfg>),
              tf32_kernel("tf32_rounded_once", ch08::launch_tensor_core<ch08::Tf32RoundedOnceCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32RoundedOnceCfg>),
              tf32_kernel("tf32_deep_k", ch08::launch_tensor_core<ch08::Tf32DeepKCfg, float>,
                          ch08::tensor_core_rejects<ch08::Tf32DeepKCfg>),
          }});
}
