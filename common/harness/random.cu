#include "harness/random.hpp"

#include <algorithm>

namespace mm {
namespace {
template <class T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = random_element<T>(seed, i);
}
}  // namespace

template <class T> void fill_random_device(T* data, std::size_t count, std::uint64_t seed) {
  if (count == 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + 255) / 256, 65535);
  fill_random_kernel<<<unsigned(blocks), 256>>>(data, count, seed);
  MM_CHECK_LAUNCH();
}

template void fill_random_device<float>(float*, std::size_t, std::uint64_t);
template void fill_random_device<double>(double*, std::size_t, std::uint64_t);
template void fill_random_device<__nv_bfloat16>(__nv_bfloat16*, std::size_t, std::uint64_t);
template void fill_random_device<__half>(__half*, std::size_t, std::uint64_t);
template void fill_random_device<__nv_fp8_e4m3>(__nv_fp8_e4m3*, std::size_t, std::uint64_t);
}  // namespace mm
