/// @file cluster_launch.hpp
/// @brief Launching a kernel in thread-block clusters, and how many clusters (or blocks) of a kernel
/// the GPU can hold at once: the grid size of a persistent kernel.
///
/// @code
///   const int resident = mm::max_resident_clusters(kernel, 2, 384, smem_bytes);  // e.g. 66 on an H200
///   mm::launch_in_clusters(kernel, dim3(2 * resident), dim3(384), smem_bytes, stream, 2, params);
/// @endcode
///
/// A cluster's blocks are scheduled together on one GPC (graphics processing cluster) of the GPU;
/// how many clusters fit depends on how the GPC's SMs are free, so the count comes from the driver
/// (cudaOccupancyMaxActiveClusters), never from the SM count divided by the cluster size.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace mm {

/// @brief The current GPU's SM count (a driver query). Throws std::runtime_error("cannot read the
/// GPU's SM count: <reason>") when there is no device or the query fails.
int device_sm_count();

namespace detail {
/// @brief See max_resident_clusters.
int max_resident_clusters(const void* kernel, int cluster_size, int threads, std::size_t smem_bytes);
/// @brief The launch configuration of launch_in_clusters (the attribute lives in `attr`).
cudaLaunchConfig_t cluster_launch_config(dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t stream,
                                         int cluster_size, cudaLaunchAttribute& attr);
}  // namespace detail

/// @brief How many clusters of `cluster_size` blocks (`threads` threads, `smem_bytes` of dynamic
/// shared memory each) of `kernel` the current GPU can run at the same time: the most a
/// persistent grid should have. For cluster_size 1, the resident blocks (blocks per SM × SMs).
/// Throws std::runtime_error when not even one fits (the reason in one line), or a query fails.
/// The kernel must already be opted in to its shared memory (gemm/smem.hpp).
template <class... Args>
int max_resident_clusters(void (*kernel)(Args...), int cluster_size, int threads, std::size_t smem_bytes) {
  return detail::max_resident_clusters(reinterpret_cast<const void*>(kernel), cluster_size, threads, smem_bytes);
}

/// @brief Launches `kernel<<<grid, block, smem_bytes, stream>>>(args...)` with clusters of
/// `cluster_size` blocks along x (grid.x must be a multiple of it); cluster_size 1 is a plain launch.
/// Returns the launch's error (cudaSuccess when it was queued).
template <class... Params, class... Args>
cudaError_t launch_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem_bytes,
                               cudaStream_t stream, int cluster_size, Args&&... args) {
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t config = detail::cluster_launch_config(grid, block, smem_bytes, stream, cluster_size, attr);
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace mm
