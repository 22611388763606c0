// Shared-memory barriers with transaction counts (mbarrier, sm_90) and the async-proxy fence: how a
// block learns that the copy engine (TMA) has filled a shared tile, and how it tells the issuing
// thread that a tile may be overwritten.
//
// An mbarrier is a 64-bit word in shared memory holding a phase bit, a count of arrivals still
// expected in the current phase, and a count of bytes (transactions) still expected. The phase
// completes, and its bit flips, when both reach zero; the counts then reset for the next phase.
//   mbarrier_init(bar, n)                 n arrivals complete a phase
//   mbarrier_arrive_expect_tx(bar, bytes) one arrival, and `bytes` more to come from async copies
//   (TMA loads)                           each landed byte counts the transaction count down
//   mbarrier_arrive(bar)                  one arrival
//   mbarrier_wait(bar, parity)            returns once the phase with that parity has completed
// A ring of S stages gives each stage a barrier; round r of the ring waits with parity r % 2 (PTX ISA,
// "Parallel Synchronization and Communication Instructions: mbarrier").
#pragma once

#include <cstdint>

#include "layout/copy.hpp"  // detail::smem_address

namespace mm {

namespace detail {
// mbarrier transaction counts and try_wait.parity need sm_90: any other device pass must not compile a
// use (templates, so that only a use fires the check; see copy.hpp).
template <class S>
MM_HD void require_sm90() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900)
  static_assert(sizeof(S) == 0,
                "mbarrier transaction counts and TMA (mbarrier_*, fence_proxy_async_shared, SM90_TMA_*) need "
                "sm_90 or newer: guard the kernel body with `if constexpr (arch::compiled_for(...))` "
                "(layout/arch.hpp)");
#endif
}
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define MM_HAVE_SM90_ASYNC 1
#endif
}  // namespace detail

/// `mbarrier.init.shared::cta.b64`: `arrivals` arrivals complete each phase. One thread initializes;
/// then fence_mbarrier_init() and a block barrier make the word visible to the other threads and
/// to the copy engine before anyone uses it.
template <class = void>
MM_HD void mbarrier_init(std::uint64_t* bar, int arrivals) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(detail::smem_address(bar)), "r"(arrivals) : "memory");
#else
  (void)bar, (void)arrivals;
#endif
}

/// `fence.mbarrier_init.release.cluster`: orders the initializations before later uses by other
/// threads and by the async proxy (the copy engine).
template <class = void>
MM_HD void fence_mbarrier_init() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64`: this thread arrives and announces `bytes` that
/// asynchronous copies will deliver in the current phase. The barrier given by its shared-window
/// address (what detail::smem_address gives; a pipeline keeps its barriers' addresses this way, so
/// the loop does not convert a generic pointer at each use).
template <class = void>
MM_HD void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#else
  (void)bar, (void)bytes;
#endif
}
/// mbarrier_arrive_expect_tx of the barrier at `bar`.
template <class = void>
MM_HD void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  mbarrier_arrive_expect_tx(detail::smem_address(bar), bytes);
}

/// `mbarrier.arrive.shared::cta.b64`: this thread arrives (release: its earlier reads of the guarded
/// tile are done). The barrier given by its shared-window address.
template <class = void>
MM_HD void mbarrier_arrive(std::uint32_t bar) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#else
  (void)bar;
#endif
}
/// mbarrier_arrive of the barrier at `bar`.
template <class = void>
MM_HD void mbarrier_arrive(std::uint64_t* bar) {
  mbarrier_arrive(detail::smem_address(bar));
}

/// `mbarrier.try_wait.parity.shared::cta.b64` once: true when the phase of parity `parity` has
/// completed (acquire: what the phase guarded is then visible). The barrier given by its
/// shared-window address.
template <class = void>
MM_HD bool mbarrier_try_wait(std::uint32_t bar, int parity) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
#else
  (void)bar, (void)parity;
  return true;
#endif
}
/// mbarrier_try_wait of the barrier at `bar`.
template <class = void>
MM_HD bool mbarrier_try_wait(std::uint64_t* bar, int parity) {
  return mbarrier_try_wait(detail::smem_address(bar), parity);
}

/// The watchdog: with MM_MBARRIER_WATCHDOG on (the default; CMake option of the same name), a wait
/// that lasts longer than kMbarrierTimeoutNs is a deadlock and the kernel stops instead of hanging
/// the GPU. The clock is wall-clock time (%globaltimer), so a kernel paused in a debugger (cuda-gdb)
/// at a breakpoint trips it too: configure with -DMM_MBARRIER_WATCHDOG=OFF to step through kernels;
/// the waits are then unbounded. The tests build with it on, and each has a CTest timeout besides.
#ifndef MM_MBARRIER_WATCHDOG
#define MM_MBARRIER_WATCHDOG 1
#endif

/// How long mbarrier_wait waits before it declares a deadlock (with the watchdog on): far beyond
/// any phase of a correct kernel (microseconds), short enough that a test fails instead of hanging.
inline constexpr std::uint64_t kMbarrierTimeoutNs = 4'000'000'000ull;

/// Waits until the phase of parity `parity` has completed. With the watchdog on (see above), gives
/// up after kMbarrierTimeoutNs and returns false: a deadlock (a copy that never lands, an arrival
/// that never comes), which the caller reports (see mbarrier_wait). The clock is read only once the
/// first try has failed, so a wait that succeeds at once costs nothing more. Without the watchdog it
/// waits for as long as it takes and returns true.
template <class = void>
MM_HD bool mbarrier_wait_bounded(std::uint32_t bar, int parity) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  if (mbarrier_try_wait(bar, parity)) return true;
#if MM_MBARRIER_WATCHDOG
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(start));
  while (!mbarrier_try_wait(bar, parity)) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - start > kMbarrierTimeoutNs) return false;
  }
#else
  while (!mbarrier_try_wait(bar, parity)) {
  }
#endif
  return true;
#else
  (void)bar, (void)parity;
  return true;
#endif
}

/// mbarrier_wait_bounded of the barrier at `bar`.
template <class = void>
MM_HD bool mbarrier_wait_bounded(std::uint64_t* bar, int parity) {
  return mbarrier_wait_bounded(detail::smem_address(bar), parity);
}

/// mbarrier_wait_bounded, trapping on a timeout: the launch fails with an error ("unspecified launch
/// failure") instead of hanging the GPU. Not for code with wgmma in flight: a trap on a divergent
/// path there makes ptxas serialize every wgmma of the kernel (warning C7518); such a kernel takes
/// mbarrier_wait_bounded's false, finishes its wgmma and traps after them.
template <class = void>
MM_HD void mbarrier_wait(std::uint64_t* bar, int parity) {
#if defined(__CUDA_ARCH__)
  if (!mbarrier_wait_bounded(bar, parity)) __trap();
#else
  (void)mbarrier_wait_bounded(bar, parity);
#endif
}

/// `fence.proxy.async.shared::cta`: makes this thread's ordinary shared-memory writes visible to the
/// async proxy (TMA stores, wgmma reads of tiles written by ordinary stores), and orders the async
/// proxy's earlier accesses before this thread's later ones. Each writing thread fences, then a
/// barrier.
template <class = void>
MM_HD void fence_proxy_async_shared() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

}  // namespace mm
