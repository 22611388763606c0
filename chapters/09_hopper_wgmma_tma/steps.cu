// Chapter 09's steps, in the order of its page: the one list the binary, the tests and the compiled
// kernels come from (docs/extending.md). A new step is one line here.
#include "09_hopper_wgmma_tma/steps.hpp"


#include "09_hopper_wgmma_tma/wgmma_cp_async.cuh"
#include "09_hopper_wgmma_tma/wgmma_in_flight.cuh"
#include "09_hopper_wgmma_tma/wgmma_tma.cuh"

namespace mm::ch09 {

std::vector<GemmKernel<bf16, bf16>> steps() {
  // Each step: its name, how it launches (prepared once per problem where it builds tensor maps),
  // the sizes it takes. All need wgmma, hence sm_90a.
  return {
      // wgmma_cp_async.cuh: wgmma from shared-memory descriptors, tiles by chapter 08's cp.async ring
      {.name = "wgmma_cp_async", .dtype = DType::bf16, .launch = launch_wgmma_cp_async<WgmmaCpAsyncCfg>,
       .rejects = wgmma_cp_async_rejects<WgmmaCpAsyncCfg>, .needs = arch::sm90a},
      // wgmma_tma.cuh: the tiles loaded by TMA, an mbarrier pipeline
      prepared_kernel<bf16, bf16>("tma", DType::bf16, prepare_wgmma_tma<TmaCfg>, wgmma_tma_rejects<TmaCfg>, arch::sm90a),
      // the same kernel, 128×128 tiles: two warpgroups share each B tile
      prepared_kernel<bf16, bf16>("two_consumers", DType::bf16, prepare_wgmma_tma<TwoConsumersCfg>,
                                  wgmma_tma_rejects<TwoConsumersCfg>, arch::sm90a),
      // the same kernel, 128×256 tiles
      prepared_kernel<bf16, bf16>("big_tile", DType::bf16, prepare_wgmma_tma<BigTileCfg>, wgmma_tma_rejects<BigTileCfg>,
                                  arch::sm90a),
      // wgmma_in_flight.cuh: one wgmma group left running across the wait for the next stage
      prepared_kernel<bf16, bf16>("wgmma_in_flight", DType::bf16, prepare_wgmma_in_flight<InFlightCfg>,
                                  wgmma_in_flight_rejects<InFlightCfg>, arch::sm90a),
  };
}

GemmKernel<bf16, bf16> best() { return kernel_named(steps(), "wgmma_in_flight", "ch09_wgmma_in_flight"); }

}  // namespace mm::ch09
