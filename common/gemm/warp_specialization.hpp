// What a warp-specialized kernel needs beyond mbarriers: giving registers from one warpgroup to
// another (setmaxnreg, sm_90a), and barriers among a subset of the block's warps (named barriers).
//
//   warpgroup_reg_dealloc<N>()   setmaxnreg.dec: this warpgroup keeps N registers per thread
//   warpgroup_reg_alloc<N>()     setmaxnreg.inc: this warpgroup grows to N registers per thread
//   named_barrier_sync(id, n)    bar.sync id, n: the n threads (whole warps) using barrier id meet
//   named_barrier_sync_unaligned(id, n)  barrier.sync id, n: the same, met at different instructions
//   named_barrier_arrive(id, n)  bar.arrive id, n: counts as arrived, does not wait (a one-way signal)
//
// A block of 384 threads with one register budget for all (65536 / 384 = 168 per thread at one block
// per SM) gives the producer warpgroup, which only issues TMA, far more than it needs and the two
// consumer warpgroups, which hold the accumulators, too few to grow. setmaxnreg moves them: the
// producer drops to 40, then each consumer rises to 232 (40·128 + 2·232·128 = 64512 <= 65536).
// ptxas honours it only when the kernel has a register cap at entry (__launch_bounds__(threads, 1))
// and each role is one branch of one if/else; otherwise it warns (C7508) and ignores it. PTX ISA:
// "setmaxnreg", "bar.sync", "bar.arrive".
#pragma once

#include <cstdint>

#include "layout/mma_sm90.hpp"  // detail::require_sm90a_wgmma: setmaxnreg is sm_90a-only, as wgmma is

namespace mm {

/// `setmaxnreg.dec.sync.aligned.u32 N`: this warpgroup releases registers down to N per thread (N a
/// multiple of 8, 24..256). Every thread of the warpgroup executes it. sm_90a.
template <int N>
MM_HD void warpgroup_reg_dealloc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
  detail::require_sm90a_wgmma<int>();
#if defined(MM_HAVE_WGMMA)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/// `setmaxnreg.inc.sync.aligned.u32 N`: this warpgroup asks for N registers per thread (it waits
/// until another warpgroup's dealloc has freed them). sm_90a.
template <int N>
MM_HD void warpgroup_reg_alloc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
  detail::require_sm90a_wgmma<int>();
#if defined(MM_HAVE_WGMMA)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/// `bar.sync id, threads`: waits until `threads` threads (a multiple of 32, whole warps) have
/// arrived at barrier `id` (1..15; 0 is __syncthreads'). The threads of one consumer warpgroup
/// meet on their own barrier without stopping the producer or the other consumer.
MM_HD void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

/// `barrier.sync id, threads` (not .aligned): bar.sync's wait, for barriers whose warps meet at different
/// instructions. bar.sync is barrier.sync.aligned, which PTX allows only where every thread using the
/// barrier executes the same instruction (compute-sanitizer's synccheck reports the others); two
/// warpgroups that take turns meet where each one's turn begins or ends, at two places in the code.
MM_HD void named_barrier_sync_unaligned(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

/// `bar.arrive id, threads`: counts this warp's threads as arrived at barrier `id` without waiting
/// (CUTLASS's NamedBarrier::arrive). With `bar.sync id, threads` in other warps it is a one-way
/// signal: the ping-pong kernel's consumer hands the tensor cores to the other consumer this way
/// (128 threads arrive, the other 128 sync, `threads` = 256).
MM_HD void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

}  // namespace mm
