// The three kernels of test_smem.cpp: declared here for the C++ test, compiled by nvcc in
// smem_kernels.cu. The opt-in takes a kernel's host stub, so each is reached as a pointer too.
#pragma once

#include <cstddef>

namespace mm::test {

/// Writes its block's dynamic shared memory (n ints) and reads it back: a launch that needs the opt-in.
using SmemFillKernel = void (*)(int* out, int n);
SmemFillKernel smem_fill_kernel();
void launch_smem_fill(int* out, int n, std::size_t dynamic_bytes);

/// 16 KB of static shared memory beside the dynamic: that counts against the same limit.
SmemFillKernel smem_static_kernel();

/// Reports where its dynamic shared memory starts, as a shared-window address (2 blocks of 128 threads).
using SmemStartKernel = void (*)(unsigned* out);
SmemStartKernel smem_start_kernel();
void launch_smem_start(unsigned* out, std::size_t dynamic_bytes);

}  // namespace mm::test
