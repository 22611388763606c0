// Chapter 05's kernels, compiled once for the chapter binary, its tests and chapter 06 (layout_matmul.cuh).
#include "05_layout_matmul/layout_matmul.cuh"

namespace mm::ch05 {
template void launch_layout_gemm<false>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_layout_gemm<true>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_for_storage_orders<blocktile_1d::Config>(const GemmProblem&, const float*, const float*, float*,
                                                              cudaStream_t);
}  // namespace mm::ch05
