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
/// that lasts longer than its bound is a deadlock: the wait gives up instead of hanging the GPU. The
/// clock is wall-clock time (%globaltimer), so a kernel paused in a debugger (cuda-gdb) at a
/// breakpoint trips it too: configure with -DMM_MBARRIER_WATCHDOG=OFF to step through kernels; the
/// waits are then unbounded. The tests build with it on, and each has a CTest timeout besides.
///
/// The waits return nothing, as CUTLASS's do: a kernel's control flow does not carry the watchdog.
/// A wait that gives up
///   - writes a WatchdogRecord (which block, thread, barrier, stage and role) where Watchdog::record
///     points: host-mapped memory (gemm/watchdog.hpp allocates it), so the host can still read it
///     once the kernel has trapped and the context is gone;
///   - marks its thread's WatchdogState: that thread's later waits no longer wait (a deadlocked ring
///     would otherwise cost a full bound per stage);
///   - returns, as if the phase had completed. The kernel runs to its end on whatever its buffers
///     hold, and traps in one place, after its wgmma have drained (watchdog_trap_if_gave_up): a trap
///     on a path with wgmma in flight would make ptxas serialize every wgmma of the kernel (C7518).
#ifndef MM_MBARRIER_WATCHDOG
#define MM_MBARRIER_WATCHDOG 1
#endif

/// How long a wait waits before it declares a deadlock, unless the host says otherwise (Watchdog):
/// far beyond any phase of a correct kernel (microseconds), short enough that a test fails instead
/// of hanging.
inline constexpr std::uint64_t kMbarrierTimeoutNs = 4'000'000'000ull;

/// Which wait gave up: the role of the barrier in its kernel.
enum class WatchdogSite : std::uint32_t {
  other = 0,         ///< a wait outside a pipeline
  producer_acquire,  ///< the producer, on a stage's empty barrier (no consumer released it)
  consumer_wait,     ///< a consumer, on a stage's full barrier (its bytes never landed)
  fixup,             ///< split-K or stream-K: a block waiting for the partial sums of others
};

/// What the first wait that gave up in a launch writes for the host (gemm/watchdog.hpp prints it).
struct WatchdogRecord {
  std::uint32_t fired;    ///< 0 until a wait gives up
  std::uint32_t block;    ///< blockIdx.x of the thread that gave up
  std::uint32_t thread;   ///< its threadIdx.x
  std::uint32_t site;     ///< a WatchdogSite
  std::uint32_t stage;    ///< the ring's stage (or the tile, for a fixup)
  std::uint32_t parity;   ///< the phase parity it waited for (or the count it waited for, for a fixup)
  std::uint32_t barrier;  ///< the barrier's shared-window address (0 for a fixup)
};

/// What a kernel's waits are given: how long to wait, where to leave the record. The default, for a
/// kernel launched without one, is the compile-time bound and no record (the trap still comes).
struct Watchdog {
  WatchdogRecord* record = nullptr;              ///< host-mapped, or null: nothing recorded
  std::uint64_t bound_ns = kMbarrierTimeoutNs;   ///< a wait's bound
};

/// One thread's watchdog: the launch's Watchdog, and whether a wait of this thread has given up.
struct WatchdogState {
  Watchdog config;       ///< from the kernel's parameters
  bool gave_up = false;  ///< a wait of this thread has given up: its later waits return at once

  /// Records the wait that gives up (the launch's first, as far as the record can tell; threads that
  /// give up at the same moment may mix their fields) and marks this thread.
  MM_HD void give_up(WatchdogSite site, std::uint32_t stage, std::uint32_t parity, std::uint32_t barrier) {
#if defined(__CUDA_ARCH__)
    if (config.record != nullptr) {
      volatile WatchdogRecord* r = config.record;
      if (r->fired == 0) {
        r->block = blockIdx.x;
        r->thread = threadIdx.x;
        r->site = std::uint32_t(site);
        r->stage = stage;
        r->parity = parity;
        r->barrier = barrier;
        __threadfence_system();
        r->fired = 1;
        __threadfence_system();
      }
    }
#else
    (void)site, (void)stage, (void)parity, (void)barrier;
#endif
    gave_up = true;
  }
};

/// The one place a kernel traps for its watchdog: after its wgmma have drained (see above), when a
/// wait of this thread gave up. The launch then fails ("unspecified launch failure") and the host
/// reads the record (gemm/watchdog.hpp).
MM_HD void watchdog_trap_if_gave_up(const WatchdogState& watchdog) {
#if defined(__CUDA_ARCH__)
  if (watchdog.gave_up) __trap();
#else
  (void)watchdog;
#endif
}

/// Waits until the phase of parity `parity` of the barrier at shared-window address `bar` has
/// completed. With the watchdog on, gives up after `watchdog.config.bound_ns` (see above); `site` and
/// `stage` say what the wait was for, in the record. The clock is read only once the first try has
/// failed, so a wait that succeeds at once costs nothing more. Without the watchdog it waits for as
/// long as it takes.
template <class = void>
MM_HD void mbarrier_wait(std::uint32_t bar, int parity, WatchdogState& watchdog, WatchdogSite site = WatchdogSite::other,
                         std::uint32_t stage = 0) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  if (mbarrier_try_wait(bar, parity)) return;
#if MM_MBARRIER_WATCHDOG
  if (watchdog.gave_up) return;  // slow path only: a deadlocked thread no longer waits
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(start));
  while (!mbarrier_try_wait(bar, parity)) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - start > watchdog.config.bound_ns) {
      watchdog.give_up(site, stage, std::uint32_t(parity), bar);
      return;
    }
  }
#else
  (void)watchdog, (void)site, (void)stage;
  while (!mbarrier_try_wait(bar, parity)) {
  }
#endif
#else
  (void)bar, (void)parity, (void)watchdog, (void)site, (void)stage;
#endif
}

/// mbarrier_wait of the barrier at `bar`, for a kernel without a pipeline: it traps at once when the
/// wait gives up, so it is not for code with wgmma in flight (see above); such code waits through
/// its pipeline and traps in watchdog_trap_if_gave_up.
template <class = void>
MM_HD void mbarrier_wait(std::uint64_t* bar, int parity) {
  WatchdogState watchdog;
  mbarrier_wait(detail::smem_address(bar), parity, watchdog);
  watchdog_trap_if_gave_up(watchdog);
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
