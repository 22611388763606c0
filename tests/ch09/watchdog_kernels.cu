// The kernels of test_ch09's watchdog tests, apart so that the test is compiled as C++ (g++) and only
// these two kernels by nvcc (notes/ci_plan.md, helper hci2).
#include "watchdog_kernels.hpp"

#include <cstdint>

#include "layout/arch.hpp"
#include "layout/mbarrier.hpp"

namespace mm::test {
namespace {

// One thread waits on a barrier that expects one arrival which never comes.
__global__ void wait_forever_kernel() {
  if constexpr (mm::arch::compiled_for(mm::arch::sm90a)) {
    __shared__ std::uint64_t bar;
    mm::mbarrier_init(&bar, 1);
    mm::fence_mbarrier_init();
    mm::mbarrier_wait(&bar, 0);
  }
}

// A consumer's wait, as a pipeline waits: with the process's record, given up after its bound.
__global__ void consumer_waits_forever(mm::Watchdog config) {
  if constexpr (mm::arch::compiled_for(mm::arch::sm90a)) {
    __shared__ std::uint64_t bar, word;
    mm::mbarrier_init(&bar, 1);
    mm::fence_mbarrier_init();
    word = 0;
    mm::WatchdogState watchdog(config, mm::detail::smem_address(&word));
    mm::mbarrier_wait(mm::detail::smem_address(&bar), 0, watchdog, mm::WatchdogSite::consumer_wait, 5);
    mm::watchdog_trap_if_gave_up(watchdog, config.record);  // the kernel's one trap
  }
}

}  // namespace

void launch_wait_forever() { wait_forever_kernel<<<1, 1>>>(); }

void launch_consumer_waits_forever(Watchdog config) { consumer_waits_forever<<<1, 1>>>(config); }

}  // namespace mm::test
