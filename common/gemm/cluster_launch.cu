// Cluster launches and the resident-cluster count of a persistent grid (cluster_launch.hpp).
#include "gemm/cluster_launch.hpp"

#include <stdexcept>
#include <string>

namespace mm {

int device_sm_count() {
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    throw std::runtime_error(std::string("cannot read the GPU's SM count: ") + cudaGetErrorString(e));
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    throw std::runtime_error(std::string("cannot read the GPU's SM count: ") + cudaGetErrorString(e));
  if (sms < 1) throw std::runtime_error("cannot read the GPU's SM count: the driver reports " + std::to_string(sms));
  return sms;
}

}  // namespace mm

namespace mm::detail {

cudaLaunchConfig_t cluster_launch_config(dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t stream,
                                         int cluster_size, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  if (cluster_size > 1) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = unsigned(cluster_size);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  return config;
}

int max_resident_clusters(const void* kernel, int cluster_size, int threads, std::size_t smem_bytes) {
  int count = 0;
  if (cluster_size <= 1) {
    const int sms = device_sm_count();
    int per_sm = 0;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes);
        e != cudaSuccess)
      throw std::runtime_error(std::string("cudaOccupancyMaxActiveBlocksPerMultiprocessor failed: ") +
                               cudaGetErrorString(e));
    count = per_sm * sms;
  } else {
    cudaLaunchAttribute attr{};
    cudaLaunchConfig_t config =
        cluster_launch_config(dim3(unsigned(cluster_size)), dim3(unsigned(threads)), smem_bytes, nullptr, cluster_size, attr);
    if (cudaError_t e = cudaOccupancyMaxActiveClusters(&count, kernel, &config); e != cudaSuccess)
      throw std::runtime_error(std::string("cudaOccupancyMaxActiveClusters failed: ") + cudaGetErrorString(e));
  }
  if (count < 1)
    throw std::runtime_error("not one cluster of " + std::to_string(cluster_size) + " blocks of " +
                             std::to_string(threads) + " threads and " + std::to_string((smem_bytes + 1023) / 1024) +
                             " KB of shared memory fits on this GPU");
  return count;
}

}  // namespace mm::detail
