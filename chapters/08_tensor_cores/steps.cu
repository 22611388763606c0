// Chapter 08's steps: the one place a step is named. The binary (main.cu) and the tests (tests/ch08)
// take these lists; compiling this file compiles every kernel they name, once, into ch08_steps.
//
// Main path (the page's ladder): mma_fragments → ldmatrix → swizzled → register_pipelined →
// hoisted_swizzle → no_copy_branch in bf16, then tf32_no_copy_branch → tf32_conflict_free_b. The
// appendix (-DMM_APPENDIX_STEPS=ON) holds the steps the main path folds in or that measured no gain.
#include "08_tensor_cores/no_copy_branch.cuh"
#include "08_tensor_cores/rounded_once.cuh"
#include "08_tensor_cores/steps.hpp"
#include "08_tensor_cores/two_blocks_per_sm.cuh"

namespace mm::ch08 {
namespace {

using bf16 = __nv_bfloat16;
using Rejects = std::string (*)(const GemmProblem&);

GemmKernel<bf16, bf16> bf16_step(const char* name, GemmLaunch<bf16, bf16> launch, Rejects rejects) {
  return {.name = name, .dtype = DType::bf16, .launch = launch, .rejects = rejects, .needs = arch::sm80};
}
GemmKernel<float, float> tf32_step(const char* name, GemmLaunch<float, float> launch, Rejects rejects) {
  return {.name = name, .dtype = DType::tf32, .launch = launch, .rejects = rejects, .needs = arch::sm80};
}

}  // namespace

std::vector<GemmKernel<bf16, bf16>> bf16_steps() {
  return {
      bf16_step("mma_fragments", launch_mma_fragments<MmaFragmentsCfg, bf16>, tensor_core_rejects<MmaFragmentsCfg>),
      bf16_step("ldmatrix", launch_ldmatrix<LdmatrixCfg, bf16>, tensor_core_rejects<LdmatrixCfg>),
      bf16_step("swizzled", launch_ldmatrix<SwizzledCfg, bf16>, tensor_core_rejects<SwizzledCfg>),
      // big_tile folded in: 128×256 tiles, 8 warps, 4 stages
      bf16_step("register_pipelined", launch_register_pipelined<RegisterPipelinedCfg, bf16>,
                tensor_core_rejects<RegisterPipelinedCfg>),
      // deep_k, stage_in_pointer and zfill_edges folded in (misaligned problems run stage_in_pointer)
      bf16_step("hoisted_swizzle", launch_hoisted_swizzle<HoistedSwizzleCfg, bf16>, tensor_core_rejects<HoistedSwizzleCfg>),
      // one_copy_path folded in
      bf16_step("no_copy_branch", launch_no_copy_branch<NoCopyBranchCfg, bf16>, no_copy_branch_rejects<NoCopyBranchCfg>),
#if MM_APPENDIX_STEPS
      bf16_step("big_tile", launch_ldmatrix<BigTileCfg, bf16>, tensor_core_rejects<BigTileCfg>),
      bf16_step("deep_k", launch_register_pipelined<DeepKCfg, bf16>, tensor_core_rejects<DeepKCfg>),
      bf16_step("stage_in_pointer", launch_stage_in_pointer<StageInPointerCfg, bf16>, tensor_core_rejects<StageInPointerCfg>),
      bf16_step("zfill_edges", launch_zfill_edges<ZfillEdgesCfg, bf16>, tensor_core_rejects<ZfillEdgesCfg>),
      bf16_step("one_copy_path", launch_one_copy_path<OneCopyPathCfg, bf16>, tensor_core_rejects<OneCopyPathCfg>),
      bf16_step("four_stages", launch_no_copy_branch<FourStagesCfg, bf16>, no_copy_branch_rejects<FourStagesCfg>),
      bf16_step("two_blocks_per_sm", launch_two_blocks_per_sm<TwoBlocksPerSmCfg, bf16>,
                tensor_core_rejects<TwoBlocksPerSmCfg>),
#endif
  };
}

std::vector<GemmKernel<float, float>> tf32_steps() {
  return {
      tf32_step("tf32_no_copy_branch", launch_no_copy_branch<Tf32NoCopyBranchCfg, float>,
                no_copy_branch_rejects<Tf32NoCopyBranchCfg>),
      tf32_step("tf32_conflict_free_b", launch_no_copy_branch<Tf32ConflictFreeBCfg, float>,
                no_copy_branch_rejects<Tf32ConflictFreeBCfg>),
#if MM_APPENDIX_STEPS
      tf32_step("tf32_fragments", launch_mma_fragments<Tf32FragmentsCfg, float>, tensor_core_rejects<Tf32FragmentsCfg>),
      tf32_step("tf32_swizzled", launch_ldmatrix<Tf32SwizzledCfg, float>, tensor_core_rejects<Tf32SwizzledCfg>),
      tf32_step("tf32_big_tile", launch_register_pipelined<Tf32BigTileCfg, float>, tensor_core_rejects<Tf32BigTileCfg>),
      tf32_step("tf32_stage_in_pointer", launch_stage_in_pointer<Tf32StageInPointerCfg, float>,
                tensor_core_rejects<Tf32StageInPointerCfg>),
      tf32_step("tf32_zfill_edges", launch_zfill_edges<Tf32ZfillEdgesCfg, float>, tensor_core_rejects<Tf32ZfillEdgesCfg>),
      tf32_step("tf32_hoisted_swizzle", launch_hoisted_swizzle<Tf32HoistedSwizzleCfg, float>,
                tensor_core_rejects<Tf32HoistedSwizzleCfg>),
      tf32_step("tf32_rounded_once", launch_rounded_once<Tf32RoundedOnceCfg, float>,
                no_copy_branch_rejects<Tf32RoundedOnceCfg>),
      tf32_step("tf32_deep_k", launch_rounded_once<Tf32DeepKCfg, float>, no_copy_branch_rejects<Tf32DeepKCfg>),
#endif
  };
}

GemmKernel<bf16, bf16> best() {
  return bf16_step("ch08_no_copy_branch", launch_no_copy_branch<NoCopyBranchCfg, bf16>,
                   no_copy_branch_rejects<NoCopyBranchCfg>);
}

}  // namespace mm::ch08
