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

#if defined(__CUDA_ARCH__)
// The GPU's nanosecond clock (%globaltimer), what the watchdog's waits measure their time with.
__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns));
  return ns;
}
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
///   - notes in its block's watchdog word (8 bytes of shared memory: WatchdogState) which thread,
///     barrier, stage and role it was; every wait of the block that spins then stops at once (a
///     deadlocked ring would otherwise cost a full bound per stage). Nothing of this is on the path
///     of a wait that succeeds, and nothing of it holds a register: there, as before the watchdog,
///     one try and a branch;
///   - returns, as if the phase had completed. The kernel runs to its end on whatever its buffers
///     hold, and in one place, after its wgmma have drained (watchdog_trap_if_gave_up), writes a
///     WatchdogRecord (which block, thread, barrier, stage and role) where Watchdog::record points
///     (host-mapped memory, gemm/watchdog.hpp: the host can still read it once the context is gone)
///     and traps. A trap, or the record's stores and fences, on the waits' paths with wgmma in flight
///     would cost the loop: a trap there makes ptxas serialize every wgmma of the kernel (C7518), and
///     the record's stores made the compiler re-converge the warp (WARPSYNC) before each wgmma.
#ifndef MM_MBARRIER_WATCHDOG
#define MM_MBARRIER_WATCHDOG 1
#endif

/// How long a wait waits before it declares a deadlock, unless the host says otherwise (Watchdog):
/// far beyond any phase of a correct kernel (microseconds), short enough that a test fails instead
/// of hanging.
inline constexpr std::uint64_t kMbarrierTimeoutNs = 4'000'000'000ull;
/// How long a wait spins before it looks at its block's watchdog word (did another wait give up?)
/// and at its bound: far beyond a healthy wait (a K step is about a microsecond), far below any bound
/// (a bound shorter than this, MM_WATCHDOG_SECONDS=0.0001 say, acts as this).
inline constexpr std::uint64_t kWatchdogLookAfterNs = 1'000'000ull;

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
  std::uint32_t stage;    ///< the ring's stage (for a fixup: the count of partial sums it waited for)
  std::uint32_t parity;   ///< the phase parity it waited for
  std::uint32_t barrier;  ///< the barrier's shared-window address (for a fixup: the tile, modulo 2^18)
};

/// What a kernel's waits are given: how long to wait, where to leave the record. The default, for a
/// kernel launched without one, is the compile-time bound and no record (the trap still comes).
struct Watchdog {
  WatchdogRecord* record = nullptr;              ///< host-mapped, or null: nothing recorded
  std::uint64_t bound_ns = kMbarrierTimeoutNs;   ///< a wait's bound
};

/// The wait that gave up, packed into the 64 bits of a block's watchdog word (see WatchdogState):
///   bits 0-17 the barrier's shared-window address (for a fixup: the tile, modulo 2^18); bits 18-27
///   the stage (10 bits; for a fixup: the count of partial sums); bit 28 the parity; bits 29-30 the
///   WatchdogSite; bit 31 set; bits 32-63 the thread.
MM_HD constexpr std::uint64_t pack_watchdog(WatchdogSite site, std::uint32_t stage, std::uint32_t parity,
                                            std::uint32_t barrier, std::uint32_t thread) {
  return std::uint64_t(thread) << 32 | 0x80000000u | (std::uint32_t(site) & 3u) << 29 | (parity & 1u) << 28 |
         (stage & 0x3ffu) << 18 | (barrier & 0x3ffffu);
}
/// The record of a packed wait of block `block` (fired 0 for a word of 0: no wait gave up).
MM_HD constexpr WatchdogRecord unpack_watchdog(std::uint64_t word, std::uint32_t block) {
  if (word == 0) return WatchdogRecord{};
  const auto low = std::uint32_t(word);
  return {1u, block, std::uint32_t(word >> 32), low >> 29 & 3u, low >> 18 & 0x3ffu, low >> 28 & 1u, low & 0x3ffffu};
}

/// A block's watchdog: the bound of its waits (a copy of the kernel's parameter, which the compiler
/// reads from the parameter bank rather than keep in a register), and the shared-window address of
/// the block's watchdog word, 8 bytes of shared memory (the pipeline's: PipelineTmaAsync), 0 until a
/// wait gives up, then the first wait that did (pack_watchdog). Nothing of it lives in a register
/// through a kernel's loops: the word is written and read only where a wait has already spun, and at
/// the kernel's end.
struct WatchdogState {
  std::uint64_t bound_ns = kMbarrierTimeoutNs;  ///< a wait's bound
  std::uint32_t word = 0;                       ///< the block's watchdog word (shared-window address)

  MM_HD WatchdogState() = default;
  /// The state of a block launched with `config`, its word at shared-window address `word_address`
  /// (zeroed by one thread before any wait, as the pipeline's barriers are initialized).
  MM_HD WatchdogState(const Watchdog& config, std::uint32_t word_address) : bound_ns(config.bound_ns), word(word_address) {}

  /// The block's word: 0, or the wait that gave up.
  MM_HD std::uint64_t read() const {
#if defined(__CUDA_ARCH__)
    std::uint64_t w;
    asm volatile("ld.volatile.shared.u64 %0, [%1];\n" : "=l"(w) : "r"(word) : "memory");
    return w;
#else
    return 0;
#endif
  }
  /// True once a wait of the block gave up.
  MM_HD bool gave_up() const { return read() != 0; }
  /// This thread's wait for (site, stage, parity, barrier) gave up: the block's word keeps the first.
  MM_HD void give_up(WatchdogSite site, std::uint32_t stage, std::uint32_t parity, std::uint32_t barrier) {
#if defined(__CUDA_ARCH__)
    const std::uint64_t mine = pack_watchdog(site, stage, parity, barrier, threadIdx.x);
    [[maybe_unused]] std::uint64_t old;  // the first record stays; which one it was is not needed
    asm volatile("atom.shared.cas.b64 %0, [%1], 0, %2;\n" : "=l"(old) : "r"(word), "l"(mine) : "memory");
#else
    (void)site, (void)stage, (void)parity, (void)barrier;
#endif
  }
};

/// The one place a kernel traps for its watchdog: after its wgmma have drained (see above), when a
/// wait of its block gave up. It first leaves the wait's record at `record` (host-mapped: the host
/// reads it after the failed launch, gemm/watchdog.hpp), unless a record is there already (blocks
/// that give up at the same moment may mix their fields); then the launch fails ("unspecified launch
/// failure").
MM_HD void watchdog_trap_if_gave_up(const WatchdogState& watchdog, WatchdogRecord* record = nullptr) {
#if defined(__CUDA_ARCH__)
  if (const std::uint64_t word = watchdog.read(); word != 0) {
    if (record != nullptr) {
      volatile WatchdogRecord* r = record;
      if (r->fired == 0) {
        const WatchdogRecord mine = unpack_watchdog(word, blockIdx.x);
        r->block = mine.block;
        r->thread = mine.thread;
        r->site = mine.site;
        r->stage = mine.stage;
        r->parity = mine.parity;
        r->barrier = mine.barrier;
        __threadfence_system();
        r->fired = 1;
        __threadfence_system();
      }
    }
    __trap();
  }
#else
  (void)watchdog, (void)record;
#endif
}

/// Waits until the phase of parity `parity` of the barrier at shared-window address `bar` has
/// completed. With the watchdog on, gives up after `watchdog.bound_ns` (see above); `site` and
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
  const std::uint64_t start = detail::global_timer_ns();
  while (!mbarrier_try_wait(bar, parity)) {
    // A turn of the spin is a try, a clock read and one comparison: the block's word is looked at
    // only once the wait has lasted kWatchdogLookAfterNs (a load on every turn delays the wake-up of
    // every wait that spins; with this and the pipeline's held addresses, chapter 11's 7-25 us kernels
    // came back 2-5% faster, to their speed before the composition).
    const std::uint64_t waited = detail::global_timer_ns() - start;
    if (waited > kWatchdogLookAfterNs) {
      if (waited > watchdog.bound_ns) {
        watchdog.give_up(site, stage, std::uint32_t(parity), bar);
        return;
      }
      if (watchdog.gave_up()) return;  // another wait of the block gave up: a deadlock, stop waiting
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

/// Waits on the barrier at `bar` for a kernel without a pipeline (and without wgmma in flight: see
/// above): with the watchdog on, a wait that lasts longer than kMbarrierTimeoutNs traps at once.
template <class = void>
MM_HD void mbarrier_wait(std::uint64_t* bar, int parity) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  const std::uint32_t b = detail::smem_address(bar);
  if (mbarrier_try_wait(b, parity)) return;
#if MM_MBARRIER_WATCHDOG
  const std::uint64_t start = detail::global_timer_ns();
  while (!mbarrier_try_wait(b, parity)) {
    if (detail::global_timer_ns() - start > kMbarrierTimeoutNs) __trap();
  }
#else
  while (!mbarrier_try_wait(b, parity)) {
  }
#endif
#else
  (void)bar, (void)parity;
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
