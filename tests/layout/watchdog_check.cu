// Compiled to PTX by the layout_watchdog_* tests (tests/layout/CMakeLists.txt): an mbarrier wait reads
// the wall clock (%globaltimer) only with the watchdog on, so that a build with
// -DMM_MBARRIER_WATCHDOG=OFF can stop at a debugger's breakpoint without trapping.
#include <cstdint>

#include "layout/mbarrier.hpp"

__global__ void wait_on_a_barrier(int* out) {
  __shared__ std::uint64_t bar, word;
  if (threadIdx.x == 0) {
    mm::mbarrier_init(&bar, 1);
    word = 0;
  }
  __syncthreads();
  mm::mbarrier_arrive(&bar);
  mm::WatchdogState watchdog(mm::Watchdog{}, mm::detail::smem_address(&word));
  mm::mbarrier_wait(mm::detail::smem_address(&bar), 0, watchdog);
  out[0] = watchdog.gave_up() ? 0 : 1;
}
