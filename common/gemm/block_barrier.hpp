/// @file block_barrier.hpp
/// @brief The block's barrier as an object, so that a kernel body written as a function of
/// (block, thread) can run on the GPU and, in the CPU tests, on one host thread per GPU thread.
///
///     template <class Barrier> MM_HD void gemm_block(..., int tid, Barrier const& sync_threads);
///     gemm_block(..., int(threadIdx.x), BlockBarrier{});          // in the __global__ kernel
///     gemm_block(..., t, [&] { barrier.arrive_and_wait(); });      // a test: std::barrier, one std::thread per t
#pragma once

#include "layout/all.hpp"

namespace mm {

/// @brief __syncthreads() on the device (on the host, where the tests pass a std::barrier instead, nothing).
struct BlockBarrier {
  /// @brief Waits for every thread of the block.
  MM_HD void operator()() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

}  // namespace mm
