/// @file device_buffer.hpp
/// @brief A device allocation that frees itself, with copies to and from the host.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "harness/cuda_check.hpp"

namespace mm {

/// @brief `count` elements of T in device memory (cudaMalloc), freed by the destructor. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// @brief Allocates `count` elements (uninitialized).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) MM_CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  /// @brief Allocates and copies `host` to the device.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// @brief Takes over `o`'s allocation; `o` is left empty.
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  /// @brief Swaps allocations with `o` (which frees ours when it dies).
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }

  /// @brief Device pointer to the first element.
  T* data() { return ptr_; }
  /// @brief Device pointer to the first element.
  const T* data() const { return ptr_; }
  /// @brief Number of elements.
  std::size_t size() const { return count_; }
  /// @brief Size in bytes.
  std::size_t bytes() const { return count_ * sizeof(T); }

  /// @brief Copies `host` (exactly size() elements) to the device.
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) cuda_fail("DeviceBuffer::upload", __FILE__, __LINE__, "size mismatch");
    if (count_ > 0) MM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// @brief Copies the buffer back to a new host vector.
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) MM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace mm
