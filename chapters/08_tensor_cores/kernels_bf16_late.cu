// Chapter 08's bf16 kernels after stage_in_pointer, compiled once for the chapter binary and its tests (tensor_cores.cuh).
#include "08_tensor_cores/tensor_cores.cuh"

namespace mm::ch08 {
MM_CH08_BF16_LATE(MM_CH08_INSTANTIATE)
}  // namespace mm::ch08
