// What a GPU architecture must offer for an instruction or a kernel, and whether the code being
// compiled now offers it.
//
// nvcc compiles every kernel once per target of CMAKE_CUDA_ARCHITECTURES. Some instructions exist
// from one architecture on (cp.async and mma.sync from sm_80: "at least sm_80"); others exist on
// exactly one, in its architecture-specific variant (wgmma and setmaxnreg on sm_90a only: not on
// sm_90, not on Blackwell). A kernel that uses them declares the requirement and guards its body:
//
//   template <class Args>
//   __global__ void kernel(Args args) {
//     if constexpr (arch::compiled_for(arch::sm80)) {
//       ...  // cp.async, mma.sync
//     } else {
//       arch::no_code_for_this_target();  // never launched: the host checks the requirement first
//     }
//   }
//
// In a template, the branch that does not apply to the pass being compiled is discarded, so an
// sm_75 build compiles such a kernel to a stub (and the instruction wrappers' static_asserts, which
// catch an unguarded use, never fire). The host side of the same requirement, "does this GPU, with
// this build, run it?", is harness/arch_check.hpp.
#pragma once

#include "layout/integer.hpp"

namespace mm::arch {

/// What a kernel needs: compute capability `cc` or newer, or (`exact`) the architecture-specific
/// target `sm_<cc>a` and that GPU only.
struct Requirement {
  int cc = 0;          ///< 80 for sm_80, 90 for sm_90a; 0: runs anywhere
  bool exact = false;  ///< true: only `sm_<cc>a` (arch-specific instructions such as wgmma)
};

/// Runs on every GPU the project builds for.
inline constexpr Requirement any{};
/// sm_75 or newer: ldmatrix.
inline constexpr Requirement sm75{75, false};
/// sm_80 or newer: cp.async, mma.sync with bf16/tf32.
inline constexpr Requirement sm80{80, false};
/// Exactly sm_90a (H100, H200): wgmma, setmaxnreg (TMA and mbarrier transaction counts exist on
/// sm_90 too, but the chapters that use them also use wgmma).
inline constexpr Requirement sm90a{90, true};

/// True when the code being compiled now may contain what `r` needs. On the host it is always true
/// (the CPU tests run kernels' block functions on host threads with the atoms' host fallbacks); in a
/// device pass it compares the target being compiled (`__CUDA_ARCH__`, and for an exact requirement
/// the arch-specific target, `__CUDA_ARCH_SPECIFIC__`) with `r`.
MM_HD constexpr bool compiled_for(Requirement r) {
#if defined(__CUDA_ARCH__)
  if (r.exact) {
#if defined(__CUDA_ARCH_SPECIFIC__)
    return __CUDA_ARCH_SPECIFIC__ == r.cc * 10;
#else
    return false;
#endif
  }
  return __CUDA_ARCH__ >= r.cc * 10;
#else
  return (void)r, true;
#endif
}

/// The `else` branch of a guarded kernel: this build has no code for the target it runs on. The
/// host never launches it there (harness/arch_check.hpp); if something does, the launch fails
/// loudly instead of leaving the output unwritten.
MM_HD void no_code_for_this_target() {
#if defined(__CUDA_ARCH__)
  printf("mm: kernel launched on a target it was not compiled for (see arch::compiled_for)\n");
  __trap();
#endif
}

}  // namespace mm::arch
