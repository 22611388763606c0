/// @file device_info.hpp
/// @brief What GPU (if any) this process sees: name, compute capability, sizes, and versions for the CSV.
#pragma once

#include <cstddef>
#include <string>

namespace mm {

/// @brief The GPU this process runs on, or the reason there is none.
struct DeviceInfo {
  bool present = false;          ///< a usable CUDA device exists
  std::string unavailable;       ///< why not, when !present (one line)
  std::string name;              ///< e.g. "NVIDIA H200"
  std::string slug;              ///< directory name for results, e.g. "h200"
  int cc = 0;                    ///< compute capability as 10*major+minor, e.g. 90
  int sm_count = 0;              ///< streaming multiprocessors
  std::size_t l2_bytes = 0;      ///< L2 cache size
  std::size_t global_bytes = 0;  ///< total device memory
};

/// @brief Queries device 0 (cached after the first call).
const DeviceInfo& device_info();

/// @brief "h200" from "NVIDIA H200", "h100-80gb-hbm3" from "NVIDIA H100 80GB HBM3": lower case, vendor dropped, non-alphanumerics to '-'.
std::string gpu_slug(const std::string& name);

/// @brief CUDA runtime, driver and cuBLAS versions, e.g. "runtime 13.0, driver 13.0, cuBLAS 13.1.0".
std::string cuda_version_string();

}  // namespace mm
