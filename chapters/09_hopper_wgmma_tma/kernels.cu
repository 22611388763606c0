// Chapter 09's kernels, compiled once for the chapter binary and its tests (wgmma_tma.cuh).
#include "09_hopper_wgmma_tma/wgmma_tma.cuh"

#define MM_CH09_INSTANTIATE(Cfg) \
  template std::function<void(cudaStream_t)> prepare_wgmma<Cfg>(const GemmProblem&, const bf16*, const bf16*, bf16*);
namespace mm::ch09 {
MM_CH09_LADDER(MM_CH09_INSTANTIATE)
}  // namespace mm::ch09
