/// @file random.hpp
/// @brief Seeded random inputs (uniform in [-1, 1], identical on host and device) and output poisoning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/dtype.hpp"

namespace mm {

/// @brief The i-th value of the random stream `seed`: uniform in [-1, 1], never all zeros.
///
/// A counter-based hash (SplitMix64's finalizer), so element i is the same
/// number whether the host or the device computes it, and a fill of any size
/// is one parallel pass with no generator state.
__host__ __device__ inline float random_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  // 24 high bits -> [0, 1) exactly representable in fp32, then to [-1, 1).
  return float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/// @brief The i-th random element of type T: random_uniform(seed, i) converted to T, except for
/// fp8 e4m3, where it is first stretched to the format's whole range (448·u, rounded to nearest):
/// the codes a per-tensor scale of 1/448 maps back to [-1, 1], normals and subnormals alike.
template <class T> __host__ __device__ inline T random_element(std::uint64_t seed, std::uint64_t i) {
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return T(448.0f * random_uniform(seed, i));
  else return T(random_uniform(seed, i));
}

/// @brief The per-tensor scale that maps random_element<__nv_fp8_e4m3>'s codes back to [-1, 1]:
/// what the drivers give fp8 kernels, so that their inputs stand for the other types' values.
inline constexpr float kRandomE4m3Scale = 1.0f / 448.0f;

/// @brief Fills `count` elements at device pointer `data` with random_element<T>(seed, i).
template <class T> void fill_random_device(T* data, std::size_t count, std::uint64_t seed);

/// @brief Fills a device buffer with random_element<T>(seed, i).
template <class T> void fill_random(DeviceBuffer<T>& buf, std::uint64_t seed) {
  fill_random_device(buf.data(), buf.size(), seed);
}

/// @brief The same values as fill_random, computed on the host.
template <class T> std::vector<T> random_host(std::size_t count, std::uint64_t seed) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = random_element<T>(seed, i);
  return v;
}

/// @brief Sets every byte of a device buffer to 0xFF: NaN in fp32, bf16, fp16 and e4m3, so an element a kernel forgets to write fails the check.
template <class T> void poison(DeviceBuffer<T>& buf) {
  if (buf.size() > 0) MM_CUDA_CHECK(cudaMemset(buf.data(), 0xFF, buf.bytes()));
}

}  // namespace mm
