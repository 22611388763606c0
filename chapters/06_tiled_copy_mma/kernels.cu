// Chapter 06's kernels, compiled once for the chapter binary, its tests and chapter 07 (tiled_copy_mma.cuh).
#include "06_tiled_copy_mma/tiled_copy_mma.cuh"

namespace mm::ch06 {
template void launch_tiled<Variant::ldg128>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled<Variant::ldg128_pad4>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled<Variant::vec128>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled<Variant::vec128_uncoalesced>(const GemmProblem&, const float*, const float*, float*,
                                                         cudaStream_t);
template void launch_tiled<Variant::prefetch>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled<Variant::prefetch_pairs_share_a>(const GemmProblem&, const float*, const float*, float*,
                                                             cudaStream_t);
}  // namespace mm::ch06
