// The kernels of test_smem.cpp, apart so that the test is compiled as C++ (g++) and only these kernels
// by nvcc (notes/ci_plan.md, helper hci2).
#include "smem_kernels.hpp"

#include <cstdint>

namespace mm::test {
namespace {

// Writes its block's dynamic shared memory and reads it back: a launch that needs the opt-in.
__global__ void smem_fill(int* out, int n) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[n - 1];
}

// A kernel with 16 KB of static shared memory: that counts against the same limit.
__global__ void smem_static(int* out, int n) {
  __shared__ int fixed[4096];
  extern __shared__ int buf[];
  fixed[threadIdx.x] = int(threadIdx.x);
  buf[threadIdx.x % n] = fixed[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[0];
}

// Reports where its dynamic shared memory starts, as a shared-window address (cvta.to.shared).
__global__ void smem_start(unsigned* out) {
  extern __shared__ __align__(1024) std::uint8_t raw[];
  raw[threadIdx.x] = 1;
  if (threadIdx.x == 0) out[0] = unsigned(__cvta_generic_to_shared(raw));
}

}  // namespace

SmemFillKernel smem_fill_kernel() { return smem_fill; }
void launch_smem_fill(int* out, int n, std::size_t dynamic_bytes) { smem_fill<<<1, 256, dynamic_bytes>>>(out, n); }
SmemFillKernel smem_static_kernel() { return smem_static; }
SmemStartKernel smem_start_kernel() { return smem_start; }
void launch_smem_start(unsigned* out, std::size_t dynamic_bytes) { smem_start<<<2, 128, dynamic_bytes>>>(out); }

}  // namespace mm::test
