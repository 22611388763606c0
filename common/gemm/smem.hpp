/// @file smem.hpp
/// @brief Opting a kernel into more than 48 KB of shared memory per block, with a one-line reason
/// ("needs 100 KB of shared memory per block, this GPU allows 99 KB") instead of a failed launch.
///
/// A kernel gets at most 48 KB of shared memory per block (static plus dynamic) unless it opts in,
/// per kernel and device, with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
/// bytes); past the device's sharedMemPerBlockOptin (227 KB on an H100 or H200) it cannot run at
/// all. Without the opt-in the launch fails with "invalid argument", which names neither.
///
///     opt_in_dynamic_smem(gemm_kernel<Cfg>, smem_bytes);  // throws std::runtime_error(the reason)
///     gemm_kernel<Cfg><<<grid, block, smem_bytes>>>(...);
///
/// or, to report and skip a configuration rather than stop:
///
///     if (std::string why = try_opt_in_dynamic_smem(gemm_kernel<Cfg>, smem_bytes); !why.empty()) return why;
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace mm {

/// @brief The bytes of dynamic shared memory a kernel whose shared memory is the struct `Storage`
/// (its SharedStorage: the rings, the C buffers, the barriers, each member aligned as it needs)
/// asks for: the struct, whose size the compiler sums.
template <class Storage>
constexpr std::size_t shared_storage_bytes() {
  return sizeof(Storage);
}

/// @brief The kernel's SharedStorage in its dynamic shared memory `raw`, declared
/// `extern __shared__ __align__(1024) std::uint8_t raw[]`. Dynamic shared memory starts at a
/// 1024-byte boundary of the block's shared window when the kernel has no static shared memory, as
/// the 128-byte swizzle of TMA and wgmma tiles needs (it is a function of the address); CUTLASS
/// relies on the same, and tests/gemm/test_smem.cpp checks it on the GPU. Rounding the address up at
/// run time instead costs more than it looks: the pointer is then no longer a known offset of the
/// window, and every barrier operation on it recomputes its shared address (chapter 09: 10-12
/// instructions more between a K step's last wgmma and the next TMA, 4-8% slower).
template <class Storage>
__device__ Storage& shared_storage(std::uint8_t* raw) {
  return *reinterpret_cast<Storage*>(raw);
}

/// @brief Shared memory a block may use without opting in: 48 KB, static and dynamic together.
inline constexpr std::size_t smem_default_limit = 48 * 1024;

/// @brief Why a block that needs `needed` bytes of shared memory cannot run where `allowed` bytes
/// are the most a block may have: "needs 100 KB of shared memory per block, this GPU allows 99 KB".
/// Empty when it fits. KB are 1024 bytes, the need rounded up and the limit down, so the two
/// numbers never read as equal when the block does not fit.
inline std::string smem_shortfall(std::size_t needed, std::size_t allowed) {
  if (needed <= allowed) return {};
  return "needs " + std::to_string((needed + 1023) / 1024) + " KB of shared memory per block, this GPU allows " +
         std::to_string(allowed / 1024) + " KB";
}

namespace detail {

/// @brief The opt-in for one kernel (its host stub `func`) on the current device; see try_opt_in_dynamic_smem.
inline std::string opt_in_dynamic_smem(const void* func, std::size_t dynamic_bytes) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    return std::string("no CUDA device for the shared-memory opt-in: ") + cudaGetErrorString(e);
  // The largest dynamic size already granted to (device, kernel): the attribute is set once per
  // kernel, and a later, smaller request costs neither a driver call nor a query.
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, std::size_t> granted;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(device, func);
  if (auto it = granted.find(key); it != granted.end() && dynamic_bytes <= it->second) return {};

  cudaFuncAttributes attr{};
  if (cudaError_t e = cudaFuncGetAttributes(&attr, func); e != cudaSuccess)
    return std::string("cannot query the kernel's shared memory: ") + cudaGetErrorString(e);
  int optin = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device); e != cudaSuccess)
    return std::string("cannot query the GPU's shared-memory limit: ") + cudaGetErrorString(e);
  // Static __shared__ arrays count against the same per-block limit as the dynamic bytes.
  std::string why = smem_shortfall(attr.sharedSizeBytes + dynamic_bytes, std::size_t(optin));
  if (!why.empty()) return why;
  if (dynamic_bytes > std::size_t(attr.maxDynamicSharedSizeBytes)) {
    if (cudaError_t e = cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_bytes));
        e != cudaSuccess)
      return std::string("cudaFuncSetAttribute(MaxDynamicSharedMemorySize) failed: ") + cudaGetErrorString(e);
  }
  granted[key] = dynamic_bytes;
  return {};
}

}  // namespace detail

/// @brief Lets `kernel` launch with `dynamic_bytes` of dynamic shared memory per block on the
/// current device: sets cudaFuncAttributeMaxDynamicSharedMemorySize when the default (48 KB less
/// the kernel's static shared memory) is too small, once per kernel and device.
/// @return Empty on success; else one line saying why not, e.g. "needs 100 KB of shared memory per
/// block, this GPU allows 99 KB" (static plus dynamic against sharedMemPerBlockOptin), or the
/// CUDA error of a failed query.
template <class... Args>
std::string try_opt_in_dynamic_smem(void (*kernel)(Args...), std::size_t dynamic_bytes) {
  return detail::opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), dynamic_bytes);
}

/// @brief try_opt_in_dynamic_smem that throws std::runtime_error with the one-line reason when
/// the kernel cannot have `dynamic_bytes` of dynamic shared memory here.
template <class... Args>
void opt_in_dynamic_smem(void (*kernel)(Args...), std::size_t dynamic_bytes) {
  if (std::string why = try_opt_in_dynamic_smem(kernel, dynamic_bytes); !why.empty()) throw std::runtime_error(why);
}

}  // namespace mm
