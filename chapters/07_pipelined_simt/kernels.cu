// Chapter 07's kernels, compiled once for the chapter binary and its tests (pipelined_simt.cuh).
#include "07_pipelined_simt/pipelined_simt.cuh"

#define MM_CH07_INSTANTIATE(Cfg) \
  template void launch_pipelined<Cfg, false>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
namespace mm::ch07 {
MM_CH07_LADDER(MM_CH07_INSTANTIATE)
}  // namespace mm::ch07
