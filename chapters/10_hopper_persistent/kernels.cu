// Chapter 10's kernels, compiled once for the chapter binary and its tests (persistent.cuh).
#include "10_hopper_persistent/persistent.cuh"

#define MM_CH10_INSTANTIATE(Cfg)                                                                      \
  template std::function<void(cudaStream_t)> prepare_persistent<Cfg>(const GemmProblem&, const bf16*, \
                                                                      const bf16*, bf16*);
namespace mm::ch10 {
MM_CH10_LADDER(MM_CH10_INSTANTIATE)
}  // namespace mm::ch10
