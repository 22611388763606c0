// Chapter 08's bf16 steps and best(): with steps_tf32.cu, the one place a step is named. The binary
// (main.cu) and the tests (tests/ch08) take these lists; compiling the two files compiles every kernel
// they name, once, into ch08_steps. (Two files, one per element type, so that the two halves compile
// in parallel: in one file, with the appendix, the chapter's 46 kernels took 3.4 minutes of one core.)
//
// Main path (the page's ladder): mma_fragments → ldmatrix → swizzled → register_pipelined →
// hoisted_swizzle → no_copy_branch in bf16, then tf32_no_copy_branch → tf32_conflict_free_b
// (steps_tf32.cu). The appendix (-DMM_APPENDIX_STEPS=ON) holds the steps the main path folds in and
// the measured dead ends.
#include "08_tensor_cores/no_copy_branch.cuh"
#include "08_tensor_cores/precomputed_addresses.cuh"
#include "08_tensor_cores/steps.hpp"
#include "08_tensor_cores/two_blocks_per_sm.cuh"

namespace mm::ch08 {
namespace {

using bf16 = __nv_bfloat16;
using Rejects = std::string (*)(const GemmProblem&);

GemmKernel<bf16, bf16> bf16_step(const char* name, GemmLaunch<bf16, bf16> launch, Rejects rejects) {
  return {.name = name, .dtype = DType::bf16, .launch = launch, .rejects = rejects, .needs = arch::sm80};
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
      // issue 26: four warps per scheduler in one block (16 warps of 32×64), the register pipeline kept
      bf16_step("sixteen_warps", launch_no_copy_branch<SixteenWarpsCfg, bf16>, no_copy_branch_rejects<SixteenWarpsCfg>),
      // issue 26, direction (a): the K loop's addresses computed before the loop (7% fewer instructions, +1%:
      // inside the run-to-run spread at 8192³)
      bf16_step("precomputed_addresses", launch_precomputed_addresses<PrecomputedAddressesCfg, bf16>,
                no_copy_branch_rejects<PrecomputedAddressesCfg>),
#endif
  };
}

GemmKernel<bf16, bf16> best() {
  return bf16_step("ch08_no_copy_branch", launch_no_copy_branch<NoCopyBranchCfg, bf16>,
                   no_copy_branch_rejects<NoCopyBranchCfg>);
}

}  // namespace mm::ch08
