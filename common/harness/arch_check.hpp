/// @file arch_check.hpp
/// @brief Whether this GPU, with this build, runs a kernel that needs an architecture (layout/arch.hpp).
///
/// Two things must hold: the GPU has the architecture (`needs sm_90a, this GPU is sm_86`), and the
/// binary has code for it. The second fails when the build targeted other architectures (an sm_75
/// build runs on an H200 through the driver's compilation of its PTX, and there every guarded kernel
/// is a stub). A probe kernel, compiled like every other kernel, reports which target's code the GPU
/// actually runs.
#pragma once

#include <string>

#include "layout/arch.hpp"

namespace mm::arch {

/// "sm_80" for at-least requirements, "sm_90a" for exact ones, "any GPU" for arch::any.
std::string name(Requirement r);

/// What the code that runs on this GPU was compiled for, as the probe kernel saw it.
struct RunningTarget {
  int arch = 0;          ///< __CUDA_ARCH__ of the code the GPU runs, e.g. 900 (750 for sm_75 PTX compiled by the driver)
  int arch_specific = 0; ///< __CUDA_ARCH_SPECIFIC__ (900 for sm_90a code), 0 when the code is not arch-specific
};

/// The probe's answer for device 0 (run once, then cached). Needs a GPU (device_info().present).
const RunningTarget& running_target();

/// Empty when this GPU runs code that needs `r` with this build; otherwise one line saying why not:
/// "no CUDA GPU found", "needs sm_90a, this GPU is sm_86", or "needs sm_90a, but this build has no
/// sm_90a code for this GPU (CMAKE_CUDA_ARCHITECTURES=90)".
std::string unmet(Requirement r);

}  // namespace mm::arch
