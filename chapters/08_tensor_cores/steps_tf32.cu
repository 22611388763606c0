// Chapter 08's tf32 steps (fp32 in memory, the inputs rounded to tf32): the second half of the
// chapter's list (steps.cu has the bf16 steps), in a file of its own so that the two halves compile in
// parallel. The main path ends with the best bf16 kernel carried over to the tf32 atom and one tf32
// change; the appendix (-DMM_APPENDIX_STEPS=ON) holds the tf32 ladder that led there and the dead ends.
#include "08_tensor_cores/no_copy_branch.cuh"
#include "08_tensor_cores/rounded_once.cuh"
#include "08_tensor_cores/steps.hpp"

namespace mm::ch08 {
namespace {

using Rejects = std::string (*)(const GemmProblem&);

GemmKernel<float, float> tf32_step(const char* name, GemmLaunch<float, float> launch, Rejects rejects) {
  return {.name = name, .dtype = DType::tf32, .launch = launch, .rejects = rejects, .needs = arch::sm80};
}

}  // namespace

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

}  // namespace mm::ch08
