#include "harness/arch_check.hpp"

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"

#ifndef MM_CUDA_ARCHITECTURES
#define MM_CUDA_ARCHITECTURES "unknown"
#endif

namespace mm::arch {
namespace {

// Compiled for every target of the build, like the chapters' kernels: the GPU runs the variant the
// driver picks for it, and that variant reports what it was compiled for.
__global__ void probe_kernel(RunningTarget* out) {
#if defined(__CUDA_ARCH__)
  out->arch = __CUDA_ARCH__;
#if defined(__CUDA_ARCH_SPECIFIC__)
  out->arch_specific = __CUDA_ARCH_SPECIFIC__;
#endif
#endif
}

}  // namespace

std::string name(Requirement r) {
  if (r.cc == 0) return "any GPU";
  return "sm_" + std::to_string(r.cc) + (r.exact ? "a" : "");
}

const RunningTarget& running_target() {
  static const RunningTarget target = [] {
    DeviceBuffer<RunningTarget> out(1);
    MM_CUDA_CHECK(cudaMemset(out.data(), 0, sizeof(RunningTarget)));
    probe_kernel<<<1, 1>>>(out.data());
    MM_CHECK_LAUNCH();
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    return out.download().front();
  }();
  return target;
}

std::string unmet(Requirement r) {
  const DeviceInfo& dev = device_info();
  if (!dev.present) return dev.unavailable;
  if (r.cc == 0) return {};
  const std::string gpu = "sm_" + std::to_string(dev.cc);
  if (dev.cc < r.cc || (r.exact && dev.cc != r.cc)) return "needs " + name(r) + ", this GPU is " + gpu;
  const RunningTarget& t = running_target();
  const bool has_code = r.exact ? t.arch_specific == r.cc * 10 : t.arch >= r.cc * 10;
  if (!has_code)
    return "needs " + name(r) + ", but this build has no " + name(r) + " code for this " + gpu +
           " GPU (CMAKE_CUDA_ARCHITECTURES=" MM_CUDA_ARCHITECTURES ")";
  return {};
}

}  // namespace mm::arch
