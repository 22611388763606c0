/// @file workspace.hpp
/// @brief Zeroing a kernel's workspace (CUTLASS's `zero_workspace`), done when the call returns.
///
/// A split-K or stream-K kernel, and chapter 11's decode kernel that splits K across blocks, count
/// arrivals in a workspace: its counters must be zero before the first launch (each launch leaves them
/// at zero again). The workspace is zeroed once, when the GEMM is prepared; the prepared GEMM
/// (gemm/prepared_gemm.hpp) then runs on whatever stream its caller hands it, later, often a stream
/// created with cudaStreamNonBlocking (PyTorch's are). A cudaMemset on the legacy default stream is not
/// ordered before work on such a stream: the kernel could count from the bytes cudaMalloc left there.
///
/// Where ours differs from CUTLASS: `cutlass::zero_workspace(workspace, bytes, stream)` queues the
/// zeros on the stream its caller will launch on; ours takes no stream, zeroes on a non-blocking stream
/// of its own (it waits for no other stream's work) and returns once the zeros are in memory, so the
/// prepared GEMM may run on any stream. Preparation happens once per problem; the wait costs a few
/// microseconds there, never in a launch.
#pragma once

#include <cstddef>

namespace mm {

/// Sets the `bytes` bytes at device pointer `ptr` to zero and returns when they are (see the file
/// comment). Nothing to do when `bytes` is 0. Throws std::runtime_error when CUDA refuses (the line
/// names the call).
void zero_workspace(void* ptr, std::size_t bytes);

}  // namespace mm
