// Chapter 10's steps, in the order of its page: the one list the binary, the tests and the compiled
// kernels come from (docs/extending.md). A new step is one line here.
#include "10_hopper_persistent/steps.hpp"

#include <utility>

#include "10_hopper_persistent/cluster_multicast.cuh"
#include "10_hopper_persistent/persistent.cuh"
#include "10_hopper_persistent/tma_store.cuh"
#include "10_hopper_persistent/warp_specialized.cuh"

namespace mm::ch10 {

namespace {
/// A step whose launch is prepared once per problem (tensor maps, the grid): bf16, sm_90a.
GemmKernel<bf16, bf16> step(const char* name, GemmPrepare<bf16, bf16> prepare,
                            std::function<std::string(const GemmProblem&)> rejects) {
  return prepared_kernel<bf16, bf16>(name, DType::bf16, std::move(prepare), std::move(rejects), arch::sm90a);
}
}  // namespace

std::vector<GemmKernel<bf16, bf16>> steps() {
  return {
      // warp_specialized.cuh: a producer warpgroup and two consumer warpgroups, one block per tile
      step("warp_specialized", prepare_warp_specialized<WarpSpecializedCfg>, warp_specialized_rejects<WarpSpecializedCfg>),
      // persistent.cuh: blocks that stay resident and loop over tiles in a grouped order
      step("persistent", [](auto const& p, auto a, auto b, auto c) { return prepare_persistent<PersistentCfg>(p, a, b, c); },
           persistent_rejects<PersistentCfg>),
      // tma_store.cuh: C through shared memory (stmatrix) and TMA stores
      step("tma_store", [](auto const& p, auto a, auto b, auto c) { return prepare_tma_store<TmaStoreCfg>(p, a, b, c); },
           tma_store_rejects<TmaStoreCfg>),
      // cluster_multicast.cuh: clusters of 2 blocks sharing B by TMA multicast
      step("cluster_multicast",
           [](auto const& p, auto a, auto b, auto c) { return prepare_cluster_multicast<ClusterCfg>(p, a, b, c); },
           cluster_multicast_rejects<ClusterCfg>),
  };
}

std::vector<GemmKernel<bf16, bf16>> persistent_steps_on_grid(int max_blocks) {
  auto on_grid = [max_blocks](auto prepare) {
    return [=](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c) { return prepare(p, a, b, c, max_blocks); };
  };
  return {
      step("persistent", on_grid(prepare_persistent<PersistentCfg>), persistent_rejects<PersistentCfg>),
      step("tma_store", on_grid(prepare_tma_store<TmaStoreCfg>), tma_store_rejects<TmaStoreCfg>),
      step("cluster_multicast", on_grid(prepare_cluster_multicast<ClusterCfg>), cluster_multicast_rejects<ClusterCfg>),
  };
}

GemmKernel<bf16, bf16> best() { return kernel_named(steps(), "tma_store", "ch10_tma_store"); }

}  // namespace mm::ch10
