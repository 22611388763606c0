#include "harness/device_info.hpp"

#include <cuda_runtime.h>

#include <cctype>

namespace mm {

std::string gpu_slug(const std::string& name) {
  std::string s = name;
  for (const char* vendor : {"NVIDIA ", "nvidia "})
    if (s.rfind(vendor, 0) == 0) s = s.substr(std::char_traits<char>::length(vendor));
  std::string out;
  for (char ch : s) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      out += char(std::tolower(static_cast<unsigned char>(ch)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      // Without a driver the runtime says "driver version is insufficient": name the likely cause first.
      d.unavailable = err != cudaSuccess ? std::string("no CUDA GPU or driver found (cudaGetDeviceCount: ") +
                                               cudaGetErrorString(err) + ")"
                                         : "no CUDA GPU found";
      cudaGetLastError();  // clear the sticky-free error so later checks start clean
      return d;
    }
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
      d.unavailable = "cudaGetDeviceProperties failed";
      return d;
    }
    d.present = true;
    d.name = p.name;
    d.slug = gpu_slug(p.name);
    d.cc = p.major * 10 + p.minor;
    d.sm_count = p.multiProcessorCount;
    d.l2_bytes = std::size_t(p.l2CacheSize);
    d.global_bytes = p.totalGlobalMem;
    return d;
  }();
  return info;
}

}  // namespace mm
