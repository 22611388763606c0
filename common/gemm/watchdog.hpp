/// @file watchdog.hpp
/// @brief The host's side of the mbarrier watchdog (layout/mbarrier.hpp): where a kernel's waits
/// leave their record, how long they wait, and the one line the host prints when one gave up.
///
/// A kernel whose wait gave up traps, and a trapped context can no longer be read: the record lives in
/// pinned host memory mapped into the GPU's address space, which the host reads after the failed
/// synchronization. Every launch of the process shares one record; host_watchdog() allocates it the
/// first time it is asked for (thread-safe), and the kernel adapters (gemm/kernel_adapter.hpp) put it
/// into each kernel's parameters.
///
/// The bound: kMbarrierTimeoutNs (4 s), or MM_WATCHDOG_SECONDS when that is set (a positive number of
/// seconds). Under a CUDA tool that injects itself into the process (Nsight Compute and Nsight Systems
/// set CUDA_INJECTION64_PATH; compute-sanitizer sets NV_SANITIZER_INJECTION_PORT_BASE and points
/// NVTX_INJECTION64_PATH at its library), the
/// kernels run tens to thousands of times slower and a correct wait can last minutes: the bound is
/// then kToolBoundScale times longer (20 minutes), unless MM_WATCHDOG_SECONDS says otherwise. Under
/// racecheck, a launch of chapter 11's clustered A-multicast tiles at 129×264×72 (2 K steps; 50-220 ms
/// a launch there as a rule) took 45-69 s in some processes and completed correct with a 240-s bound,
/// where 20, 60 and 200 s had trapped (session 2026-12-02, profiles/session_2026-12-02_lead.txt).
#pragma once

#include <cstdint>
#include <string>

#include "layout/mbarrier.hpp"

namespace mm {

/// @brief How much longer a wait may last under a CUDA tool than alone (see the file comment).
inline constexpr std::uint64_t kToolBoundScale = 300;

/// @brief The bound of a wait for a process whose environment has MM_WATCHDOG_SECONDS =
/// `seconds_env` (null: unset) and runs under a CUDA tool or not: see the file comment. A value that
/// is not a positive number gives the default here; the process refuses it (watchdog_bound_or_exit).
std::uint64_t watchdog_bound_ns(const char* seconds_env, bool under_tool);

/// @brief Whether MM_WATCHDOG_SECONDS = `seconds_env` is usable: unset (null), empty, or a positive
/// number of seconds below 1e9 ("30", "0.5"); not "0", "-3", "ten" or "5s".
bool watchdog_seconds_valid(const char* seconds_env);

/// @brief watchdog_bound_ns, but a value that is not valid (watchdog_seconds_valid) prints one line
/// naming it and exits with status 2: what the process does at its first launch that needs the bound.
std::uint64_t watchdog_bound_or_exit(const char* seconds_env, bool under_tool);

/// @brief True when a CUDA tool has injected itself into this process (see the file comment).
bool running_under_cuda_tool();

/// @brief The process's watchdog for a kernel's parameters: the mapped record (allocated once; null
/// when no GPU can map host memory, and then nothing is recorded) and the bound of this process.
Watchdog host_watchdog();

/// @brief One line naming the wait that gave up, if one did since the process started (or since
/// watchdog_clear): "mbarrier watchdog: block 3, thread 130 (a consumer waiting for stage 2 to land,
/// parity 1) waited more than 4 s: a deadlock; the kernel trapped". Empty when none did.
std::string watchdog_report();

/// @brief The line watchdog_report prints for `record`, waited for up to `bound_ns`: what the tests
/// check without a GPU. Empty when the record has not fired.
std::string describe_watchdog_record(const WatchdogRecord& record, std::uint64_t bound_ns);

/// @brief Forgets the record (its `fired` back to 0): a test that provokes a deadlock in a fresh
/// process needs none; a long-lived process that recovers its context after one does.
void watchdog_clear();

}  // namespace mm
