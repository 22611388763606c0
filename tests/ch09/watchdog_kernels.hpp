// The two kernels of test_ch09's watchdog tests, each a wait that can never complete: declared here for
// the C++ test, compiled by nvcc in watchdog_kernels.cu. Each launch returns at once (no synchronize).
#pragma once

#include "gemm/watchdog.hpp"

namespace mm::test {

/// One thread waits on a barrier that expects one arrival which never comes.
void launch_wait_forever();
/// A consumer's wait, as a pipeline waits: with the process's record (`config`), given up after its bound.
void launch_consumer_waits_forever(Watchdog config);

}  // namespace mm::test
